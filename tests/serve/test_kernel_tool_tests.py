"""Tests of a live kernel's tools on a real Jupyter server: a case saved over REST (the
sidebar's "Save as test") goes to the kernel and into the notebook's metadata; the kernel runs
it, and the server's rows show the kernel's status, also after a cell breaks the tool."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest
from live_kernels import JupyterServer, NotebookKernel, jupyter_server

pytestmark = pytest.mark.timeout(300)

ADD = '''from nexus_jupyter import tool

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a {op} b
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("jupyter")) as srv:
        yield srv


def _row(server: JupyterServer, name: str) -> dict[str, Any] | None:
    return next((r for r in server.tools("kernel:tested.ipynb") if r["name"] == name), None)


def _state(server: JupyterServer, name: str) -> str | None:
    row = _row(server, name) or {}
    return (row.get("tests") or {}).get("state")


@pytest.mark.timing  # a latency target: runs alone, after the parallel phase
def test_a_kernel_tools_cases_are_saved_and_run_in_the_kernel(server: JupyterServer) -> None:
    notebook = server.root / "tested.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    kernel = NotebookKernel(server, "tested.ipynb")
    try:
        kernel.run("%load_ext nexus_jupyter", "load")
        kernel.run(ADD.format(op="+"), "define")
        server.wait_for(lambda: _row(server, "add"), 30, "the kernel's add to be listed")

        status, body = server.request(
            "POST", "nexus/api/tools/add/tests", {"arguments": {"a": 1, "b": 2}, "expect": 3}
        )
        assert status == 201, body
        assert body["saved"] == "tested.ipynb (notebook metadata)"
        server.wait_for(lambda: _state(server, "add") == "passed", 20, "add's tests to pass")

        # Nobody answered the kernel's comm (no JupyterLab here): it wrote the file itself.
        def cases_in_file() -> list[dict[str, Any]]:
            metadata = nbformat.read(notebook, as_version=4).metadata
            return metadata.get("nexus_jupyter", {}).get("tests", [])

        server.wait_for(cases_in_file, 20, "the case in the notebook's metadata")
        assert cases_in_file() == [{"tool": "add", "arguments": {"a": 1, "b": 2}, "expect": 3}]
        status, listed = server.request("GET", "nexus/api/tools/add/tests")
        assert status == 200 and listed["cases"] == cases_in_file()

        kernel.run(ADD.format(op="-"), "define")
        ran = time.monotonic()
        server.wait_for(lambda: _state(server, "add") == "failed", 10, "add's tests to fail")
        failed_after = time.monotonic() - ran
        assert failed_after < 1.0, f"the row turned failed {failed_after:.2f} s after the cell"
        row = _row(server, "add")
        assert row is not None and "$: expected 3, got -1" in row["tests"]["summary"]
        assert "tested.ipynb metadata case 1" in (row["tests"]["broke"] or "")

        status, ran_again = server.request("POST", "nexus/api/tools/add/tests/run", {})
        assert status == 200, ran_again
        assert ran_again["tests"]["state"] == "failed"
        assert ran_again["report"]["counts"]["failed"] == 1

        kernel.run(ADD.format(op="+"), "define")
        server.wait_for(lambda: _state(server, "add") == "passed", 10, "the fix to pass")
        names = [t["name"] for t in server.tools()]
        assert "_nexus_tests" not in names  # the kernel's private tool is never listed
    finally:
        kernel.close()
