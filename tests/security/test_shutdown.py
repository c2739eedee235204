"""Finding: with a call in flight, SIGTERM stopped neither ``nexus-tools serve`` nor the
Jupyter server.

A real ``serve`` process and a real Jupyter server with sync and async calls that never end
in flight get SIGTERM: each must exit within 5 s and free its port.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest
from live_kernels import jupyter_server_command
from serving import mcp_client, serve_http

pytestmark = [pytest.mark.e2e, pytest.mark.timing]  # SIGTERM stops within 5 s: runs alone

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


def test_sigterm_stops_a_jupyter_server_with_calls_in_flight(tmp_path: Path) -> None:
    folder = tmp_path / "root" / "tools" / "dynamic"
    folder.mkdir(parents=True)
    (folder / "hangers.py").write_text(HANGERS)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "NEXUS_HOME": str(tmp_path / "home"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    base, token = f"http://127.0.0.1:{port}/", "sigterm-test"
    with open(tmp_path / "jupyter.log", "w") as log:
        proc = subprocess.Popen(
            jupyter_server_command(port, token, tmp_path / "root"),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}api/status?token={token}", timeout=1)
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.25)  # polling a starting process, not waiting for a watcher

        def call(name: str) -> None:
            request = urllib.request.Request(
                f"{base}nexus/api/tools/{name}/call?token={token}",
                data=json.dumps({"arguments": {}}).encode(),
                method="POST",
                headers={"Content-Type": "application/json"},
            )
            try:
                urllib.request.urlopen(request, timeout=30)
            except OSError:
                pass  # the server went away under the call: expected

        for name in ("sync_hang", "sync_hang", "async_hang", "async_hang"):
            threading.Thread(target=call, args=(name,), daemon=True).start()
        time.sleep(1.5)  # the calls are running
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(STOP_S * 3)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print(f"\nJupyter server, SIGTERM with 4 calls in flight: exited in {took:.2f} s, code {code}")
    assert took < STOP_S
    assert port_is_free(port)
