"""Which folder is a session's workspace (its nex.yaml and tools folder): the nearest
``nex.yaml`` from the working folder upward, else the root of the Jupyter server that started
the kernel, else the working folder. Real folders; the environment a server gives its kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_jupyter.core.config.paths import (
    SERVER_ROOT_ENV,
    find_project_file,
    resolve_tools_dir,
    workspace_root,
)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``root/notebooks/deep`` (no nex.yaml anywhere yet), with no server in the environment."""
    monkeypatch.delenv(SERVER_ROOT_ENV, raising=False)
    monkeypatch.delenv("NEXUS_TOOLS_DIR", raising=False)
    (tmp_path / "root" / "notebooks" / "deep").mkdir(parents=True)
    return tmp_path / "root"


def test_without_nex_yaml_or_server_the_working_folder_is_the_workspace(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree / "notebooks")
    assert workspace_root() == tree / "notebooks"  # a plain IPython: as before
    assert resolve_tools_dir(workspace_root()) == tree / "notebooks" / "tools" / "dynamic"


def test_a_kernel_of_a_jupyter_server_works_in_the_servers_root(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SERVER_ROOT_ENV, str(tree))
    monkeypatch.chdir(tree / "notebooks" / "deep")
    assert workspace_root() == tree
    assert resolve_tools_dir(workspace_root()) == tree / "tools" / "dynamic"


def test_the_nearest_nex_yaml_decides(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tree / "nex.yaml").write_text("tools_dir: shared/tools\n")
    assert workspace_root(tree / "notebooks" / "deep") == tree  # found walking up
    (tree / "notebooks" / "nex.yaml").write_text("{}\n")
    monkeypatch.setenv(SERVER_ROOT_ENV, str(tree))
    assert workspace_root(tree / "notebooks" / "deep") == tree / "notebooks"  # nearer wins


def test_a_nex_yaml_above_the_servers_root_is_not_the_kernels(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server reads its root's nex.yaml only; a kernel under that root agrees with it."""
    (tree.parent / "nex.yaml").write_text("{}\n")
    monkeypatch.setenv(SERVER_ROOT_ENV, str(tree))
    assert find_project_file(tree / "notebooks", stop=tree) is None
    assert workspace_root(tree / "notebooks") == tree
    monkeypatch.delenv(SERVER_ROOT_ENV)
    assert workspace_root(tree / "notebooks") == tree.parent  # no server: found walking up
