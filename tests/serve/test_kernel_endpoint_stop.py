"""A kernel's MCP endpoint stops quietly: a request still open when it stops (the Jupyter
server's listen stream, a tool call that is running) ends without uvicorn's "Exception in
ASGI application" traceback, which a kernel prints into the notebook's cell. A real
endpoint, real HTTP clients, and a real Jupyter server restarting a real kernel."""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_kernels import NotebookKernel, jupyter_server

from nexus_jupyter import Registry, tool
from nexus_jupyter.serve.kernel_endpoint import KernelEndpoint

pytestmark = pytest.mark.timeout(180)

ASGI_ERROR = "Exception in ASGI application"
VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


NAPPING = threading.Event()


@tool
async def nap(seconds: float = 60.0) -> str:
    """Sleep, then answer."""
    NAPPING.set()
    await asyncio.sleep(seconds)
    return "rested"


class OpenRequest:
    """One MCP request to ``url`` on a thread of its own, its response read as it comes."""

    def __init__(self, url: str, method: str, params: dict[str, Any], name: str = "") -> None:
        body = {"jsonrpc": "2.0", "id": f"{method}-1", "method": method, "params": params}
        headers = {
            "Authorization": "Bearer s3cret",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION,
            "Mcp-Method": method,
            **({"Mcp-Name": name} if name else {}),
        }
        self.status: int | None = None
        self.text = ""
        self.error: BaseException | None = None
        self.opened = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(url, body, headers), daemon=True)
        self._thread.start()

    def _run(self, url: str, body: dict[str, Any], headers: dict[str, str]) -> None:
        try:
            with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as response:
                self.status = response.status_code
                self.opened.set()
                for chunk in response.iter_text():
                    self.text += chunk
        except BaseException as exc:  # the test reads it
            self.error = exc
        finally:
            self.opened.set()

    def join(self, timeout: float = 20.0) -> None:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the request did not end after the endpoint stopped"


@pytest.fixture  # after capfd in a test's arguments: uvicorn's log handler writes to it
def endpoint() -> Iterator[tuple[Registry, KernelEndpoint]]:
    registry = Registry(search="keyword")
    registry.add(nap)
    served = KernelEndpoint(registry, "s3cret")
    yield registry, served
    served.stop()
    registry.close()


def test_a_listen_stream_gets_its_final_answer_before_the_loop_stops(
    capfd: pytest.CaptureFixture[str], endpoint: tuple[Registry, KernelEndpoint]
) -> None:
    """As a kernel link stops: the endpoint, then the registry (and its loop). The listen
    stream the Jupyter server keeps open is closed by the endpoint, and answered, before the
    loop's stop could cancel it mid-request."""
    registry, served = endpoint
    notifications = {"toolsListChanged": True, "_meta": {}}
    listen = OpenRequest(
        served.url, "subscriptions/listen", {"notifications": notifications, "_meta": META}
    )
    assert listen.opened.wait(20) and listen.status == 200, listen.error
    deadline = time.monotonic() + 20
    while "acknowledged" not in listen.text:  # the stream is served, not just accepted
        assert time.monotonic() < deadline, listen.text
        time.sleep(0.05)  # a thread's reads, bounded by the deadline

    served.stop(timeout=10)
    registry.close()
    listen.join()

    results = [
        json.loads(line[len("data:") :])
        for line in listen.text.splitlines()
        if line.startswith("data:") and '"result"' in line
    ]
    assert [r["id"] for r in results] == ["subscriptions/listen-1"], listen.text
    assert ASGI_ERROR not in capfd.readouterr().err


def test_a_tool_call_in_flight_ends_quietly_when_the_endpoint_stops(
    capfd: pytest.CaptureFixture[str], endpoint: tuple[Registry, KernelEndpoint]
) -> None:
    registry, served = endpoint
    NAPPING.clear()
    params = {"name": "nap", "arguments": {}, "_meta": META}
    call = OpenRequest(served.url, "tools/call", params, name="nap")
    assert NAPPING.wait(20), (
        call.status,
        call.text,
        call.error,
    )  # the call runs in the endpoint (for a minute)

    served.stop(timeout=1)  # shorter than the call: stopping has to cut it short
    registry.close()
    call.join()

    assert ASGI_ERROR not in capfd.readouterr().err
    assert call.status == 503 and "shutting down" in call.text, (call.status, call.text)


LOAD = "%load_ext nexus_jupyter\nlimit = 7"
GET_LIMIT = '''from nexus_jupyter import tool

@tool
def get_limit() -> int:
    """The notebook's current limit."""
    return limit
'''


def test_a_restart_prints_nothing_into_the_notebook(tmp_path: Path) -> None:
    """The Jupyter server is linked to the kernel (a listen stream open, a tool called) when
    the kernel restarts through the REST API: nothing the stopping endpoint says reaches the
    notebook's output."""
    with jupyter_server(tmp_path) as server:
        kernel = NotebookKernel(server, "quiet.ipynb")
        try:
            kernel.run(LOAD, "load")
            kernel.run(GET_LIMIT, "tool")
            server.wait_for(
                lambda: any(r["name"] == "get_limit" for r in server.tools("kernel:quiet.ipynb")),
                what="get_limit from the kernel",
            )
            status, body = server.call("get_limit", {})
            assert status == 200 and body["structured"] == 7, body
            _drain(kernel)

            # not kernel.restart(): waiting for the restarted kernel drains what it printed
            restart = f"api/kernels/{kernel.kernel_id}/restart"
            status, body = server.request("POST", restart, {})
            assert status == 200, body
            printed = _streamed(kernel, seconds=5)
        finally:
            kernel.close()
    assert ASGI_ERROR not in printed and "Traceback" not in printed, printed


def _drain(kernel: NotebookKernel) -> None:
    while True:
        try:
            kernel.client.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            return


def _streamed(kernel: NotebookKernel, seconds: float) -> str:
    """What the kernel printed (its stream messages) within ``seconds``."""
    text = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            message = kernel.client.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        if message["msg_type"] == "stream":
            text.append(message["content"]["text"])
    return "".join(text)
