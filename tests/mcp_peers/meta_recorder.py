"""A small MCP server (the SDK's MCPServer, run as a real stdio process) that answers with
the ``_meta`` its request carried: what an upstream server receives from nexus, trace
context (``traceparent``, ``tracestate``) included."""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("recorder")


def _plain(meta: Any) -> dict[str, Any]:
    if meta is None:
        return {}
    if hasattr(meta, "model_dump"):
        return dict(meta.model_dump(by_alias=True, exclude_none=True))
    return dict(meta)


@server.tool()
def received_meta(ctx: Context) -> dict[str, Any]:
    """The `_meta` of this very request, as this server received it."""
    return _plain(ctx.request_context.meta)


if __name__ == "__main__":
    sys.stderr.write("recorder: started\n")
    sys.stderr.flush()
    server.run("stdio")
