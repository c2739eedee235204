"""Who a REST call of the JupyterLab sidebar comes from, as the policy sees it.

A Jupyter user is remote (a browser) and capped by nex.yaml's ``grant: {rest: ...}``. One who
may also write the server's files (Jupyter's ``contents`` resource: the usual single-user
server, where that user started it) can edit its ``nex.yaml`` anyway, so a refusal of the
sidebar's call tells them the line that allows it (:data:`REST_OWNER_CALLER`). The sidebar
names itself with the ``X-Nexus-Face: sidebar`` header. A plain REST client (a script or an
agent holding the token) and a user without that right are told only that the person
running the server decides, as an agent over MCP is: no grant hint reaches a program.
"""

from __future__ import annotations

from typing import Any

from jupyter_core.utils import ensure_async

from ..core.tools.context import REST_CALLER, REST_OWNER_CALLER, RequestInfo

__all__ = ["FACE_HEADER", "sidebar_request"]

#: The header the JupyterLab sidebar sends with each request (``labextension/src/api.ts``).
FACE_HEADER = "X-Nexus-Face"


async def sidebar_request(handler: Any) -> RequestInfo:
    """The :class:`RequestInfo` of ``handler``'s authenticated Jupyter user (an authorizer
    may answer with a coroutine, as jupyter_server allows: it is awaited)."""
    user = handler.current_user
    if handler.request.headers.get(FACE_HEADER, "").lower() != "sidebar":
        return RequestInfo(principal=getattr(user, "username", None), caller=REST_CALLER)
    try:
        answer = handler.authorizer.is_authorized(handler, user, "write", "contents")
        owner = bool(await ensure_async(answer))
    except Exception:  # an authorizer that cannot tell: the safer reading
        owner = False
    caller = REST_OWNER_CALLER if owner else REST_CALLER
    return RequestInfo(principal=getattr(user, "username", None), caller=caller)
