"""A notebook whose folder has the tools folder a kernel used to load (``notebooks/tools/
dynamic``) is told once, when the kernel's registry is made, that those files no longer load
and how to keep them; the advice works. Real folders, the environment a Jupyter server gives
its kernels, the real session registry."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nexus_jupyter.core.config.paths import SERVER_ROOT_ENV, SERVER_TOOLS_ENV
from nexus_jupyter.notebook import workspace_notice
from nexus_jupyter.session import defer_search_warm_up, reset_session_registry, session_registry

HELLO = '''from nexus_jupyter import tool


@tool
def hello(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"
'''


@pytest.fixture
def kernel_in_notebooks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shell: InteractiveShell
) -> Iterator[Path]:
    """A kernel of a Jupyter server rooted at ``root``, running in ``root/notebooks``, whose
    ``tools/dynamic`` has a tool file; the extension is loaded (its hooks are installed)."""
    root = tmp_path / "root"
    old = root / "notebooks" / "tools" / "dynamic"
    old.mkdir(parents=True)
    (old / "hello.py").write_text(HELLO)
    for name in ("NEXUS_TOOLS_DIR", SERVER_TOOLS_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(SERVER_ROOT_ENV, str(root))
    monkeypatch.setenv("NEXUS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(root / "notebooks")
    monkeypatch.setattr(workspace_notice, "_told", False)  # a fresh kernel
    release = defer_search_warm_up()  # no search index is needed here
    try:
        yield root
    finally:
        reset_session_registry(None)
        release()


def _new_session_registry() -> object:
    reset_session_registry(None)
    return session_registry()


def test_a_kernel_says_once_that_its_folders_tool_files_no_longer_load(
    kernel_in_notebooks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = kernel_in_notebooks
    reg = _new_session_registry()
    said = capsys.readouterr().err
    assert f"the tool files in {root / 'notebooks' / 'tools' / 'dynamic'} (hello.py)" in said
    assert "are not loaded in this kernel" in said
    assert f"here {root}." in said and f"its tools folder is {root / 'tools' / 'dynamic'}" in said
    assert f"built-in file tools read relative paths from {root}" in said
    assert f"put `tools_dir: notebooks/tools/dynamic` in {root / 'nex.yaml'}" in said
    assert f"or move the files into {root / 'tools' / 'dynamic'}" in said
    assert "hello" not in reg.names()  # what it says is so

    _new_session_registry()  # %reload_ext, a registry replaced: not said again
    assert capsys.readouterr().err == ""


def test_the_advice_brings_the_old_folder_back_and_then_nothing_is_said(
    kernel_in_notebooks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (kernel_in_notebooks / "nex.yaml").write_text("tools_dir: notebooks/tools/dynamic\n")
    reg = _new_session_registry()
    assert "hello" in reg.names()
    assert capsys.readouterr().err == ""


def test_a_kernel_whose_folder_is_its_workspace_says_nothing(
    kernel_in_notebooks: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(SERVER_ROOT_ENV)  # a terminal IPython: its folder, as before
    reg = _new_session_registry()
    assert "hello" in reg.names()
    assert capsys.readouterr().err == ""


def test_a_kernel_at_the_workspace_root_whose_nex_yaml_moves_tools_dir_says_nothing(
    kernel_in_notebooks: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = kernel_in_notebooks
    (root / "tools" / "dynamic").mkdir(parents=True)
    (root / "tools" / "dynamic" / "hello.py").write_text(HELLO)  # not the old default folder
    (root / "nex.yaml").write_text("tools_dir: mytools\n")  # a choice, not an upgrade
    monkeypatch.chdir(root)
    _new_session_registry()
    assert capsys.readouterr().err == ""
