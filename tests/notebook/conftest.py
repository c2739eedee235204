"""A real IPython shell with the extension loaded, a fresh session registry per test, and the
``face`` fixture that runs each behaviour through the Python API and through the magic."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import Face

from nexus_jupyter import Registry
from nexus_jupyter.notebook import extension
from nexus_jupyter.notebook.history import session_history
from nexus_jupyter.session import reset_session_registry


@pytest.fixture
def registry() -> Iterator[Registry]:
    reg = Registry(search="keyword")
    reset_session_registry(reg)
    session_history().clear()
    yield reg
    reset_session_registry(None)


@pytest.fixture
def shell(registry: Registry) -> InteractiveShell:
    sh = InteractiveShell.instance()
    sh.reset()
    if "nexus_jupyter" not in sh.extension_manager.loaded:
        sh.run_line_magic("load_ext", "nexus_jupyter")
    else:
        extension.load(sh)  # a fresh tracker for this test's namespace and registry
    return sh


@pytest.fixture(params=["func", "magic"])
def face(request: pytest.FixtureRequest, shell: InteractiveShell) -> Face:
    return Face(request.param, shell)


@pytest.fixture
def notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The notebook this session runs in (as Jupyter says it: JPY_SESSION_NAME)."""
    path = tmp_path / "work.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("1 + 1"))
    nbformat.write(nb, path)
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    return path
