"""A kernel's tools in the sidebar, in a real headless Chromium (``kernelclash.spec.mjs``): two
notebooks defining ``add`` show one conflict on both rows, each row opens and runs its own
``add``; a kernel tool's own validator refuses with the field flagged (not "Failed") and counts
as refused; after its kernel restarts, an open tool says what happened and how to bring it
back. Screenshots: ``test-artifacts/kernelclash-*.png``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from live_kernels import ADD_CELL as ADD
from live_kernels import HALF_CELL as HALF
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(400)]


def _notebook(path: Path, *cells: str) -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in ("%load_ext nexus_jupyter", *cells)],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, path)


def test_two_notebooks_one_name_a_kernel_validator_and_a_restart_in_the_sidebar(
    lab: dict[str, str],  # noqa: F811
) -> None:
    root = Path(lab["tools_dir"]).parents[1]
    _notebook(root / "one.ipynb", ADD.format(doc="Add two integers.", times=1), HALF)
    _notebook(root / "two.ipynb", ADD.format(doc="Add, the second way (times ten).", times=10))
    shots = [
        f"kernelclash-{s}.png" for s in ("conflict", "two-add", "one-add", "refusal", "restarted")
    ]
    stdout, report = _run_spec(
        lab, "kernelclash.spec.mjs", ARTIFACTS / "kernelclash-end.png", shots=shots
    )
    for step in (
        "both adds read as a conflict",
        "two.ipynb's add opened from its own row and ran: 30",
        "one.ipynb's add ran its own: 3",
        "half(n=3) refused by its validator",
        "after the restart the open details say: The tool 'half' is gone: the kernel of "
        "one.ipynb restarted",
        "all steps passed",
    ):
        assert step in stdout, report
    print(stdout)
