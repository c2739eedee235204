"""``%tool check``, ``%tool install`` and ``%tool sync`` in a real shell, against a project
whose nex.yaml declares tools with real check and install commands."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from nexus_jupyter import Registry
from nexus_jupyter.session import reset_session_registry

PROJECT = """search: {mode: keyword}
tools:
  - id: fmt
    source: {type: cli, command: 'true'}
    availability: conditional
    install: {check: "test -f fmt.installed", command: "touch fmt.installed"}
  - id: ready
    source: {type: cli, command: 'true'}
"""


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    (tmp_path / "nex.yaml").write_text(PROJECT)
    reg = Registry.default(root=tmp_path, watch=False, builtins=False)
    reset_session_registry(reg)
    yield reg
    reset_session_registry(None)
    reg.close()


def test_check_names_the_reason_and_the_fix(shell: InteractiveShell) -> None:
    report = shell.run_line_magic("tool", "check fmt ready")
    assert not report.ok
    assert repr(report).splitlines() == [
        "fmt: unavailable -- check 'test -f fmt.installed' failed (exit 1). "
        "Install it with `nexus-tools install fmt`",
        "ready: available",
    ]
    with pytest.raises(UsageError, match="No tool named 'nope'"):
        shell.run_line_magic("tool", "check nope")


def test_install_with_yes_then_check_passes(shell: InteractiveShell, tmp_path: Path) -> None:
    report = shell.run_line_magic("tool", "install fmt --yes")
    assert report.ok, repr(report)
    assert "fmt: install command: touch fmt.installed" in repr(report)
    assert (tmp_path / "fmt.installed").exists()
    assert shell.run_line_magic("tool", "check fmt").ok
    assert shell.run_line_magic("tool", "install --all-missing --yes").ok  # nothing missing


def test_install_without_a_way_to_ask_says_use_yes(shell: InteractiveShell, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--yes"):
        shell.run_line_magic("tool", "install fmt")
    assert not (tmp_path / "fmt.installed").exists()


def test_sync_reports_changes(shell: InteractiveShell, tmp_path: Path) -> None:
    shell.run_line_magic("tool", "sync")
    (tmp_path / "fmt.installed").touch()
    report = shell.run_line_magic("tool", "sync")
    assert repr(report) == "changed  fmt: status"
