"""A notebook in a subfolder exports where its Jupyter server watches: a real server whose
root has no ``nex.yaml`` and no ``tools/dynamic`` yet (a fresh checkout, as ``make demo``
starts it), a real kernel for ``notebooks/demo.ipynb`` (running in ``notebooks/``)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from live_kernels import TOKEN, JupyterServer, NotebookKernel, jupyter_server

pytestmark = pytest.mark.timeout(300)

NOTEBOOK = "notebooks/demo.ipynb"
HELLO = '''from nexus_jupyter import tool

@tool
def hello(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"
'''
#: What the kernel reports back (its output is not read here): into a file beside it.
REPORT = """import json, os, pathlib
import nexus_jupyter
pathlib.Path("report.json").write_text(json.dumps({
    "cwd": os.getcwd(),
    "root": str(nexus_jupyter.registry().root),
    "path": str(result.path),
    "served": result.served,
    "markdown": result._repr_markdown_(),
}))
"""


@pytest.fixture(params=[False, True], ids=["fresh-root", "tools-folder-exists"])
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path, tools_folder=request.param) as srv:
        (srv.root / "notebooks").mkdir()
        nbformat.write(nbformat.v4.new_notebook(), srv.root / NOTEBOOK)
        yield srv


def _row(server: JupyterServer, name: str) -> dict[str, Any] | None:
    return next((r for r in server.tools() if r["name"] == name), None)


def _folder_status(server: JupyterServer) -> dict[str, Any]:
    status, body = server.request("GET", "nexus/api/status")
    assert status == 200, body
    source: dict[str, Any] = next(s for s in body["sources"] if s["kind"] == "directory")
    return dict(source["details"])


class _Events:
    """Every ``changed`` event of the server's events socket, gathered on a thread."""

    def __init__(self, server: JupyterServer) -> None:
        self.server = server
        self.changes: list[dict[str, Any]] = []
        self.ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._follow()), daemon=True)

    async def _follow(self) -> None:
        from tornado.websocket import websocket_connect

        url = self.server.url.replace("http", "ws", 1) + f"nexus/api/events?token={TOKEN}"
        ws = await websocket_connect(url)
        try:
            hello = json.loads(await asyncio.wait_for(ws.read_message(), 15))
            assert hello["type"] == "hello"
            self.ready.set()
            while not self._stop.is_set():
                try:
                    message = await asyncio.wait_for(ws.read_message(), 0.2)
                except TimeoutError:
                    continue
                if message is None:
                    return
                event = json.loads(message)
                if event["type"] == "changed":
                    self.changes.append(event)
        finally:
            ws.close()

    def __enter__(self) -> _Events:
        self._thread.start()
        assert self.ready.wait(30), "the events socket did not open"
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)


def test_an_export_from_a_subfolder_notebook_is_served_by_the_server(
    server: JupyterServer,
) -> None:
    kernel = NotebookKernel(server, NOTEBOOK)
    try:
        kernel.run("%load_ext nexus_jupyter", "load")
        kernel.run(HELLO, "define")
        row = server.wait_for(lambda: _row(server, "hello"), 30, "the kernel's hello")
        assert row["source"] == f"kernel:{NOTEBOOK}"

        # The sidebar's "Save as test" reaches the kernel's private tests tool.
        case = {"arguments": {"name": "Ada"}, "expect": "Hello, Ada!"}
        status, body = server.request("POST", "nexus/api/tools/hello/tests", case)
        assert status == 201, body

        with _Events(server) as events:
            kernel.run("result = %tool export hello", "export")
            row = server.wait_for(
                lambda: (r := _row(server, "hello")) and r["source_kind"] == "directory" and r,
                30,
                "hello to come from the server's tools folder",
            )
        kernel.run(REPORT, "report")
        report = json.loads((server.root / "notebooks" / "report.json").read_text())

        exported = server.root / "tools" / "dynamic" / "hello.py"
        assert Path(report["cwd"]) == server.root / "notebooks"  # the kernel's own folder
        assert Path(report["root"]) == server.root  # ... its workspace is the server's root
        assert Path(report["path"]) == exported and exported.is_file()
        assert not (server.root / "notebooks" / "tools").exists()
        assert "The Jupyter server watches this folder" in report["served"]
        assert f"Wrote `{exported}`" in report["markdown"]
        assert row["origin"].endswith("hello.py")
        assert _folder_status(server)["exists"] is True

        # Handed over, never gone: no event took hello out of the server's registry.
        print("EVENTS", json.dumps(events.changes))
        removed = [e for e in events.changes if "hello" in e.get("removed", [])]
        assert removed == [], events.changes

        status, body = server.call("hello", {"name": "Grace"})
        assert status == 200 and body["structured"] == "Hello, Grace!", body
    finally:
        kernel.close()
    log = server.log.read_text(errors="replace")
    assert "not listed by server" not in log  # the private tool is called without relisting
