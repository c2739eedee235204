"""One nexus aggregating another (a team's ``nexus-tools serve`` named in a user's nex.yaml):
a tool whose return value is not an object keeps a structured result that matches its
output schema at both hops (the real SDK client validates it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import mcp
from serving import serve_http  # tests/ is on sys.path (rootdir conftest)
from waiting import wait_until

from nexus_jupyter import Registry
from nexus_jupyter.serve.mcp_server import McpServerHandle
from nexus_jupyter.sources.mcp import McpSource

GREETING = '''from nexus_jupyter import tool


@tool
def greeting(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"


@tool
def scores() -> dict[str, int]:
    """Some scores."""
    return {"a": 1}
'''


async def test_a_str_tool_of_an_upstream_nexus_validates_at_the_client(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "greet.py").write_text(GREETING)
    with serve_http(tmp_path, "--root", str(tmp_path), "--dir", str(tmp_path / "tools")) as up:
        reg = Registry()
        reg.add_source(McpSource("team", url=up.url))
        handle = McpServerHandle.start(reg, port=0)
        try:
            await asyncio.to_thread(
                wait_until, reg, lambda: reg.find("mcp__team__greeting") is not None
            )
            for mode in ("legacy", "auto"):
                async with mcp.Client(handle.url, mode=mode) as client:  # type: ignore[arg-type]
                    said = await client.call_tool("mcp__team__greeting", {"name": "bob"})
                    assert said.structured_content == {"result": "hello bob"}
                    counted = await client.call_tool("mcp__team__scores", {})
                    assert counted.structured_content == {"a": 1}
        finally:
            handle.stop()
            reg.close()
