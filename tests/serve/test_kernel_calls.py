"""The calls a notebook makes of its own tools in its kernel (``%tool call``, Python) reach
the Jupyter server: its kernel reports them in its tool listing, the tool's details carry
them as ``notebook_stats`` (apart from the calls made through the server, in ``stats``), and
the events socket names the tool in a ``calls`` message, so an open sidebar follows. A real
Jupyter server process, a real kernel started through its REST API, a real WebSocket."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from live_kernels import TOKEN, JupyterServer, NotebookKernel, jupyter_server

pytestmark = pytest.mark.timeout(300)

LOAD = "%load_ext nexus_jupyter"
MULTIPLY = '''from nexus_jupyter import tool

@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("jupyter")) as srv:
        yield srv


def _details(server: JupyterServer, name: str) -> dict[str, Any]:
    status, body = server.request("GET", f"nexus/api/tools/{name}")
    assert status == 200, body
    return dict(body)


def _calls(figures: dict[str, Any] | None) -> int:
    return int(figures["calls"]) if figures else 0


async def _next_calls(
    ws: Any, tool: str, others: list[dict[str, Any]], deadline: float = 15.0
) -> list[str]:
    """The ``tools`` of the next ``calls`` message naming ``tool`` (the messages before it
    go to ``others``)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while True:
        remaining = end - loop.time()
        assert remaining > 0, f"no calls message naming {tool} within {deadline} s"
        message = await asyncio.wait_for(ws.read_message(), remaining)
        assert message is not None, "the events socket closed"
        event = json.loads(message)
        if event["type"] == "calls" and tool in event["tools"]:
            return list(event["tools"])
        others.append(event)


def test_a_notebooks_own_calls_reach_the_server_apart_from_its_calls(
    server: JupyterServer,
) -> None:
    from tornado.websocket import websocket_connect

    kernel = NotebookKernel(server, "calls.ipynb")
    try:
        kernel.run(LOAD, "load")
        kernel.run(MULTIPLY, "define")
        row = server.wait_for(
            lambda: next((r for r in server.tools("kernel:calls.ipynb")), None),
            what="multiply to be listed",
        )
        assert row["name"] == "multiply"
        details = _details(server, "multiply")
        assert details["stats"] is None and details["notebook_stats"] is None

        async def follow() -> None:
            url = server.url.replace("http", "ws", 1) + f"nexus/api/events?token={TOKEN}"
            ws = await websocket_connect(url)
            try:
                hello = json.loads(await asyncio.wait_for(ws.read_message(), 15))
                assert hello["type"] == "hello"
                # a call the notebook makes in its kernel: the open sidebar hears of it
                await asyncio.to_thread(kernel.run, "%tool call multiply a=2 b=3;", "call")
                others: list[dict[str, Any]] = []
                assert "multiply" in await _next_calls(ws, "multiply", others)
                # ... and of one made from Python in the kernel
                code = "import nexus_jupyter\nnexus_jupyter.registry().call_sync('multiply', {'a': 1, 'b': 1})"
                await asyncio.to_thread(kernel.run, code, "python")
                await _next_calls(ws, "multiply", others)
                # counts travel in the listing, but the tools did not change: no reload
                assert [e for e in others if e["type"] == "changed"] == []
            finally:
                ws.close()

        asyncio.run(follow())
        details = server.wait_for(
            lambda: (d := _details(server, "multiply")) and _calls(d["notebook_stats"]) == 2 and d,
            what="the notebook's two calls in the details",
        )
        figures = details["notebook_stats"]
        assert (figures["errors"], figures["refused"], figures["tool"]) == (0, 0, "multiply")
        assert figures["p50_ms"] is not None
        assert details["stats"] is None  # none of them went through the server

        # a call through the server (the sidebar's Try) counts there, not as the notebook's
        status, body = server.call("multiply", {"a": 4, "b": 5})
        assert status == 200 and body["structured"] == 20, body
        details = _details(server, "multiply")
        assert _calls(details["stats"]) == 1
        assert _calls(details["notebook_stats"]) == 2
    finally:
        kernel.close()


def test_the_server_s_own_tools_carry_no_notebook_line(server: JupyterServer) -> None:
    status, body = server.request("GET", "nexus/api/tools?limit=1")
    assert status == 200, body
    name = body["tools"][0]["name"]
    assert "notebook_stats" not in _details(server, name)
