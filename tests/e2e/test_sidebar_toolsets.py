"""The sidebar and the notebook catalog group and filter their tools by toolset, and the
sidebar shows each call's summary, in a real headless Chromium (``toolsets.spec.mjs``,
``catalog_toolsets.spec.mjs``). Screenshots: ``test-artifacts/sidebar-toolsets-*.png`` and
``test-artifacts/catalog-toolsets-*.png``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]


def test_sidebar_groups_and_filters_by_toolset(
    lab: dict[str, str],  # noqa: F811
) -> None:
    shots = [f"sidebar-toolsets-{s}.png" for s in ("grouped", "filtered", "summary")]
    stdout, report = _run_spec(
        lab, "toolsets.spec.mjs", ARTIFACTS / "sidebar-toolsets-grouped.png", shots=shots
    )
    for step in (
        "grouped by toolset: Toolset · files 6",
        "the web toolset alone",
        "grouped by source with the filter kept",
        'the result pane and the history say "Listing ."',
    ):
        assert step in stdout, report
    print(stdout)


def test_notebook_catalog_groups_and_filters_by_toolset(
    lab: dict[str, str],  # noqa: F811
) -> None:
    root = Path(lab["tools_dir"]).parents[1]
    cells = [
        "%load_ext nexus_jupyter",
        "%tools",
    ]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in cells],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, root / "catalog-toolsets.ipynb")
    shots = [f"catalog-toolsets-{s}.png" for s in ("grouped", "filtered", "spelled")]
    stdout, report = _run_spec(
        lab, "catalog_toolsets.spec.mjs", ARTIFACTS / "catalog-toolsets-grouped.png", shots=shots
    )
    assert "grouped by toolset: Toolset · files 5 | Toolset · meta 2" in stdout, report
    assert "the shell toolset alone" in stdout, report
    assert "a misspelt search says what it searched for: bash first" in stdout, report
    print(stdout)
