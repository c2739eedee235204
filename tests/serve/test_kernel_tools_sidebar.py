"""A live kernel's tools as the sidebar's REST answers show them: a kernel tool's own validator
refuses like the server's own check (422, the field named, counted as refused); two notebooks
defining one name are a conflict on both rows, each opened and tried by its source; a tool
that left with its restarted kernel says so; a file a kernel exported is that notebook's
only while the kernel lives. A real Jupyter server process, real kernels through its REST API.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from live_kernels import ADD_CELL as ADD
from live_kernels import HALF_CELL as HALF
from live_kernels import JupyterServer, NotebookKernel, jupyter_server

pytestmark = pytest.mark.timeout(300)

LOAD = "%load_ext nexus_jupyter"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("jupyter")) as srv:
        yield srv


def _rows(server: JupyterServer, name: str) -> list[dict[str, Any]]:
    return [r for r in server.tools() if r["name"] == name]


def test_a_kernel_tools_own_validator_refuses_as_the_servers_check_does(
    server: JupyterServer,
) -> None:
    kernel = NotebookKernel(server, "half.ipynb")
    try:
        kernel.run(LOAD, "load")
        kernel.run(HALF, "define")
        server.wait_for(lambda: _rows(server, "half"), what="half to be listed")
        status, body = server.call("half", {"n": 3})
        assert status == 422, body
        assert body["error"] == "validation"
        assert [(e["path"], e["message"]) for e in body["errors"]] == [("$.n", "must be even")]
        assert body["errors"][0]["value"] == 3
        status, body = server.call("half", {"n": 4})
        assert status == 200 and body["structured"] == 2, body
        status, details = server.request("GET", "nexus/api/tools/half")
        assert status == 200, details
        stats = details["stats"]
        assert (stats["calls"], stats["errors"], stats["refused"]) == (1, 0, 1)
    finally:
        kernel.close()


def test_two_notebooks_one_name_a_conflict_each_opened_and_tried_by_its_source(
    server: JupyterServer,
) -> None:
    first = NotebookKernel(server, "first.ipynb")
    second = NotebookKernel(server, "second.ipynb")
    try:
        first.run(LOAD, "load")
        first.run(ADD.format(doc="Add two integers.", times=1), "define")
        server.wait_for(lambda: _rows(server, "add"), what="first's add")
        second.run(LOAD, "load")
        second.run(ADD.format(doc="Add, the second way (times ten).", times=10), "define")
        rows = server.wait_for(
            lambda: len(r := _rows(server, "add")) == 2 and r, what="both adds listed"
        )
        by_source = {r["source"]: r for r in rows}
        assert set(by_source) == {"kernel:first.ipynb", "kernel:second.ipynb"}
        for source, row in by_source.items():
            other = next(s for s in by_source if s != source)
            # one rule on both rows: a conflict, not one "shadowing" the other
            assert row["status"] == "error" and row["reason"].startswith("conflict:"), row
            assert row["conflicts_with"] == [other]
            assert row["shadowed_by"] is None and row["shadowed"] == []
        # each row opens its own tool ...
        for source, doc in (
            ("kernel:first.ipynb", "Add two integers."),
            ("kernel:second.ipynb", "Add, the second way (times ten)."),
        ):
            status, details = server.request("GET", f"nexus/api/tools/add?source={quote(source)}")
            assert status == 200, details
            assert (details["source"], details["description"]) == (source, doc)
            assert details["status"] == "error" and details["conflicts_with"] != []
        # ... and Try calls that source's tool, as %tool call add does in each kernel
        tries = (
            ("kernel:first.ipynb", 3),
            ("kernel:second.ipynb", 30),
            ("kernel:second.ipynb", 30),
        )
        for source, expected in tries:
            body = {"arguments": {"a": 1, "b": 2}, "source": source}
            status, result = server.request("POST", "nexus/api/tools/add/call", body)
            assert status == 200 and result["structured"] == expected, result
        # by name alone the call is ambiguous: refused, with the conflict as the reason
        status, result = server.call("add", {"a": 1})
        assert status == 503 and "conflict" in result["message"], result
        # each row's calls line counts the calls of its own tool, not of the name
        for source, calls in (("kernel:first.ipynb", 1), ("kernel:second.ipynb", 2)):
            status, details = server.request("GET", f"nexus/api/tools/add?source={quote(source)}")
            assert (details["stats"]["calls"], details["stats"]["refused"]) == (calls, 0), details
        status, stats = server.request("GET", "nexus/api/stats")
        assert (stats["tools"]["add"]["calls"], stats["tools"]["add"]["refused"]) == (3, 1), stats
        status, result = server.request(
            "GET", f"nexus/api/tools/add?source={quote('kernel:third.ipynb')}"
        )
        assert status == 404 and "kernel:third.ipynb does not define it" in result["message"]
    finally:
        first.close()
        second.close()


def test_a_tool_that_left_with_its_restarted_kernel_says_what_happened(
    server: JupyterServer,
) -> None:
    kernel = NotebookKernel(server, "work/restart.ipynb")
    try:
        kernel.run(LOAD, "load")
        kernel.run(ADD.format(doc="Count down.", times=1).replace("add", "countdown"), "def")
        server.wait_for(lambda: _rows(server, "countdown"), what="countdown to be listed")
        kernel.restart()
        server.wait_for(lambda: not _rows(server, "countdown"), what="countdown to leave")
        status, body = server.request("GET", "nexus/api/tools/countdown")
        assert status == 404, body
        message = body["message"]
        assert "the kernel of restart.ipynb restarted" in message, message
        assert "Run the cell that defines countdown in restart.ipynb again" in message
        assert "%tool list" not in message and "Registry.list" not in message
        # a name that never was a tool: advice for the sidebar, not for the notebook
        status, body = server.request("GET", "nexus/api/tools/no_such_tool_here")
        assert status == 404 and "Tools sidebar" in body["message"], body
        assert "%tool list" not in body["message"]
    finally:
        kernel.close()


def test_an_exported_file_is_the_notebooks_only_while_its_kernel_lives(
    server: JupyterServer,
) -> None:
    kernel = NotebookKernel(server, "exporter.ipynb")
    hello = ADD.format(doc="Say hello.", times=1).replace("add", "hello_export")
    try:
        kernel.run(LOAD, "load")
        kernel.run(hello, "def")
        server.wait_for(lambda: _rows(server, "hello_export"), what="the notebook's tool")
        kernel.run("%tool export hello_export", "export")
        row = server.wait_for(
            lambda: next((r for r in _rows(server, "hello_export") if r["exported_by"]), None),
            what="the exported file, handed over by the kernel",
        )
        assert row["source_kind"] == "directory" and row["exported_from"] == "exporter.ipynb"
        assert row["exported_by"] == "kernel:exporter.ipynb"
        kernel.restart()
        row = server.wait_for(
            lambda: next((r for r in _rows(server, "hello_export") if not r["exported_by"]), None),
            what="the file to be a file like any other",
        )
        assert row["source_kind"] == "directory" and row["exported_from"] == "exporter.ipynb"
    finally:
        kernel.close()
        (server.root / "tools" / "dynamic" / "hello_export.py").unlink(missing_ok=True)
