"""Approval of a live kernel's tools called from the JupyterLab sidebar (REST), with a real
Jupyter server and kernel: the kernel's session decides when its tools ask
(``%tool mode prompt``), and a server whose nex.yaml grants the sidebar
``danger_full_access`` asks before a dangerous tool instead of refusing it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from live_kernels import APPROVAL_TOOLS, JupyterServer, NotebookKernel, jupyter_server

pytestmark = pytest.mark.timeout(300)

TOOLS = "%load_ext nexus_jupyter\n" + APPROVAL_TOOLS


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    granted = "grant: {rest: danger_full_access}\n"
    with jupyter_server(tmp_path_factory.mktemp("jupyter"), nex_yaml=granted) as srv:
        yield srv


@pytest.fixture(scope="module")
def kernel(server: JupyterServer) -> Iterator[NotebookKernel]:
    kernel = NotebookKernel(server, "approve.ipynb")
    kernel.run(TOOLS, "define")
    server.wait_for(lambda: _policy(server, "purge_cache"), what="the kernel's tools")
    try:
        yield kernel
    finally:
        kernel.close()


def _policy(server: JupyterServer, name: str) -> dict[str, Any] | None:
    status, body = server.request("GET", f"nexus/api/tools/{name}")
    return body["call_policy"] if status == 200 else None


def _call(server: JupyterServer, name: str, approved: Any = False) -> tuple[int, Any]:
    body = {"arguments": {"text": "hi"} if name == "save_note" else {}, "approved": approved}
    return server.request("POST", f"nexus/api/tools/{name}/call", body)


def test_a_granted_dangerous_kernel_tool_asks_then_runs(
    server: JupyterServer, kernel: NotebookKernel
) -> None:
    assert _policy(server, "purge_cache")["action"] == "ask"
    status, body = _call(server, "purge_cache")
    assert status == 409 and body["error"] == "approval_required", body
    status, body = _call(server, "purge_cache", approved=True)
    assert status == 200 and body["structured"] == "purged cache", body


def test_mode_prompt_in_the_notebook_makes_the_sidebar_ask(
    server: JupyterServer, kernel: NotebookKernel
) -> None:
    assert _policy(server, "save_note")["action"] == "allow"
    assert _call(server, "save_note")[0] == 200
    kernel.run("%tool mode prompt", "mode")
    server.wait_for(
        lambda: _policy(server, "save_note")["action"] == "ask", 10, "the sidebar to ask"
    )
    # why it asks is the notebook's mode, not a flag of the tool's own
    assert _policy(server, "save_note")["reason"].endswith(
        "needs approval: its notebook asks first (mode: prompt says ask)."
    )
    status, body = _call(server, "save_note")
    assert status == 409 and body["error"] == "approval_required", body
    status, body = _call(server, "save_note", approved=True)
    assert status == 200 and body["structured"] == "saved hi", body
    kernel.run("%tool mode default", "mode")
    server.wait_for(
        lambda: _policy(server, "save_note")["action"] == "allow", 10, "the sidebar to run"
    )
    assert _call(server, "save_note")[0] == 200
