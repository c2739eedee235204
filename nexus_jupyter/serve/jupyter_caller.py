"""Who a REST call of the JupyterLab sidebar comes from, as the policy sees it.

A Jupyter user is remote (a browser) and capped by nex.yaml's ``grant: {rest: ...}``. One who
may also write the server's files (Jupyter's ``contents`` resource: the usual single-user
server, where that user started it) can edit its ``nex.yaml`` anyway, so a refusal tells them
the line that allows the call (:data:`REST_OWNER_CALLER`); a user without that right is told
only that the person running the server decides, as an agent over MCP is.
"""

from __future__ import annotations

from typing import Any

from jupyter_core.utils import ensure_async

from ..core.tools.context import REST_CALLER, REST_OWNER_CALLER, RequestInfo

__all__ = ["sidebar_request"]


async def sidebar_request(handler: Any) -> RequestInfo:
    """The :class:`RequestInfo` of ``handler``'s authenticated Jupyter user (an authorizer
    may answer with a coroutine, as jupyter_server allows: it is awaited)."""
    user = handler.current_user
    try:
        answer = handler.authorizer.is_authorized(handler, user, "write", "contents")
        owner = bool(await ensure_async(answer))
    except Exception:  # an authorizer that cannot tell: the safer reading
        owner = False
    caller = REST_OWNER_CALLER if owner else REST_CALLER
    return RequestInfo(principal=getattr(user, "username", None), caller=caller)
