"""Finding: with a call in flight, SIGTERM did not stop ``nexus-tools serve``.

A real ``serve`` process with sync and async calls that never end in flight (and a client
still connected) gets SIGTERM: it must exit within 5 s and free its port.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
from serving import mcp_client, serve_http

pytestmark = pytest.mark.e2e

HANGERS = '''import asyncio
import time

from nexus_jupyter import tool


@tool
def sync_hang() -> str:
    """Never returns (ignores cancel)."""
    time.sleep(3600)
    return "woke"


@tool
async def async_hang() -> str:
    """Never returns."""
    await asyncio.sleep(3600)
    return "woke"
'''
STOP_S = 5.0


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def test_sigterm_stops_serve_with_calls_in_flight(tmp_path: Path) -> None:
    folder = tmp_path / "tools" / "dynamic"
    folder.mkdir(parents=True)
    (folder / "hangers.py").write_text(HANGERS)
    with serve_http(tmp_path) as server:
        port = urlparse(server.url).port
        assert port is not None
        async with mcp_client(server.url) as client:
            calls = [
                asyncio.ensure_future(client.call_tool(name, {}))
                for name in ("sync_hang", "sync_hang", "async_hang", "async_hang")
            ]
            await asyncio.sleep(0.5)
            assert not any(call.done() for call in calls)
            started = time.monotonic()
            server.proc.send_signal(signal.SIGTERM)
            code = await asyncio.to_thread(server.proc.wait, STOP_S * 2)
            took = time.monotonic() - started
            for call in calls:
                call.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
    print(f"\nSIGTERM with 4 calls in flight: exited in {took:.2f} s with code {code}")
    assert took < STOP_S
    assert port_is_free(port)


async def test_sigterm_stops_serve_while_a_tool_file_import_spins(tmp_path: Path) -> None:
    folder = tmp_path / "tools" / "dynamic"
    folder.mkdir(parents=True)
    with serve_http(tmp_path) as server:
        port = urlparse(server.url).port
        assert port is not None
        async with mcp_client(server.url) as client:
            (folder / "spin.py").write_text("while True:\n    pass\n")
            await asyncio.sleep(1.0)  # the watcher is now importing it
            assert (await client.list_tools()).tools  # still answering meanwhile
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(server.proc.wait, STOP_S * 3)
        took = time.monotonic() - started
    print(f"\nSIGTERM while an import spins: exited in {took:.2f} s with code {code}")
    assert took < STOP_S
    assert port_is_free(port)
