"""Tools declared under ``tools:`` in nex.yaml: real scripts and commands in temporary
projects, run from another working directory; python references; MCP references against a
real ``mcp-server-time``; validation errors; precedence of levels; ``find_tools``."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import ConfigError, ToolValidationError
from tests.waiting import wait_until

VENV_BIN = Path(sys.executable).parent

BUILD_SH = """#!/bin/bash
printf '%s\\n' "$@" > "$(dirname "$0")/../argv.txt"
echo "built in $(pwd)"
echo "warning: demo" >&2
exit 3
"""

ECHO_PY = """import json, sys
data = json.load(sys.stdin)
print(json.dumps({"got": data}))
"""

SLEEPER_SH = """#!/bin/bash
sleep 30 &
echo $! > "$(dirname "$0")/child.pid"
wait
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "build.sh").write_text(BUILD_SH)
    (root / "scripts" / "echo.py").write_text(ECHO_PY)
    (root / "scripts" / "sleeper.sh").write_text(SLEEPER_SH)
    (root / "scripts" / "sleeper.sh").chmod(0o755)
    (root / "projtools.py").write_text(
        "def shout(text: str) -> str:\n    'Upper-case the text.'\n    return text.upper()\n"
    )
    (root / "nex.yaml").write_text(
        """version: 1
search: {mode: keyword}
tools:
  - id: build
    description: Build one target.
    source: {type: script, path: scripts/build.sh,
             args: ["--target", "{target}", "{files}", "{verbose}", "--jobs", "{jobs}"]}
    parameters:
      type: object
      properties:
        target: {type: string}
        files: {type: array, items: {type: string}}
        verbose: {type: boolean}
        jobs: {type: integer}
      required: [target]
    categories: [build]
    capabilities: [compile]
    permission: workspace_write
  - id: echo_json
    source: {type: script, path: scripts/echo.py, stdin: json}
    parameters: {type: object, properties: {n: {type: integer}}}
    permission: read_only
  - id: sleeper
    source: {type: cli, command: ./scripts/sleeper.sh, timeout: 1}
    permission: read_only
  - id: shout
    title: Shout
    source: {type: python, module: "projtools:shout"}
    capabilities: [text]
  - id: gone
    source: {type: cli, command: no-such-program-4711}
    capabilities: [compile]
    install: {command: "true", docs: "https://example.org/gone"}
"""
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # paths must resolve against the project, not the cwd
    return root


@pytest.fixture
def reg(project: Path) -> Registry:
    registry = Registry.default(root=project, watch=False, builtins=False)
    wait_until(registry, lambda: "checks" in _manifest(registry).details)
    yield registry
    registry.close()


def _manifest(reg: Registry) -> object:
    return next(s for s in reg.sources() if s.name == "manifest")


@contextlib.contextmanager
def _project(root: Path, nex_yaml: str) -> Iterator[Registry]:
    """The registry of a project whose nex.yaml is ``nex_yaml``, once its checks have run."""
    (root / "nex.yaml").write_text(nex_yaml)
    registry = Registry.default(root=root, watch=False, builtins=False)
    try:
        wait_until(registry, lambda: "checks" in _manifest(registry).details)
        yield registry
    finally:
        registry.close()


def test_script_gets_the_argv_the_template_makes_from_any_cwd(reg: Registry, project: Path) -> None:
    result = reg.call_sync(
        "build", {"target": "web", "files": ["a.c", "b c.c"], "verbose": True}, approved=True
    )
    assert result.ok, result.error
    assert result.structured["exit_code"] == 3
    assert result.structured["stdout"] == f"built in {project}\n"
    assert result.structured["stderr"] == "warning: demo\n"
    argv = (project / "argv.txt").read_text().splitlines()
    assert argv == ["--target", "web", "a.c", "b c.c", "--verbose"]  # no --jobs: not given
    reg.call_sync("build", {"target": "x", "verbose": False, "jobs": 4}, approved=True)
    assert (project / "argv.txt").read_text().splitlines() == ["--target", "x", "--jobs", "4"]


def test_arguments_as_json_on_stdin(reg: Registry) -> None:
    result = reg.call_sync("echo_json", {"n": 7})
    assert json.loads(result.structured["stdout"]) == {"got": {"n": 7}}


def test_timeout_kills_the_whole_process_group(reg: Registry, project: Path) -> None:
    started = time.monotonic()
    result = reg.call_sync("sleeper", {})
    assert result.is_error and "process group was killed" in str(result.error)
    assert time.monotonic() - started < 10
    child = int((project / "scripts" / "child.pid").read_text())
    _poll(lambda: not _alive(child), 5)
    assert not _alive(child), "the script's child survived the timeout"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and ") Z " not in stat.read_text()  # a zombie is dead


def test_python_reference_and_metadata(reg: Registry) -> None:
    assert reg.call_sync("shout", {"text": "hi"}).structured == "HI"
    assert reg.get("shout").spec.display == {"title": "Shout"}
    assert reg.get("shout").spec.capabilities == ("text",)
    spec = reg.get("build").spec
    assert spec.categories == ("build",) and spec.capabilities == ("compile",)
    assert spec.source == "manifest"


def test_missing_program_is_unavailable_with_reason_and_install_hint(reg: Registry) -> None:
    entry = reg.entry("gone")
    assert entry.status == "unavailable"
    assert "'no-such-program-4711' is not installed" in (entry.reason or "")
    assert "nexus-tools install gone" in (entry.reason or "")
    assert (entry.reason or "").endswith("see https://example.org/gone")


def test_find_tools_best_first(reg: Registry) -> None:
    found = [e.name for e in reg.find_tools(capabilities=["compile"])]
    assert found == ["build", "gone"]  # the available one first
    assert [e.name for e in reg.find_tools(capabilities="compile", available_only=True)] == [
        "build"
    ]
    assert [e.name for e in reg.find_tools(categories=["build"])] == ["build"]
    assert reg.find_tools(capabilities=["compile", "text"]) == []


def test_project_overrides_user_entry_by_id(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "nex.yaml").write_text(
        "tools:\n"
        "  - {id: build, description: user build, source: {type: cli, command: 'true'}}\n"
        "  - {id: user_only, source: {type: cli, command: 'true'}}\n"
    )
    monkeypatch.setenv("NEXUS_HOME", str(home))
    from nexus_jupyter.core.config.loading import load_settings

    settings = load_settings(project)
    tools = {t.id: t for t in settings.tools}
    assert tools["build"].description == "Build one target."  # the project wins
    assert tools["user_only"].declared_in == str(home / "nex.yaml")
    assert tools["build"].declared_in == str(project / "nex.yaml")
    runtime = {"tools": [{"id": "build", "source": {"type": "cli", "command": "make"}}]}
    tools = {t.id: t for t in load_settings(project, runtime=runtime).tools}
    assert tools["build"].source.command == "make"  # runtime settings win over both files
    assert tools["build"].declared_in is None and "user_only" in tools


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "tools:\n  - id: x\n    sourc: {type: cli, command: ls}\n",
            "line 3: unknown key 'tools[0].sourc'",
        ),
        (
            "tools:\n  - id: x\n    source: {type: cli}\n",
            "line 3: key 'tools[0].source.command': Field required",
        ),
        ("version: 9\n", "understands versions up to 1"),
        (  # a key under a named entry (a mapping of models) still gets its suggestion
            "toolsets:\n  research:\n    module: x\n    aproval: {}\n",
            "line 4: unknown key 'toolsets.research.aproval'. Did you mean 'approval'?",
        ),
        (
            "tools:\n  - id: x\n    source: {type: python, module: nocolon}\n",
            "must look like 'package.module:attribute'",
        ),
    ],
)
def test_errors_name_file_line_and_key(tmp_path: Path, text: str, expected: str) -> None:
    from nexus_jupyter.core.config.loading import load_settings

    (tmp_path / "nex.yaml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, user=False)
    assert str(tmp_path / "nex.yaml") in str(info.value)
    assert expected in str(info.value)


def test_mcp_reference_forwards_to_a_real_server(tmp_path: Path) -> None:
    text = (
        "search: {mode: keyword}\n"
        f"mcp: {{servers: [{{name: time, command: '{VENV_BIN / 'mcp-server-time'}'}}]}}\n"
        "tools:\n"
        "  - id: now\n"
        "    description: The time now, anywhere.\n"
        "    source: {type: mcp, server: time, tool: get_current_time}\n"
        "    capabilities: [clock]\n"
    )
    with _project(tmp_path, text) as reg:
        manifest = _manifest(reg).source
        wait_until(reg, lambda: "now" in manifest.last_check, timeout=60)
        wait_until(reg, lambda: manifest.last_check["now"] is None, timeout=60)
        result = reg.call_sync("now", {"timezone": "UTC"})
        assert result.ok, result.error
        assert "UTC" in result.text
        # A bad call is refused in the declared tool's own name, and counted as refused.
        with pytest.raises(ToolValidationError) as refused:
            reg.call_sync("now", {})
        assert refused.value.tool == "now"
        assert [e.path for e in refused.value.errors] == ["$.timezone"]
        assert (reg.stats()["now"].refused, reg.stats()["now"].errors) == (1, 0)
        from nexus_jupyter.sources.maintenance import check_tools

        assert check_tools(reg, ["now"])[0]["available"] is True
        assert reg.get("now").spec.input_schema["properties"]["timezone"]
        best = reg.find_tools(capabilities=["clock"], prefer_source="manifest")
        assert [e.name for e in best] == ["now"]


def test_auto_install_on_first_call_only_when_someone_confirms(tmp_path: Path) -> None:
    from nexus_jupyter.core.errors import ToolUnavailable
    from nexus_jupyter.core.tools.context import REST_CALLER, RequestInfo

    text = (
        "search: {mode: keyword}\n"
        "settings: {auto_install: true}\n"
        "tools:\n"
        "  - id: hello\n"
        "    permission: read_only\n"
        "    install:\n"
        "      command: mkdir -p bin && printf '#!/bin/sh\\necho hi $1\\n' > bin/hello"
        " && chmod +x bin/hello\n"
        "    source: {type: cli, command: ./bin/hello, args: ['{who}']}\n"
    )
    with _project(tmp_path, text) as reg:
        assert reg.entry("hello").status == "unavailable"
        remote = RequestInfo(caller=REST_CALLER)
        with pytest.raises(ToolUnavailable, match="nexus-tools install hello"):
            reg.call_sync("hello", {"who": "x"}, request=remote)  # no one to confirm
        assert not (tmp_path / "bin").exists()
        result = reg.call_sync("hello", {"who": "ada"}, approved=True)
        assert result.ok, result.error
        assert result.structured["stdout"] == "hi ada\n"
        assert reg.entry("hello").status == "ok"


async def test_cancelling_a_call_kills_the_process_group(reg: Registry, project: Path) -> None:
    import asyncio

    from nexus_jupyter.core.tools.context import CancellationToken

    token = CancellationToken()
    pid_file = project / "scripts" / "child.pid"
    call = asyncio.ensure_future(reg.call("sleeper", {}, cancellation=token, timeout=20))
    await asyncio.to_thread(_poll, pid_file.exists, 10)  # the script has started its child
    child = int(pid_file.read_text())
    token.cancel()
    result = await call
    assert result.is_error and result.error_type == "CancelledError"
    await asyncio.to_thread(_poll, lambda: not _alive(child), 5)
    assert not _alive(child), "the script's child survived the cancellation"


def _poll(check: Callable[[], bool], limit: float) -> None:
    """Re-check a process's state (no event to wait on) until ``check()`` or ``limit`` s."""
    deadline = time.monotonic() + limit
    while not check() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_mcp_reference_to_a_dead_server_says_so(tmp_path: Path) -> None:
    text = (
        "search: {mode: keyword}\n"
        "mcp: {servers: [{name: gone, command: /nonexistent/mcp-server}]}\n"
        "tools:\n"
        "  - {id: fetch, source: {type: mcp, server: gone, tool: fetch}}\n"
        "  - {id: other, source: {type: mcp, server: unconfigured, tool: x}}\n"
    )
    with _project(tmp_path, text) as reg:
        manifest = _manifest(reg).source
        wait_until(reg, lambda: "is down" in (manifest.last_check.get("fetch") or ""))
        assert "MCP server 'gone' is down" in (reg.entry("fetch").reason or "")
        assert "not configured (add it under mcp.servers)" in (reg.entry("other").reason or "")


def test_a_declared_skill_brings_the_scripts_it_declares(tmp_path: Path) -> None:
    skill = tmp_path / "vendor" / "release"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release\ndescription: Cut a release.\n"
        "scripts:\n  - {name: tag, path: scripts/tag.sh, args: ['{version}'],\n"
        "     parameters: {type: object, properties: {version: {type: string}}}}\n---\n"
        "Tag the release, then announce it.\n"
    )
    (skill / "scripts" / "tag.sh").write_text('#!/bin/bash\necho "tagged $1 in $(pwd)"\n')
    text = (
        "search: {mode: keyword}\n"
        "tools:\n  - {id: ship, source: {type: skill, path: vendor/release}}\n"
    )
    with _project(tmp_path, text) as reg:
        assert reg.call_sync("ship", {}).value["instructions"].startswith("Tag the release")
        result = reg.call_sync("ship__tag", {"version": "1.2"}, approved=True)
        assert result.ok, result.error
        assert result.value["stdout"] == f"tagged 1.2 in {skill.resolve()}\n"


def test_find_tools_prefers_the_named_source(tmp_path: Path) -> None:
    text = (
        "search: {mode: keyword}\n"
        "cli_tools:\n  - {name: hello_cli, command: 'true', capabilities: [greeting]}\n"
        "tools:\n"
        "  - {id: hello, source: {type: cli, command: 'true'}, capabilities: [greeting]}\n"
        "  - {id: hello_all, source: {type: cli, command: 'true'},\n"
        "     capabilities: [greeting, farewell]}\n"
    )
    with _project(tmp_path, text) as reg:
        wait_until(reg, lambda: reg.find("hello_cli") is not None)

        def best(prefer: str | list[str] | None) -> list[str]:
            return [e.name for e in reg.find_tools(capabilities="greeting", prefer_source=prefer)]

        assert best(None) == ["hello", "hello_cli", "hello_all"]  # the specific ones first
        assert best("config:cli_tools") == ["hello_cli", "hello", "hello_all"]
        assert best("manifest") == ["hello", "hello_all", "hello_cli"]
        assert best(["skill", "config:cli_tools"]) == ["hello_cli", "hello", "hello_all"]


def test_an_executable_script_runs_with_the_interpreter_it_names(tmp_path: Path) -> None:
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    body = 'echo "$0 ${BASH_VERSION:-not bash}"\n'
    (scripts / "own.sh").write_text("#!/bin/sh\n" + body)  # executable: its #! decides
    (scripts / "own.sh").chmod(0o755)
    (scripts / "plain.sh").write_text(body)  # not executable, no #!: bash runs it
    text = (
        "search: {mode: keyword}\n"
        "tools:\n"
        "  - {id: own, source: {type: script, path: scripts/own.sh}, availability: always}\n"
        "  - {id: plain, source: {type: script, path: scripts/plain.sh}, availability: always}\n"
    )
    with _project(tmp_path, text) as reg:
        own = reg.call_sync("own", {}, approved=True).value["stdout"]
        assert own == f"{scripts / 'own.sh'} not bash\n"
        plain = reg.call_sync("plain", {}, approved=True).value["stdout"]
        assert plain.startswith(str(scripts / "plain.sh")) and "not bash" not in plain


def test_a_missing_program_is_told_to_an_agent_as_a_whole_request() -> None:
    """Over MCP the reason names who can fix it and what to ask of them, in a sentence that
    ends; for everyone else it keeps the fix, without a final period (the face ends the
    sentence: "Tool 'gh2' cannot run now: ...")."""
    from nexus_jupyter.core.config.model import CliToolSettings
    from nexus_jupyter.core.registry.reasons import reason_for
    from nexus_jupyter.core.tools.context import MCP_CALLER, NOTEBOOK_CALLER
    from nexus_jupyter.sources.cli_tools import check_cli_tool

    reason = check_cli_tool(CliToolSettings(name="gh2", command="nosuch-gh-4711"))
    agent = reason_for(reason, MCP_CALLER) or ""
    assert agent.startswith("'nosuch-gh-4711' is not installed (not on PATH) where this server")
    assert agent.endswith("ask the user to set up this tool"), agent
    operator = reason_for(reason, NOTEBOOK_CALLER) or ""
    assert "Install it, or correct the command of 'gh2'" in operator
    assert not operator.endswith("."), operator
