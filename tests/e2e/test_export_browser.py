"""Export from a notebook in a subfolder, as a new user does it after ``make demo``: a real
JupyterLab whose root has no ``nex.yaml`` and no ``tools/dynamic``, the notebook in
``notebooks/``, its kernel started by the page, real headless Chromium (``export.spec.mjs``).

The tool is listed under "This notebook" from the kernel; after ``%tool export`` it is still
there, owned by ``hello.py`` in the server's tools folder, and Try runs the file's version.
Screenshots: ``test-artifacts/export-*.png``.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_follow_notebook import _write_notebook
from test_sidebar import ARTIFACTS, TOKEN, lab_server
from test_sidebar import _run_spec as run_spec

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

NOTEBOOK = "notebooks/hello.ipynb"
CELLS = [
    ("load", "%load_ext nexus_jupyter"),
    (
        "define",
        "from nexus_jupyter import tool\n\n@tool\ndef hello(name: str) -> str:\n"
        '    """Greet someone."""\n    return f"Hello, {name}!"',
    ),
    ("export", "%tool export hello"),
]


@pytest.fixture
def fresh_lab(tmp_path: Path) -> Iterator[dict[str, str]]:
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)  # no nex.yaml, no tools/dynamic
    _write_notebook(root / NOTEBOOK, CELLS)
    with lab_server(tmp_path, root, "glob") as running:
        yield running


def _status(lab: dict[str, str]) -> dict[str, object]:
    request = urllib.request.Request(
        lab["url"] + "nexus/api/status", headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.loads(response.read())
    source = next(s for s in body["sources"] if s["kind"] == "directory")
    return dict(source["details"])


def test_an_exported_tool_stays_in_the_panel_served_from_its_file(
    fresh_lab: dict[str, str],
) -> None:
    assert _status(fresh_lab)["exists"] is False
    shots = [f"export-{n}.png" for n in ("1-listed", "2-exported", "3-details")]
    stdout, report = run_spec(
        fresh_lab,
        "export.spec.mjs",
        ARTIFACTS / "export.png",
        extra_env={"NEXUS_E2E_NOTEBOOK": NOTEBOOK},
        shots=shots,
    )
    for step in (
        'hello listed under "This notebook"',
        "export said: Wrote",
        'hello still listed after the export: "exported → hello.py"',
        "Try ran the file's hello: Hello, Ada!",
        "all steps passed",
    ):
        assert step in stdout, report
    root = Path(fresh_lab["tools_dir"]).parents[1]
    assert (root / "tools" / "dynamic" / "hello.py").is_file()
    assert not (root / "notebooks" / "tools").exists()
    assert _status(fresh_lab)["exists"] is True
    log = Path(fresh_lab["log"]).read_text(errors="replace")
    assert "not listed by server" not in log, report
    print(stdout)
