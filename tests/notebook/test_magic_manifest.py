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


# A project-written MCP server that changes its tools without telling its clients.
SILENT_SERVER = """from pathlib import Path
from mcp.server.mcpserver import MCPServer


def make(name):
    def tool(text: str = "") -> str:
        return f"{name}: {text}"
    return tool


class Silent(MCPServer):
    async def list_tools(self):  # the tools of the moment, never announced
        names = Path(__file__).with_name("tools.txt").read_text().split()
        for old in [t.name for t in await super().list_tools() if t.name not in names]:
            self.remove_tool(old)
        for name in names:
            self.add_tool(make(name), name=name, description=f"Tool {name}.")
        return await super().list_tools()


Silent("silent").run()
"""


def test_sync_asks_mcp_servers_for_their_tools_again(
    shell: InteractiveShell, tmp_path: Path
) -> None:
    import sys

    from waiting import wait_until

    ws = tmp_path / "silent"
    ws.mkdir()
    (ws / "server.py").write_text(SILENT_SERVER)
    (ws / "tools.txt").write_text("alpha\nbeta\n")
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\n"
        f"mcp: {{servers: [{{name: silent, command: '{sys.executable}', "
        f"args: ['{ws / 'server.py'}']}}]}}\n"
    )
    reg = Registry.default(root=ws, watch=False, builtins=False)
    reset_session_registry(reg)
    try:
        wait_until(reg, lambda: reg.find("mcp__silent__beta") is not None, timeout=60)
        shell.run_line_magic("tool", "sync")
        (ws / "tools.txt").write_text("alpha\ngamma\n")
        report = shell.run_line_magic("tool", "sync")
        assert repr(report).splitlines() == [
            "added    mcp__silent__gamma",
            "removed  mcp__silent__beta",
        ]
        assert reg.find("mcp__silent__beta") is None
    finally:
        reset_session_registry(None)
        reg.close()
