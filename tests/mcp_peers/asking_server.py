"""An MCP server (the SDK's MCPServer) whose tool asks its client a question after a pause,
for the tests of upstream questions relayed to the right nexus caller.

    python asking_server.py stdio
    python asking_server.py http PORT [--legacy]

``ask(tag, delay)`` logs "log for TAG", sleeps ``delay`` seconds, asks "question for TAG"
(elicitation of a ``name``) and returns ``TAG:<the name>``. ``--legacy`` makes it answer like
a server of revision 2025-11-25 only (it refuses the 2026-07-28 ``server/discover`` probe),
so it asks in mid-call requests on the call's own HTTP response stream.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel

server = MCPServer("asking")


class Name(BaseModel):
    name: str


async def _ask_name(tag: str, delay: float, ctx: Context) -> Elicit[Name]:
    await ctx.info(f"log for {tag}")
    await asyncio.sleep(delay)
    return Elicit(f"question for {tag}", Name)


@server.tool()
async def ask(tag: str, delay: float, who: Annotated[Name, Resolve(_ask_name)]) -> str:
    """Wait ``delay`` seconds, then ask the client for a name."""
    return f"{tag}:{who.name}"


def _refusing_discover(app: Any) -> Any:
    """The app, answering ``server/discover`` with "method not found" (a 2025-11-25 server)."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if b'"server/discover"' in body:
            request_id = json.loads(body).get("id")
            error = {"code": -32601, "message": "Method not found"}
            payload = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": payload})
            return None
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await app(scope, replay, send)

    return asgi


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        import uvicorn

        app = server.streamable_http_app()
        if "--legacy" in sys.argv:
            app = _refusing_discover(app)
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
