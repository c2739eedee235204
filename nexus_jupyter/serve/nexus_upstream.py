"""Another nexus registry as an MCP source: a live kernel (for the Jupyter server) or a
Jupyter server's ``/nexus/mcp`` (for ``nexus-tools serve --jupyter``).

Such a server speaks our own MCP dialect: it names where each tool was defined
(``_meta["nexus-jupyter/origin"]``, e.g. ``cell:<id>``) and the permission its policy runs the
tool at (``_meta["nexus-jupyter/permission"]``, which this registry applies too), and wraps a tool's non-object return
type as ``{"result": ...}``. This source keeps the origin and unwraps, so the tool here has
its own type and is wrapped once when this registry serves MCP in turn.
"""

from __future__ import annotations

import logging
from typing import Any

from ..core.tools.context import ToolContext
from ..core.tools.result import ToolResult
from ..core.tools.spec import PERMISSIONS
from ..core.tools.tool import Tool
from ..sources.mcp import McpSource
from .mcp_bridge import WRAP_MARK, read_meta

__all__ = ["JupyterServerSource", "NexusUpstream"]

log = logging.getLogger(__name__)


class NexusUpstream(McpSource):
    """:class:`McpSource` for a server that is itself a nexus registry."""

    def __init__(self, name: str, **options: Any) -> None:
        super().__init__(name, **options)
        self._wrapped: set[str] = set()  # tools whose results the upstream wraps

    def _tool(self, remote: Any) -> Tool:
        tool = super()._tool(remote)
        changes: dict[str, Any] = {}
        origin = read_meta(remote.meta, "origin")
        if isinstance(origin, str) and origin:
            changes["origin"] = origin
        permission = read_meta(remote.meta, "permission")
        if permission in PERMISSIONS:
            # the upstream's policy level, not MCP's unannotated default (ask for every call):
            # a kernel's tool runs here as it runs in its notebook; the upstream claims
            # readOnlyHint only for a permission its author declared, so that says which
            changes["permission"] = permission
            changes["permission_declared"] = "readOnlyHint" in tool.spec.annotations
            changes["approval"] = None
            changes["needs_approval"] = read_meta(remote.meta, "needs_approval") is True
            why = read_meta(remote.meta, "approval_why")
            changes["approval_why"] = (
                why if isinstance(why, str) and changes["needs_approval"] else ""
            )
        schema = tool.spec.output_schema
        if schema and schema.get(WRAP_MARK):
            changes["output_schema"] = schema["properties"]["result"]
            self._wrapped.add(remote.name)
        else:
            self._wrapped.discard(remote.name)
        return tool.with_spec(**changes) if changes else tool

    async def _call(
        self, remote_name: str, arguments: dict[str, Any], ctx: ToolContext | None
    ) -> ToolResult:
        result = await super()._call(remote_name, arguments, ctx)
        structured = result.structured
        if remote_name in self._wrapped and isinstance(structured, dict) and "result" in structured:
            return ToolResult.from_parts(
                result.tool, content=list(result.content), structured=structured["result"]
            )
        return result

    @property
    def status(self) -> dict[str, Any]:
        details = dict(super().status)
        details["target"] = self.url  # never a header (they hold the secret or token)
        return details


class JupyterServerSource(NexusUpstream):
    """The registry of a running Jupyter server (its ``/nexus/mcp``, with the server's
    token): its tools under their own names, kernel tools included, live."""

    def __init__(self, url: str, token: str, *, token_from: str = "--token") -> None:
        base = url.split("?", 1)[0].rstrip("/")
        if base.endswith("/nexus/mcp"):
            base = base[: -len("/nexus/mcp")]
        super().__init__(
            "jupyter", url=f"{base}/nexus/mcp", headers={"Authorization": f"token {token}"}
        )
        self.name = f"jupyter:{base}"
        self.namespace = ""
        self.token_from = token_from  # where the person gave the token: --token, $JUPYTER_TOKEN

    async def _note_refusal(self, response: Any) -> None:
        """A 401/403 of the Jupyter server: its token is wrong, and the fix is the token given
        to ``serve`` (not nex.yaml's auth, as for an MCP server), with the server's own
        words when it has some."""
        if response.status_code not in (401, 403) or response.request.url.path.startswith(
            "/.well-known"
        ):
            return
        said = await _server_message(response)
        self._refused = (
            f"HTTP {response.status_code}: the Jupyter server refused the token given with "
            f"{self.token_from}"
            + (f" (it says: {said.rstrip('.')})" if said else "")
            + ". Pass this server's token with --token T (or JUPYTER_TOKEN): `jupyter server "
            "list` shows each running server's URL with its token (?token=...)"
        )


async def _server_message(response: Any) -> str:
    """The ``message`` of a Jupyter error answer (JSON), else its short plain text; ``""``
    when there is none (an HTML page, a read that fails)."""
    import json

    try:
        text = (await response.aread()).decode("utf-8", "replace").strip()
    except Exception as exc:  # the status line says enough without the server's words
        log.debug("could not read the Jupyter server's refusal: %s", exc)
        return ""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict):
        message = data.get("message") or data.get("reason")
        return " ".join(str(message).split()) if message else ""
    if text.startswith("<") or len(text) > 300:
        return ""
    return " ".join(text.split())
