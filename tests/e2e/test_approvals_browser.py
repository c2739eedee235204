"""Tools that need approval, in a real headless Chromium (``approvals.spec.mjs``): the
notebook form's Deny is a grey "Denied" with no test offered and a history row, Approve once
reports the tool's own time; the sidebar disables Run (and looks it) for a tool above its
grant, naming the nex.yaml line that allows it, and asks before a kernel tool the notebook's
``%tool mode prompt`` asks about. Screenshots: ``test-artifacts/approvals-*.png``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from live_kernels import APPROVAL_TOOLS
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

CELLS = ["%load_ext nexus_jupyter", APPROVAL_TOOLS, "%tool mode prompt", "%tool try purge_cache"]


def test_approvals_in_the_notebook_and_the_sidebar(lab: dict[str, str]) -> None:  # noqa: F811
    root = Path(lab["tools_dir"]).parents[1]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in CELLS],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, root / "approvals.ipynb")
    shots = [
        f"approvals-{s}.png"
        for s in ("notebook-denied", "notebook-approved", "sidebar-disabled", "sidebar-dialog")
    ]
    stdout, report = _run_spec(
        lab, "approvals.spec.mjs", ARTIFACTS / "approvals-sidebar-ran.png", shots=shots
    )
    for step in (
        'Deny: "Denied',
        "Approve once: ",
        "purge_cache in the sidebar",
        "the sidebar asks first",
        "save_note ran from the sidebar",
        "all steps passed",
    ):
        assert step in stdout, report
    print(stdout)
