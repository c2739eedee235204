"""The Tools panel follows the notebook: real JupyterLab, a real kernel started through the
REST API, real headless Chromium (``follow.spec.mjs``).

A cell sets a global; another cell (run in the browser) defines a tool reading it: the tool
appears first in the panel, in the notebook's own group; Try returns the live value; "Go to
cell" selects the defining cell; re-running the cell with a change updates what the panel
runs; a tool that raises shows the traceback of its cell; restarting the kernel takes the
tools away. Screenshots: ``test-artifacts/follow-*.png``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_sidebar import ARTIFACTS, TOKEN, lab  # noqa: F401  (lab is a fixture)
from test_sidebar import _run_spec as run_spec

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

SETUP = "%load_ext nexus_jupyter\nlimit = 7"
GET_LIMIT = '''from nexus_jupyter import tool

@tool
def get_limit() -> int:
    """The notebook's current limit."""
    return limit'''
SHOUT = '''from nexus_jupyter import tool

@tool
def shout(text: str) -> str:
    """Say it louder."""
    return text.upper()'''
RATIO = """from nexus_jupyter import tool

@tool
def ratio(x: float) -> float:
    return limit / x"""


def _write_notebook(path: Path, cells: list[tuple[str, str]]) -> None:
    """A notebook of code cells ``(id, source)``, never run, on the python3 kernel."""
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "id": cell_id,
                "metadata": {},
                "source": source,
                "outputs": [],
                "execution_count": None,
            }
            for cell_id, source in cells
        ],
        "metadata": {"kernelspec": kernelspec},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))


def _lab_server(running: dict[str, str]) -> Any:
    """The ``lab`` fixture's server as tests/live_kernels.py sees one (with its token)."""
    from live_kernels import JupyterServer

    class LabServer(JupyterServer):
        def request(
            self, method: str, path: str, body: Any = None, *, token: str | None = TOKEN
        ) -> tuple[int, Any]:
            return super().request(method, path, body, token=token)

    log = Path(running["log"])
    root = Path(running["tools_dir"]).parents[1]
    return LabServer(running["url"], root, log.parent / "runtime", log, None)  # type: ignore[arg-type]


def test_panel_follows_the_notebook_and_its_kernel(lab: dict[str, str]) -> None:  # noqa: F811
    from live_kernels import NotebookKernel

    server = _lab_server(lab)
    cells = [("setup", SETUP), ("define", GET_LIMIT), ("ratio", RATIO)]
    _write_notebook(server.root / "follow.ipynb", cells)
    kernel = NotebookKernel(server, "follow.ipynb")  # POST /api/sessions
    try:
        kernel.run(SETUP, "setup")
        kernel.run(SHOUT, "shout")  # exported at once: the file owns it now
        kernel.run("%tool export shout", "export")
        stdout, report = run_spec(
            lab,
            "follow.spec.mjs",
            ARTIFACTS / "follow.png",
            extra_env={"NEXUS_E2E_NOTEBOOK": "follow.ipynb", "NEXUS_E2E_KERNEL": kernel.kernel_id},
            shots=[
                f"follow-{n}.png"
                for n in ("1-listed", "2-try", "3-traceback", "4-restarted", "5-open-file")
            ],
        )
    finally:
        kernel.close()
    _assert_steps(
        stdout,
        report,
        "get_limit listed first",
        "Try ran it in the kernel: 7",
        "Go to cell selected the cell",
        "the panel runs the new version (21)",
        "a failing tool shows its own traceback",
        "exported shout: shout.py owns it",
        "Open file opened shout.py",
        "restarted the kernel: its tools left the panel",
        "all steps passed",
    )
    print(stdout)


def _assert_steps(stdout: str, report: str, *steps: str) -> None:
    """Each step's line was printed by the spec (``report`` shows everything when not)."""
    for step in steps:
        assert step in stdout, report


GOOD_AREA = '''from nexus_jupyter import tool


@tool
def circle_area(radius: float) -> float:
    """The area of a circle."""
    return 3.0 * radius * radius
'''
STALE_CELLS = [
    "%load_ext nexus_jupyter\nimport pathlib, time\nimport nexus_jupyter\n"
    "from nexus_jupyter.core.registry.file_health import stale_tools\n"
    "assert nexus_jupyter.registry().find('circle_area') is not None  # loaded while good",
    "# break the file: the last good version stays live\n"
    "path = pathlib.Path('tools/dynamic/circle_area.py')\n"
    "path.write_text(path.read_text().replace('radius * radius', 'radius *'))\n"
    "deadline = time.monotonic() + 10\n"
    "while 'circle_area' not in stale_tools(nexus_jupyter.registry()) and time.monotonic() < deadline:\n"
    "    time.sleep(0.05)",
    "%tool list --source directory",
    "%tool call circle_area radius=2",
    "%tools circle",
    "from nexus_jupyter import tool\n\n@tool\ndef ratio(x: float) -> float:\n    return 1 / x",
    "%tool call ratio x=0",
]


def test_stale_file_in_notebook(lab: dict[str, str]) -> None:  # noqa: F811
    """A tool file broken while the kernel runs, as the notebook shows it (screenshot:
    test-artifacts/stale-notebook.png)."""
    root = Path(lab["tools_dir"]).parents[1]
    (root / "tools" / "dynamic" / "circle_area.py").write_text(GOOD_AREA)
    cells = [(f"c{i}", source) for i, source in enumerate(STALE_CELLS)]
    _write_notebook(root / "stale.ipynb", cells)
    stdout, report = run_spec(lab, "stale.spec.mjs", ARTIFACTS / "stale-notebook.png")
    assert "show the stale tool with its error and line" in stdout, report
    assert "shows its traceback: Cell In[" in stdout, report


DRAFT_CELLS = [
    ("setup", "%load_ext nexus_jupyter\nrows = [1, 2, 3]"),
    (
        "define",
        'from nexus_jupyter import tool\n\n@tool\ndef draft_total() -> int:\n    """The sum of'
        ' the notebook\'s rows."""\n    return sum(rows)',
    ),
]


def test_renamed_notebook_keeps_its_tools(lab: dict[str, str]) -> None:  # noqa: F811
    """Rename an untitled notebook while its kernel runs (File > Rename Notebook…): its tools
    stay first, in its group under the new name; Try and Go to cell still work (screenshot:
    test-artifacts/follow-rename.png)."""
    root = Path(lab["tools_dir"]).parents[1]
    _write_notebook(root / "Untitled.ipynb", DRAFT_CELLS)
    stdout, report = run_spec(lab, "rename.spec.mjs", ARTIFACTS / "follow-rename.png")
    _assert_steps(
        stdout,
        report,
        'draft_total listed under "This notebook · Untitled.ipynb"',
        'draft_total stays in "This notebook · analysis.ipynb"',
        "Try still runs it in the kernel: 6",
        "Go to cell selected the defining cell of analysis.ipynb",
        "all steps passed",
    )


TRIPLE = '''from nexus_jupyter import tool

@tool
def triple(x: int) -> int:
    """Three times x."""
    return 3 * x'''


def test_calls_lines_follow_the_notebooks_own_calls(lab: dict[str, str]) -> None:  # noqa: F811
    """A kernel's tool open in the panel: the notebook calls it (``%tool call``, run in the
    page) and its "Calls from calls.ipynb" line counts it within seconds while the server's
    line stays at none; Try counts on the server's line only (screenshots:
    test-artifacts/calls-*.png)."""
    from live_kernels import NotebookKernel

    server = _lab_server(lab)
    cells = [("setup", "%load_ext nexus_jupyter"), ("define", TRIPLE)]
    cells.append(("call", "%tool call triple x=4;"))
    _write_notebook(server.root / "calls.ipynb", cells)
    kernel = NotebookKernel(server, "calls.ipynb")  # POST /api/sessions
    try:
        kernel.run(cells[0][1], "setup")
        kernel.run(TRIPLE, "define")
        stdout, report = run_spec(
            lab,
            "calls.spec.mjs",
            ARTIFACTS / "calls.png",
            extra_env={"NEXUS_E2E_NOTEBOOK": "calls.ipynb"},
            shots=[f"calls-{n}.png" for n in ("1-none", "2-notebook", "3-try")],
        )
    finally:
        kernel.close()
    _assert_steps(
        stdout,
        report,
        'triple open: "No calls on this server yet." / "No calls from calls.ipynb yet."',
        'the notebook called it: "Calls from calls.ipynb: 1, 0 failed (0%)',
        "the notebook's line stays at 1",
        "all steps passed",
    )
    print(stdout)
