"""Toolsets from nex.yaml modules and entry points, with the real ecosystem libraries:
schemas kept, calls (sync and async) work, approval maps and the libraries' own approval
flags honoured."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import ApprovalRequired, PermissionDenied
from nexus_jupyter.core.toolsets.overview import toolset_rows

FIXTURES = "tests.sources.toolset_fixtures"


def make_registry(tmp_path: Path, toolsets: dict[str, Any], **config: Any) -> Registry:
    return Registry.default(
        root=tmp_path,
        config={"toolsets": toolsets, "audit": False, **config},
        watch=False,
        mcp=False,
        search="keyword",
    )


@pytest.fixture
def reg(tmp_path: Path):
    registry = make_registry(
        tmp_path,
        {
            "plain": {"module": f"{FIXTURES}.plain", "approval": {"default": "pre_approved"}},
            "lc": {"module": f"{FIXTURES}.ecosystem:langchain_tools", "prefix": "x_"},
            "pa": {
                "module": f"{FIXTURES}.ecosystem:pydantic_ai_toolset",
                "approval": {"default": "pre_approved"},
            },
            "smol": {
                "module": f"{FIXTURES}.smol:smolagents_tools",
                "approval": {"smol_reverse": "pre_approved", "smol_count": "blocked"},
            },
            "oa": {
                "module": f"{FIXTURES}.ecosystem:openai_agents_tools",
                "approval": {"default": "pre_approved"},
            },
        },
    )
    yield registry
    registry.close()


def test_each_kind_keeps_names_descriptions_and_schemas(reg: Registry) -> None:
    specs = {t.name: t.spec for t in reg.list()}
    assert specs["add"].toolset == "plain" and specs["add"].source == "toolset:plain"
    assert "_private" not in specs and "research_tools" in specs  # public functions only
    assert specs["x_lc_multiply"].description == "Multiply two integers."
    assert set(specs["x_lc_multiply"].input_schema["properties"]) == {"a", "b"}
    assert specs["x_lc_multiply"].input_schema["properties"]["a"]["type"] == "integer"
    assert specs["pa_subtract"].input_schema["required"] == ["a", "b"]
    assert specs["smol_reverse"].input_schema["properties"]["text"]["description"] == (
        "The text to reverse."
    )
    assert specs["oa_power"].input_schema["required"] == ["base", "exponent"]
    assert specs["oa_power"].description == "Raise base to exponent."


def test_calls_work_sync_and_async(reg: Registry) -> None:
    assert reg.call_sync("add", {"a": 2, "b": 3}).value == 5
    assert reg.call_sync("slow_echo", {"text": "hi"}).value == "hi"
    assert reg.call_sync("x_lc_multiply", {"a": 6, "b": 7}, approved=True).value == 42
    assert reg.call_sync("x_lc_shout", {"text": "hey"}, approved=True).value == "HEY"
    assert reg.call_sync("pa_subtract", {"a": 9, "b": 4}).value == 5
    assert reg.call_sync("smol_reverse", {"text": "abc"}).value == "cba"
    assert reg.call_sync("oa_power", {"base": 2, "exponent": 10}).value == 1024


def test_a_smolagents_tool_is_set_up_before_its_first_call(reg: Registry) -> None:
    assert reg.call_sync("smol_lookup", {"word": "hi"}, approved=True).value == "a greeting"


def test_a_failing_openai_agents_tool_is_an_error_with_its_message(reg: Registry) -> None:
    result = reg.call_sync("oa_find", {"name": "r9"})
    assert result.is_error, result.value  # not the SDK's "An error occurred ..." text
    assert (result.error_type, result.error) == ("LookupError", "no record named 'r9'")


def test_a_module_of_the_project_loads_from_any_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "team_tools.py").write_text(
        "def stamp(text: str) -> str:\n    'Stamp a text.'\n    return '[ok] ' + text\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr("sys.path", list(sys.path))  # the project joins a copy
    registry = make_registry(
        project, {"team": {"module": "team_tools", "approval": {"default": "pre_approved"}}}
    )
    try:
        assert registry.call_sync("stamp", {"text": "x"}).value == "[ok] x"
    finally:
        registry.close()
        sys.modules.pop("team_tools", None)


def test_arguments_are_checked_against_the_library_schema(reg: Registry) -> None:
    from nexus_jupyter.core.errors import ToolValidationError

    with pytest.raises(ToolValidationError):
        reg.call_sync("pa_subtract", {"a": "nine", "b": 4})


def test_external_tools_ask_by_default(reg: Registry) -> None:
    with pytest.raises(ApprovalRequired, match="x_lc_multiply"):
        reg.call_sync("x_lc_multiply", {"a": 1, "b": 2})


def test_approval_map_blocks_and_pre_approves(reg: Registry) -> None:
    with pytest.raises(PermissionDenied, match=r"toolsets\.smol\.approval\.smol_count"):
        reg.call_sync("smol_count", {"text": "a b c"}, approved=True)
    assert reg.call_sync("smol_reverse", {"text": "xy"}).value == "yx"


def test_the_approval_map_names_tools_with_or_without_the_prefix(tmp_path: Path) -> None:
    registry = make_registry(
        tmp_path,
        {
            "research": {
                "module": f"{FIXTURES}.plain:research_tools",
                "prefix": "research_",
                # the spelling (preApproved) and the prefixed name both work
                "approval": {"research_add": "preApproved", "slow_echo": "blocked"},
            }
        },
    )
    try:
        assert registry.call_sync("research_add", {"a": 1, "b": 1}).value == 2
        with pytest.raises(PermissionDenied, match=r"toolsets\.research\.approval\.slow_echo"):
            registry.call_sync("research_slow_echo", {"text": "x"}, approved=True)
    finally:
        registry.close()


def test_library_approval_flags_are_never_made_laxer(reg: Registry) -> None:
    # both toolsets pre-approve by default; the libraries' own flags still ask
    assert reg.get("pa_wipe").spec.needs_approval
    assert reg.get("oa_delete").spec.needs_approval
    with pytest.raises(ApprovalRequired):
        reg.call_sync("pa_wipe", {"path": "/tmp/x"})
    with pytest.raises(ApprovalRequired):
        reg.call_sync("oa_delete", {"name": "r1"})
    assert reg.call_sync("pa_wipe", {"path": "/x"}, approved=True).value == "wiped /x"
    assert reg.call_sync("oa_delete", {"name": "r1"}, approved=True).value == "deleted r1"


def test_global_pre_approval_does_not_waive_a_library_flag(tmp_path: Path) -> None:
    registry = make_registry(
        tmp_path,
        {"pa": {"module": f"{FIXTURES}.ecosystem:pydantic_ai_toolset"}},
        approvals={"pa_*": "pre_approved"},
        mode="allow",
    )
    try:
        assert registry.call_sync("pa_subtract", {"a": 1, "b": 1}).value == 0
        with pytest.raises(ApprovalRequired):
            registry.call_sync("pa_wipe", {"path": "p"})
    finally:
        registry.close()


def test_permission_ceiling_blocks_tools_above_it(tmp_path: Path) -> None:
    registry = make_registry(tmp_path, {"shell": {"permission": "workspace_write"}})
    try:
        with pytest.raises(PermissionDenied, match=r"toolsets\.shell\.permission"):
            registry.call_sync("bash", {"command": "true"}, approved=True)
    finally:
        registry.close()


def test_entry_point_toolset_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    dist = site / "research_toolset-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: research-toolset\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        f"[nexus_jupyter.toolsets]\nresearch = {FIXTURES}.plain:research_tools\n"
    )
    monkeypatch.syspath_prepend(str(site))
    registry = make_registry(
        tmp_path, {"research": {"prefix": "research_", "approval": {"add": "pre_approved"}}}
    )
    try:
        names = {t.name for t in registry.list(source="toolset:research")}
        assert names == {"research_add", "research_slow_echo"}
        assert registry.call_sync("research_add", {"a": 1, "b": 2}).value == 3
        row = next(r for r in toolset_rows(registry) if r["toolset"] == "research")
        assert row["origin"] == f"entry point {FIXTURES}.plain:research_tools"
        with pytest.raises(ApprovalRequired):  # external and not in the map: asks
            registry.call_sync("research_slow_echo", {"text": "x"})
    finally:
        registry.close()


def test_a_broken_toolset_is_a_status_not_a_crash(tmp_path: Path) -> None:
    registry = make_registry(tmp_path, {"gone": {"module": "no_such_package_xyz:tools"}})
    try:
        status = {s.name: s for s in registry.sources()}
        assert "no_such_package_xyz" in str(status["toolset:gone"].error)
        assert registry.get("read") is not None
    finally:
        registry.close()


def test_disabled_builtin_toolset_is_gone(tmp_path: Path) -> None:
    registry = make_registry(tmp_path, {"web": {"enabled": False}, "files": {"tools": ["read"]}})
    try:
        names = {t.name for t in registry.list(source="builtin")}
        assert "web_fetch" not in names and "write" not in names
        assert {"read", "bash", "tool_search"} <= names
    finally:
        registry.close()


def test_shell_argument_rule_pre_approves_git(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    rules = [{"prefix": "ls ", "action": "pre_approved"}]
    registry = make_registry(tmp_path, {"shell": {"approval": {"bash": {"rules": rules}}}})
    try:
        assert registry.call_sync("bash", {"command": "ls f.txt"}).value["exit_code"] == 0
        with pytest.raises(ApprovalRequired):
            registry.call_sync("bash", {"command": "ls f.txt; rm f.txt"})
        with pytest.raises(ApprovalRequired):
            registry.call_sync("bash", {"command": "cat f.txt"})
    finally:
        registry.close()


def test_nex_yaml_mode_prompt_asks_above_read_only(tmp_path: Path) -> None:
    registry = make_registry(tmp_path, {}, mode="prompt")
    try:
        assert registry.policy.mode == "prompt"
        assert registry.call_sync("ls", {"path": "."}).ok  # read-only still runs
        with pytest.raises(ApprovalRequired, match="'write'"):
            registry.call_sync("write", {"path": "x.txt", "content": "x"})
        registry.policy.mode = "allow"
        assert registry.call_sync("bash", {"command": "true"}).value["exit_code"] == 0
    finally:
        registry.close()


def test_a_librarys_adapter_is_imported_only_when_one_of_its_tools_is_met(tmp_path: Path) -> None:
    import subprocess

    code = (
        "import sys\n"
        "from nexus_jupyter import Registry\n"
        f"reg = Registry.default(root={str(tmp_path)!r}, watch=False, mcp=False, search='keyword',\n"
        f"    config={{'audit': False, 'toolsets': {{'p': {{'module': '{FIXTURES}.plain'}}}}}})\n"
        "assert reg.get('add') is not None\n"
        "reg.close()\n"
        "libs = ('langchain_core', 'pydantic_ai', 'smolagents', 'agents')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in libs))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_switching_off_an_advertised_toolset_is_fine_and_a_misspelt_switch_is_said(
    tmp_path: Path,
) -> None:
    """A review finding: `web3: {enabled: false}` for a toolset an installed package
    advertises read as a misspelt 'web' (disabled advertised toolsets are never loaded)."""
    from nexus_jupyter.core.toolsets.overview import settings_problems

    (tmp_path / "nex.yaml").write_text(
        "toolsets: {web3: {enabled: false}, webb: {enabled: false}}\n"
    )
    reg = Registry.default(root=tmp_path, watch=False, mcp=False, search="keyword")
    try:
        reg.advertised_toolsets = frozenset({"web3"})  # what an installed package gives
        assert settings_problems(reg) == [
            "toolsets.webb: No toolset 'webb' to switch off: it is not built in, and no "
            "installed package advertises it. Did you mean 'web'? ('web' is still on.)"
        ]
    finally:
        reg.close()
