"""Configuration levels: precedence, merging, errors with file/line/key, interpolation."""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus_jupyter import ConfigError, Registry
from nexus_jupyter.core.config.loading import interpolate, load_settings, merge_levels
from nexus_jupyter.core.policy.credentials import CredentialStore
from nexus_jupyter.core.tools.context import Caller
from tests.waiting import wait_until


@pytest.fixture
def levels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("NEXUS_HOME", str(home))
    return home, project


def test_defaults_without_files(levels: tuple[Path, Path]) -> None:
    _, project = levels
    settings = load_settings(project)
    assert settings.tools_dir == "tools/dynamic"
    assert settings.grant.for_caller(Caller("notebook", grant="notebook")) == "danger_full_access"
    assert settings.grant.for_caller(Caller("rest", grant="rest")) == "workspace_write"
    assert settings.files == ()


def test_precedence_runtime_over_project_over_user(levels: tuple[Path, Path]) -> None:
    home, project = levels
    (home / "nex.yaml").write_text(
        "tools_dir: user_tools\ngrant: read_only\napprovals: {read: pre_approved, bash: ask}\n"
        "mcp:\n  servers:\n    - {name: time, command: uvx, args: [mcp-server-time]}\n"
        "    - {name: docs, url: 'https://example.invalid/mcp'}\n"
    )
    (project / "nex.yaml").write_text(
        "tools_dir: project_tools\napprovals: {bash: blocked}\n"
        "mcp:\n  servers:\n    - {name: time, command: python, args: [-m, mcp_server_time]}\n"
    )
    settings = load_settings(project, runtime={"tools_dir": "runtime_tools"})
    assert settings.tools_dir == "runtime_tools"
    assert settings.grant.default == "read_only"  # only the user level set it
    assert settings.approvals == {"read": "pre_approved", "bash": "blocked"}  # deep merge
    servers = {s.name: s for s in settings.mcp.servers}
    assert servers["time"].command == "python" and servers["time"].args == ["-m", "mcp_server_time"]
    assert servers["docs"].transport == "http"  # kept from the user level (merged by name)
    assert settings.files == (str(home / "nex.yaml"), str(project / "nex.yaml"))


def test_merge_replaces_plain_lists() -> None:
    assert merge_levels({"a": [1, 2], "m": {"x": 1}}, {"a": [3], "m": {"y": 2}}) == {
        "a": [3],
        "m": {"x": 1, "y": 2},
    }


def test_merge_adds_up_skills_folders() -> None:
    merged = merge_levels({"skills": ["/u/a", "/u/b"]}, {"skills": ["/p/c", "/u/a"]})
    assert merged == {"skills": ["/u/a", "/u/b", "/p/c"]}


def test_bad_yaml_names_file_and_line(levels: tuple[Path, Path]) -> None:
    _, project = levels
    (project / "nex.yaml").write_text("tools_dir: x\napprovals:\n  read: [unclosed\n")
    with pytest.raises(ConfigError) as info:
        load_settings(project)
    message = str(info.value)
    assert (
        str(project / "nex.yaml") in message and "line 4" in message and "invalid YAML" in message
    )


def test_one_file_naming_two_items_alike_is_an_error_with_both_lines(
    levels: tuple[Path, Path],
) -> None:
    """Two declared tools with one id (or two servers with one name) in a file: the second
    would silently replace the first. Across levels, a project replacing a user's tool is
    how levels work, so that stays allowed."""
    home, project = levels
    (project / "nex.yaml").write_text(
        "tools:\n"
        "  - id: lint\n"
        "    source: {type: cli, command: ruff}\n"
        "  - id: fmt\n"
        "    source: {type: cli, command: black}\n"
        "  - id: lint\n"
        "    source: {type: cli, command: flake8}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_settings(project)
    message = str(info.value)
    assert "line 6" in message and "first at line 2" in message and "'lint'" in message
    (project / "nex.yaml").write_text(
        "mcp:\n  servers:\n    - {name: time, command: a}\n    - {name: time, command: b}\n"
    )
    with pytest.raises(ConfigError, match="MCP server 'time' is declared twice"):
        load_settings(project)
    (home / "nex.yaml").write_text("tools:\n  - id: lint\n    source: {type: cli, command: ruff}\n")
    (project / "nex.yaml").write_text("tools:\n  - id: lint\n    source: {type: cli, command: x}\n")
    (declared,) = load_settings(project).tools
    assert declared.id == "lint" and declared.source.command == "x"


def test_unknown_key_names_line_and_suggests(levels: tuple[Path, Path]) -> None:
    home, project = levels
    (home / "nex.yaml").write_text(
        "grant: workspace_write\nmcp:\n  servers:\n    - name: t\n      comand: uvx\n"
    )
    with pytest.raises(ConfigError) as info:
        load_settings(project)
    message = str(info.value)
    assert str(home / "nex.yaml") in message
    assert "line 5" in message and "'mcp.servers[0].comand'" in message
    assert "Did you mean 'command'?" in message


def test_bad_value_names_key_and_line(levels: tuple[Path, Path]) -> None:
    _, project = levels
    (project / "nex.yaml").write_text("tools_dir: t\n\napprovals:\n  bash: pre_aproved\n")
    with pytest.raises(ConfigError, match=r"line 4: key 'approvals.bash'.*'pre_aproved'"):
        load_settings(project)


def test_bad_runtime_settings_are_named(levels: tuple[Path, Path]) -> None:
    _, project = levels
    with pytest.raises(ConfigError, match="runtime settings: unknown key 'tols_dir'"):
        load_settings(project, runtime={"tols_dir": "x"})


def test_server_needs_command_or_url(levels: tuple[Path, Path]) -> None:
    _, project = levels
    (project / "nex.yaml").write_text("mcp:\n  servers:\n    - name: both\n")
    with pytest.raises(ConfigError, match="exactly one of `command`"):
        load_settings(project)


def test_interpolation_env_and_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CredentialStore(home=tmp_path)
    store.set("github", "token", "gh-token-value", provider="file")
    monkeypatch.setenv("MY_URL", "https://x.invalid")
    value = {
        "url": "${env:MY_URL}/mcp",
        "headers": {"Authorization": "Bearer ${credentials:github/token}"},
        "args": ["--key=${credentials:github/token}"],
        "n": 3,
    }
    assert interpolate(value, store) == {
        "url": "https://x.invalid/mcp",
        "headers": {"Authorization": "Bearer gh-token-value"},
        "args": ["--key=gh-token-value"],
        "n": 3,
    }


def test_interpolation_missing_values_are_clear(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOPE_VAR", raising=False)
    store = CredentialStore(home=tmp_path)
    with pytest.raises(ConfigError, match=r"MCP server 'gh'.*'NOPE_VAR' is not set"):
        interpolate("${env:NOPE_VAR}", store, where="MCP server 'gh'")
    with pytest.raises(ConfigError, match="nexus-tools credentials set github token"):
        interpolate("${credentials:github/token}", store)


def test_registry_default_uses_the_settings(levels: tuple[Path, Path]) -> None:
    _, project = levels
    (project / "nex.yaml").write_text(
        "grant: read_only\naudit: false\ncli_tools:\n"
        "  - {name: definitely_missing_cli, command: definitely-missing-cli-xyz, install_hint: 'pip install it'}\n"
    )
    reg = Registry.default(root=project, watch=False, search="keyword")
    try:
        assert reg.settings.grant.default == "read_only" and reg.audit is None
        assert reg.policy.grant.default == "read_only"
        assert {"read", "bash", "definitely_missing_cli"} <= set(reg.names())
        # the source checks availability in the background once started
        wait_until(reg, lambda: reg.entry("definitely_missing_cli").status == "unavailable")
        entry = reg.entry("definitely_missing_cli")
        assert entry.status == "unavailable" and "pip install it" in (entry.reason or "")
    finally:
        reg.close()
