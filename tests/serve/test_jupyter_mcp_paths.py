"""``/nexus/mcp`` shows the Jupyter server's paths as ``serve`` over HTTP does: relative to the
server's root, never the machine's absolute folders (an agent of a hub is remote)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from live_kernels import TOKEN, JupyterServer, jupyter_server

pytestmark = pytest.mark.timeout(300)

NOISY = '''from nexus_jupyter import tool


@tool
def noisy(n: int) -> int:
    """Divide ten by n."""
    return 10 // n
'''


async def _list_and_fail(server: JupyterServer) -> tuple[dict[str, object], str]:
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"token {TOKEN}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(server.url + "nexus/mcp", http_client=http)
        async with mcp.Client(transport, mode="legacy") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            result = await client.call_tool("noisy", {"n": 0})
            assert result.is_error
            text = "\n".join(getattr(b, "text", "") for b in result.content)
            return dict(listed["noisy"].meta or {}), text


def test_nexus_mcp_shows_paths_relative_to_the_server_root(tmp_path: Path) -> None:
    with jupyter_server(tmp_path) as server:
        folder = server.root / "tools" / "dynamic"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "noisy.py").write_text(NOISY)
        server.wait_for(lambda: any(r["name"] == "noisy" for r in server.tools()), what="noisy")
        meta, text = asyncio.run(_list_and_fail(server))
    assert meta["nexus-jupyter/origin"] == "tools/dynamic/noisy.py"
    assert 'File "tools/dynamic/noisy.py"' in text, text
    root = str(server.root.resolve())
    assert root not in text and str(server.root) not in text, text
