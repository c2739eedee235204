"""The Try forms of the sidebar and the notebook as a new user meets them, in a real headless
Chromium (``tryforms.spec.mjs``): number boxes that take text in progress, call counts that
follow the calls (from the form and from elsewhere), "Save as test" only for the call that ran, optional parameters
(``str | None``, nested ones too) as plain boxes and ``int | str`` as a chooser named by type,
both views of the notebook form in step, a catalog that leaves the summary its room, and empty
catalogs that say what to do.
Screenshots: ``test-artifacts/tryforms-*.png``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

# Optional parameters as pydantic writes them (anyOf [X, null]), nested in an object and in
# array items too, and a real union; the tool says which values arrived.
NOTE = '''from pydantic import BaseModel

from nexus_jupyter import tool


class Spot(BaseModel):
    room: str | None = None
    floor: int | None = None


@tool
def note(
    label: str | None,
    count: int | None = None,
    tags: list[str] | None = None,
    key: int | str = 0,
    spot: Spot | None = None,
    sizes: list[int | None] | None = None,
) -> str:
    """Say which arguments arrived (optional parameters in the Try form).

    Args:
        label: A label, or none.
        count: How many, if known.
        tags: Tags to attach.
        key: A number or a name.
        spot: Where, if anywhere.
        sizes: Sizes; an empty one is unknown.
    """
    where = spot.model_dump() if spot else None
    return (
        f"label={label!r} count={count!r} tags={tags!r} key={key!r} spot={where!r} "
        f"sizes={sizes!r}"
    )
'''

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
    (Path(lab["tools_dir"]) / "note_tool.py").write_text(NOTE)
    shots = [
        f"tryforms-{s}.png"
        for s in (
            "sidebar-number",
            "sidebar-calls",
            "sidebar-optional",
            "sidebar-no-match",
            "catalog",
            "form-refused",
            "form-json",
        )
    ]
    stdout, report = _run_spec(
        lab, "tryforms.spec.mjs", ARTIFACTS / "tryforms-empty.png", shots=shots
    )
    for step in (
        "before a run, Save as test is disabled",
        'the integer box keeps "-", "1e", "2*3" and "abc" as typed',
        "nothing reached the server",
        "optional parameters are plain boxes",
        "left empty: label=None count=None tags=None key=0 spot=None sizes=None",
        "filled: label='hi' count=3 tags=['a'] key='k7' spot={'room': 'lab', 'floor': 2} "
        "sizes=[5, None]",
        "after the call the calls line says: Calls on this server: 1",
        "a call from outside the sidebar: the open calls line says Calls on this server: 2",
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
