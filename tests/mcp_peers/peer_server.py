"""A small MCP server (the SDK's MCPServer) the tests run as a real stdio process.

Tools: ``echo``; ``say`` (text content only, no structured value, like most MCP servers); ``grow`` (adds a tool and announces tools/list_changed on both protocol
eras); ``slow`` (reports progress, then sleeps; writes a marker file when cancelled);
``crash`` (exits the process); ``hang_up`` (closes stdout and keeps running, reading nothing
more). Writes one line to stderr on start.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("peer")


@server.tool()
def echo(text: str) -> str:
    """Return the text."""
    return text


@server.tool(structured_output=False)
def say(text: str) -> str:
    """Return the text as plain content, with no structured value."""
    return text


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called ``name`` and announce the change."""

    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description=f"Added at runtime: {name}")
    await ctx.notify_tools_changed()  # 2026-07-28 clients: their subscriptions/listen stream
    await ctx.request_context.session.send_tool_list_changed()  # earlier clients
    return f"added {name}"


@server.tool()
async def slow(seconds: float, ctx: Context, marker: str = "") -> str:
    """Report progress 1/2 and 2/2, then sleep ``seconds``."""
    await ctx.report_progress(1, 2, "started")
    await ctx.report_progress(2, 2, "sleeping")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        if marker:
            Path(marker).write_text("cancelled")  # noqa: ASYNC240 - a tiny test marker
        raise
    return "done"


@server.tool()
def crash() -> str:
    """Exit the server process."""
    sys.stderr.write("peer: crashing on request\n")
    sys.stderr.flush()
    os._exit(7)  # a hard exit, like a crash: no reply is sent


#: The pipe our stdout was when we started (the SDK serves it from a private copy of fd 1).
STDOUT_PIPE = os.fstat(1)[1:3]  # (st_ino, st_dev)


@server.tool()
def hang_up() -> str:
    """Close stdout (every descriptor of it) and keep running: no answer can come any more,
    and nothing is read."""
    sys.stderr.write("peer: closing stdout\n")
    sys.stderr.flush()
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.fstat(int(name))[1:3] == STDOUT_PIPE:
                os.close(int(name))
        except OSError:
            pass  # the listing's own descriptor, gone already
    time.sleep(600)  # blocks this server: it never sees its stdin close either
    return "unreachable"


if __name__ == "__main__":
    sys.stderr.write("peer: started\n")
    sys.stderr.flush()
    server.run("stdio")
