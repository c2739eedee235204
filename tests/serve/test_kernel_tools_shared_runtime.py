"""Two Jupyter servers of one user share the runtime dir (the default): each lists the tools
of the kernels it runs, never those of the other server's kernels, whose announcements sit
in the same folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from live_kernels import JupyterServer, NotebookKernel, jupyter_server

pytestmark = pytest.mark.timeout(300)

TOOL = '''%load_ext nexus_jupyter
from nexus_jupyter import tool

@tool
def {name}() -> str:
    """Which server runs this kernel."""
    return "{name}"
'''


def _kernel_sources(server: JupyterServer) -> list[str]:
    status, body = server.request("GET", "nexus/api/status")
    assert status == 200, body
    return sorted(s["name"] for s in body["sources"] if s["name"].startswith("kernel:"))


def _names(server: JupyterServer) -> set[str]:
    return {row["name"] for row in server.tools()}


def test_each_server_lists_only_the_kernels_it_runs(tmp_path: Path) -> None:
    shared = tmp_path / "runtime"
    with (
        jupyter_server(tmp_path / "a", runtime=shared) as first,
        jupyter_server(tmp_path / "b", runtime=shared) as second,
    ):
        a = NotebookKernel(first, "a.ipynb")
        try:
            a.run(TOOL.format(name="on_a"), "define")
            first.wait_for(lambda: "on_a" in _names(first), what="on_a in the first server")
            b = NotebookKernel(second, "b.ipynb")
            try:
                b.run(TOOL.format(name="on_b"), "define")
                # the second server lists its own kernel's tool after the first kernel's
                # announcement was already in the shared folder
                second.wait_for(lambda: "on_b" in _names(second), what="on_b in the second")
                assert len(list(shared.glob("nexus-kernel-*.json"))) == 2
                assert "on_a" not in _names(second)
                assert _kernel_sources(second) == ["kernel:b.ipynb"]
                assert "on_b" not in _names(first)
                assert _kernel_sources(first) == ["kernel:a.ipynb"]
                status, body = second.call("on_a", {})
                assert status == 404, body
            finally:
                b.close()
            # the other server's kernel is left alone: its announcement stays, it still works
            assert first.call("on_a", {})[1]["structured"] == "on_a"
        finally:
            a.close()
