"""The Try forms of the sidebar and the notebook as a new user meets them, in a real headless
Chromium (``tryforms.spec.mjs``): number boxes that take text in progress, call counts that
follow the calls, "Save as test" only for the call that ran, both views of the notebook form
in step, a catalog that leaves the summary its room, and empty catalogs that say what to do.
Screenshots: ``test-artifacts/tryforms-*.png``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

CELLS = [
    "%load_ext nexus_jupyter",
    "from nexus_jupyter import tool\n\n@tool\ndef add(a: int, b: int = 1) -> int:\n"
    '    """Add two integers."""\n    return a + b',
    "%tools",
    "%tool try add",
    "from nexus_jupyter import Registry\nfrom nexus_jupyter.notebook.widgets.catalog import "
    'Catalog\nempty = Registry()\nempty.watch("no-tools-here")\nCatalog(empty)',
    "%tools xqzv",
]


def test_try_forms_in_the_sidebar_and_the_notebook(
    lab: dict[str, str],  # noqa: F811
) -> None:
    root = Path(lab["tools_dir"]).parents[1]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in CELLS],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, root / "tryforms.ipynb")
    shots = [
        f"tryforms-{s}.png"
        for s in ("sidebar-number", "sidebar-no-match", "catalog", "form-refused", "form-json")
    ]
    stdout, report = _run_spec(
        lab, "tryforms.spec.mjs", ARTIFACTS / "tryforms-empty.png", shots=shots
    )
    for step in (
        "before a run, Save as test is disabled",
        'the integer box keeps "-", "1e", "2*3" and "abc" as typed',
        "nothing reached the server",
        "after the call the calls line says: Calls on this server: 1",
        'offers "Clear the search"',
        "each summary on its own line",
        "Save as test is disabled: it offers no stale 42",
        "the catalog's calls line counted the call",
        "form -> JSON -> form shows the same arguments",
        "an empty catalog says how to add a tool",
        "all steps passed",
    ):
        assert step in stdout, report
    print(stdout)
