"""``nexus-tools`` as a real subprocess: output, exit codes, one-line errors, credentials."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).parent / "nexus-tools")
CANARY = "cli-canary-Hk27Pq-secret"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "hello.txt").write_text("hello from the workspace\n")
    # keyword search: no embedding model to load in every subprocess
    (tmp_path / "ws" / "nex.yaml").write_text("search: {mode: keyword}\n")
    out = {k: v for k, v in os.environ.items() if not k.startswith("NEXUS_CRED_")}
    out["NEXUS_HOME"] = str(home)
    return out


def run(
    env: dict[str, str], tmp: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--root", str(tmp / "ws"), "--wait", "5", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nexus-tools: error: "), proc.stderr
    return lines[0]


def test_list_search_info(env: dict[str, str], tmp_path: Path) -> None:
    listed = run(env, tmp_path, "--json", "list")
    assert listed.returncode == 0, listed.stderr
    names = {row["name"] for row in json.loads(listed.stdout)}
    assert {"read", "write", "edit", "bash", "grep", "glob", "ls", "tool_search"} <= names
    text = run(env, tmp_path, "list", "--permission", "danger_full_access")
    assert text.returncode == 0 and "bash" in text.stdout and "read " not in text.stdout
    found = run(env, tmp_path, "--json", "search", "run a shell command", "--limit", "2")
    assert json.loads(found.stdout)[0]["name"] == "bash"
    assert "searched for" not in found.stderr
    typo = run(env, tmp_path, "search", "run a shell commnad", "--limit", "2")
    assert typo.stdout.splitlines()[1].split()[0] == "bash"  # under the header
    assert "searched for: run a shell command" in typo.stderr
    missing = run(env, tmp_path, "search", "create a Zendesk ticket")
    assert missing.returncode == 0 and missing.stdout == ""
    assert "no installed tool works with Zendesk" in missing.stderr
    # a hit that cannot run now says so, as `list` does (a new user's trial)
    web = run(env, tmp_path, "search", "search the web", "--limit", "1")
    assert web.stdout.splitlines()[1].split()[0] == "web_search"
    assert "[unavailable: web_search has no search provider configured" in web.stdout
    web_json = run(env, tmp_path, "--json", "search", "search the web", "--limit", "1")
    assert json.loads(web_json.stdout)[0]["status"] == "unavailable"
    info = run(env, tmp_path, "--json", "info", "read")
    assert json.loads(info.stdout)["input_schema"]["required"] == ["path"]


def test_call_json_and_key_value(env: dict[str, str], tmp_path: Path) -> None:
    by_kv = run(env, tmp_path, "call", "read", "path=hello.txt")
    assert by_kv.returncode == 0 and "hello from the workspace" in by_kv.stdout
    by_json = run(
        env, tmp_path, "--json", "call", "grep", '{"pattern": "hello", "output_mode": "count"}'
    )
    assert json.loads(by_json.stdout)["structured"] == {"hello.txt": 1}


def test_call_says_what_it_did_on_stderr_and_in_the_audit_log(
    env: dict[str, str], tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    (tmp_path / "ws" / "nex.yaml").write_text(f"search: {{mode: keyword}}\naudit: {audit}\n")
    done = run(env, tmp_path, "call", "read", "path=hello.txt")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "> Reading hello.txt\n"  # stdout stays the result alone
    assert json.loads(audit.read_text().splitlines()[-1])["summary"] == "Reading hello.txt"


def test_exit_codes_and_one_line_errors(env: dict[str, str], tmp_path: Path) -> None:
    unknown = run(env, tmp_path, "call", "raed", "path=x")
    assert unknown.returncode == 2 and "Did you mean 'read'" in one_line_error(unknown)
    nothing_close = run(env, tmp_path, "call", "zzzzqqq")
    assert "nexus-tools list" in one_line_error(nothing_close)
    assert "%tool" not in nothing_close.stderr
    bad_json = run(env, tmp_path, "call", "read", "{nope")
    assert bad_json.returncode == 2 and "not valid JSON" in one_line_error(bad_json)
    invalid = run(env, tmp_path, "call", "read", "path=hello.txt", "offset=first")
    assert invalid.returncode == 2 and "$.offset" in one_line_error(invalid)
    failing = run(env, tmp_path, "call", "read", "path=missing.txt")
    assert failing.returncode == 1 and "FileNotFoundError" in one_line_error(failing)
    outside = run(env, tmp_path, "call", "write", "path=../escape.txt", "content=x")
    assert outside.returncode == 1 and "outside the workspace" in one_line_error(outside)
    assert not (tmp_path / "escape.txt").exists()
    usage = run(env, tmp_path, "frobnicate")
    assert usage.returncode == 2


SLOW = """import asyncio

from nexus_jupyter import tool


@tool
async def slow() -> str:
    \"\"\"Wait a minute.\"\"\"
    print("slow: started", flush=True)
    await asyncio.sleep(60)
    return "done"
"""


def test_an_interrupted_call_json_still_answers_in_json(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Ctrl-C (SIGINT) during `call --json`: a JSON error object on stdout, like every
    other error of `call --json`, the one line on stderr, and exit code 130."""
    dynamic = tmp_path / "ws" / "tools" / "dynamic"
    dynamic.mkdir(parents=True)
    (dynamic / "slow.py").write_text(SLOW)
    proc = subprocess.Popen(
        [EXE, "--root", str(tmp_path / "ws"), "--json", "call", "slow"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    guard = threading.Timer(60, proc.kill)
    guard.start()
    try:
        said = [proc.stderr.readline()]
        while said[-1] and "slow: started" not in said[-1]:  # the call is running
            said.append(proc.stderr.readline())
        assert "slow: started" in said[-1], said
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        guard.cancel()
    assert proc.returncode == 130, (out, err)
    answer = json.loads(out)
    assert answer["is_error"] is True and answer["tool"] == "slow"
    assert answer["error"] == "interrupted" and answer["error_type"] == "KeyboardInterrupt"
    assert err.strip().splitlines()[-1] == "nexus-tools: error: interrupted"


def test_a_sync_tool_that_does_not_await_its_credential_is_told_how(
    env: dict[str, str], tmp_path: Path
) -> None:
    dynamic = tmp_path / "ws" / "tools" / "dynamic"
    dynamic.mkdir(parents=True)
    (dynamic / "bearer.py").write_text(
        "from nexus_jupyter import ToolContext, tool\n\n\n"
        "@tool\ndef bearer(*, ctx: ToolContext) -> str:\n"
        '    """The Authorization header."""\n'
        '    return "Bearer " + ctx.credentials.get("svc", "token")\n'
    )
    failed = run({**env, "NEXUS_CRED_SVC_TOKEN": CANARY}, tmp_path, "call", "bearer")
    assert failed.returncode == 1, failed.stderr
    line = one_line_error(failed)
    assert "CredentialNotAwaited: ctx.credentials.get('svc', 'token') was not awaited" in line
    assert "`ctx.credentials.get_sync('svc', 'token')`" in line and "coroutine" not in line


def test_dangerous_call_needs_yes_without_a_tty(env: dict[str, str], tmp_path: Path) -> None:
    refused = run(env, tmp_path, "call", "bash", "command=echo hi")
    assert refused.returncode == 1 and "--yes" in one_line_error(refused)
    approved = run(env, tmp_path, "--json", "call", "bash", "command=echo hi", "--yes")
    assert (
        approved.returncode == 0 and json.loads(approved.stdout)["structured"]["stdout"] == "hi\n"
    )
    audit = (Path(env["NEXUS_HOME"]) / "audit.jsonl").read_text().splitlines()
    decisions = [json.loads(line)["decision"] for line in audit if '"bash"' in line]
    assert decisions == ["ask-denied", "allow"]


def test_check_shows_cli_tool_availability(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "ws" / "nex.yaml").write_text(
        "search: {mode: keyword}\ncli_tools:\n"
        f"  - {{name: py, command: {sys.executable}, check: '{sys.executable} --version'}}\n"
        "  - {name: ghost, command: ghost-cli-not-here, install_hint: 'apt install ghost'}\n"
        "  - {name: broken, command: 'true', check: 'false'}\n"
    )
    report = run(env, tmp_path, "--json", "check")
    assert report.returncode == 0, report.stderr
    tools = {t["name"]: t for t in json.loads(report.stdout)["tools"]}
    assert tools["py"]["status"] == "ok"
    assert (
        tools["ghost"]["status"] == "unavailable"
        and "apt install ghost" in tools["ghost"]["reason"]
    )
    assert "check 'false' failed (exit 1)" in tools["broken"]["reason"]
    text = run(env, tmp_path, "check")
    assert (
        "ghost" in text.stdout and "unavailable" in text.stdout and "tools available" in text.stdout
    )


def test_bad_config_is_one_line_with_file_and_line(env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "other.yaml"
    config.write_text("tools_dir: x\ngrnt: read_only\n")
    proc = run(env, tmp_path, "--config", str(config), "list")
    assert proc.returncode == 1
    line = one_line_error(proc)
    assert f"{config}, line 2" in line and "Did you mean 'grant'" in line


def test_credentials_set_list_delete_never_print_the_value(
    env: dict[str, str], tmp_path: Path
) -> None:
    stored = run(env, tmp_path, "credentials", "set", "weather", "api_key", stdin=CANARY + "\n")
    assert stored.returncode == 0, stored.stderr
    path = Path(env["NEXUS_HOME"]) / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and CANARY in path.read_text()
    listed = run(env, tmp_path, "--json", "credentials", "list")
    assert json.loads(listed.stdout) == [
        {"service": "weather", "key": "api_key", "provider": "file"}
    ]
    checked = run(env, tmp_path, "--json", "check")
    assert json.loads(checked.stdout)["credentials"] == {"weather": ["api_key"]}
    for proc in (stored, listed, checked):
        assert CANARY not in proc.stdout + proc.stderr
    gone = run(env, tmp_path, "credentials", "delete", "weather")
    assert gone.returncode == 0
    again = run(env, tmp_path, "credentials", "delete", "weather")
    assert again.returncode == 2 and "No stored credential" in one_line_error(again)


def test_check_and_call_through_a_real_mcp_server(env: dict[str, str], tmp_path: Path) -> None:
    server = Path(sys.executable).parent / "mcp-server-time"
    (tmp_path / "ws" / "nex.yaml").write_text(
        "search: {mode: keyword}\nmcp:\n  servers:\n"
        f"    - {{name: time, command: '{server}'}}\n"
        "    - {name: dead, command: /nonexistent/mcp-server}\n"
        "    - {name: needs_key, url: 'http://127.0.0.1:9/mcp', "
        "headers: {Authorization: 'Bearer ${credentials:nokey/token}'}}\n"
    )
    report = run(env, tmp_path, "--wait", "60", "--json", "check")
    assert report.returncode == 1, report.stderr  # the dead server is a broken source
    data = json.loads(report.stdout)
    sources = {s["name"]: s for s in data["sources"]}
    assert sources["mcp:time"]["status"] == "ok" and sources["mcp:time"]["tools"] >= 1
    assert sources["mcp:dead"]["status"] == "error"
    assert "nexus-tools credentials set nokey token" in (sources["mcp:needs_key"]["error"] or "")
    tools = {t["name"]: t for t in data["tools"]}
    assert tools["mcp__time__get_current_time"]["status"] == "ok"
    called = run(
        env,
        tmp_path,
        "--wait",
        "60",
        "--json",
        "call",
        "mcp__time__get_current_time",
        "timezone=UTC",
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structured"]["timezone"] == "UTC"


def test_check_counts_a_server_that_never_answers_as_broken(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A stdio server that starts but never answers ``initialize`` is still connecting when
    ``--wait`` runs out: ``check`` must not call it healthy."""
    (tmp_path / "ws" / "nex.yaml").write_text(
        "search: {mode: keyword}\nmcp:\n  servers:\n"
        f"    - {{name: mute, command: '{sys.executable}', args: ['-c', 'import time; "
        "time.sleep(120)']}\n"
    )
    report = run(env, tmp_path, "--wait", "1", "--json", "check")
    assert report.returncode == 1, report.stdout
    mute = next(s for s in json.loads(report.stdout)["sources"] if s["name"] == "mcp:mute")
    assert mute["status"] == "error"
    assert "did not answer within 1 s (still connecting)" in mute["error"]
    assert "--wait" in mute["error"]
    listed = run(env, tmp_path, "--wait", "1", "list", "--source", "mcp:mute")
    assert listed.returncode == 1  # the listing asked for its tools, and they are missing
    assert "source mcp:mute: the server did not answer within 1 s" in listed.stderr


def test_global_flags_go_before_or_after_the_command(env: dict[str, str], tmp_path: Path) -> None:
    after = run(env, tmp_path, "list", "--json")
    assert after.returncode == 0, after.stderr
    before = run(env, tmp_path, "--json", "list")
    assert json.loads(after.stdout) == json.loads(before.stdout)
    # --root after the command wins over the one `run` puts first
    other = tmp_path / "other"
    other.mkdir()
    (other / "nex.yaml").write_text("search: {mode: keyword}\n")
    (other / "only-here.txt").write_text("from the other root\n")
    called = run(env, tmp_path, "call", "read", "path=only-here.txt", "--root", str(other))
    assert called.returncode == 0 and "from the other root" in called.stdout, called.stderr


def test_a_mistyped_command_gets_the_closest_one(env: dict[str, str], tmp_path: Path) -> None:
    typo = run(env, tmp_path, "lst")
    assert typo.returncode == 2
    line = one_line_error(typo)
    assert "unknown command 'lst'" in line and "Did you mean 'list'?" in line
    assert "invalid choice" not in line
    nothing_close = run(env, tmp_path, "zzzz")
    assert "Did you mean" not in one_line_error(nothing_close)


def test_call_prints_content_when_there_is_no_structured_value(
    env: dict[str, str], tmp_path: Path
) -> None:
    peer = Path(__file__).resolve().parent / "mcp_peers" / "peer_server.py"
    (tmp_path / "ws" / "nex.yaml").write_text(
        "search: {mode: keyword}\nmcp:\n  servers:\n"
        f"    - {{name: peer, command: '{sys.executable}', args: ['{peer}']}}\n"
    )
    dynamic = tmp_path / "ws" / "tools" / "dynamic"
    dynamic.mkdir(parents=True)
    (dynamic / "picture.py").write_text(
        "from nexus_jupyter import Image, tool\n\n\n"
        "@tool\ndef picture() -> Image:\n"
        '    """A tiny picture."""\n'
        "    return Image(b'\\x89PNG' + bytes(2044))\n"
    )
    # the peer's tools declare no annotations, so they ask (MCP's default: may be destructive)
    echoed = run(
        env, tmp_path, "--wait", "60", "call", "--yes", "mcp__peer__say", "text=two\nlines"
    )
    assert echoed.returncode == 0, echoed.stderr
    assert echoed.stderr == "> mcp__peer__say(text='two\\nlines')\n"
    assert echoed.stdout == "two\nlines\n"
    pictured = run(env, tmp_path, "call", "picture")
    assert pictured.returncode == 0, pictured.stderr
    assert pictured.stdout == "[image: image/png, 2.0 KiB]\n"


def test_toolsets_command_lists_builtin_and_configured_toolsets(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "ws" / "nex.yaml").write_text(
        "search: {mode: keyword}\n"
        "toolsets:\n  web: {enabled: false}\n  broken: {module: 'no_such_module_xyz:tools'}\n"
    )
    shown = run(env, tmp_path, "toolsets")
    assert shown.returncode == 1  # the broken toolset is an error
    lines = shown.stdout.splitlines()
    assert any(
        line.startswith("files") and "edit, glob, grep, ls, read, write" in line for line in lines
    )
    assert any(line.startswith("web") and " off " in line for line in lines)
    assert "no_such_module_xyz" in shown.stdout
    assert any(line.split()[:3] == ["broken", "on", "no_such_module_xyz:tools"] for line in lines)
    unknown = run(env, tmp_path, "toolsets", "nope")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert "no toolset 'nope'; toolsets: broken, files" in unknown.stderr
    data = json.loads(run(env, tmp_path, "--json", "toolsets", "shell").stdout)
    assert data == [
        {
            "toolset": "shell",
            "enabled": True,
            "origin": "builtin",
            "tools": ["bash"],
            "prefix": "",
            "approval": "by permission",
            "ceiling": None,
            "error": None,
        }
    ]


def test_an_mcp_server_whose_command_is_missing_says_what_to_change(
    env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "ws" / "nex.yaml").write_text(
        "search: {mode: keyword}\n"
        "mcp:\n  servers:\n    - {name: ghost, command: /no/such/mcp-server}\n"
    )
    listed = run(env, tmp_path, "list", "--source", "mcp:ghost")
    assert listed.returncode == 1  # the source asked for is broken
    assert (
        "source mcp:ghost: '/no/such/mcp-server' was not found when starting the server: install"
        " it, or correct this server's command (or cwd) where it was added (nex.yaml's"
        " mcp.servers;"
    ) in listed.stderr
    assert "Errno" not in listed.stderr and "reconnecting" not in listed.stderr  # it exits
    checked = run(env, tmp_path, "check")
    assert checked.returncode == 1
    assert "'/no/such/mcp-server' was not found" in checked.stdout
    assert "reconnecting" not in checked.stdout


def test_a_toolset_module_that_fails_to_import_is_said_once(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The registry's own log line and the command's report used to both say it."""
    ws = tmp_path / "ws"
    (ws / "raising_tools.py").write_text("raise RuntimeError('boom-4711 at import')\n")
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\ntoolsets:\n  raising: {module: 'raising_tools:tools'}\n"
    )
    listed = run(env, tmp_path, "list")
    said = [line for line in listed.stderr.splitlines() if "boom-4711" in line]
    assert said == [
        "nexus-tools: warning: source toolset:raising: SourceError: Cannot import "
        "'raising_tools' for toolset module 'raising_tools:tools': boom-4711 at import. "
        "Install the package or fix `module:` in nex.yaml."
    ]
    for command in ("check", "toolsets"):  # each shows it in its table, and only there
        shown = run(env, tmp_path, command)
        assert shown.returncode == 1
        assert shown.stdout.count("boom-4711") == 1, shown.stdout
        assert "boom-4711" not in shown.stderr, shown.stderr
    # a command with no report of its own still gets the registry's line, once
    searched = run(env, tmp_path, "search", "read")
    assert searched.stderr.count("boom-4711") == 1, searched.stderr


def test_call_takes_a_boolean_typed_as_a_word(env: dict[str, str], tmp_path: Path) -> None:
    """``case_insensitive=yes`` (or ``=1``, ``=True``) is true, as pydantic reads it; a word
    that is no boolean is refused with its field."""
    (tmp_path / "ws" / "shout.txt").write_text("HELLO\n")
    for word in ("yes", "1", "True"):
        found = run(
            env, tmp_path, "--json", "call", "grep", "pattern=hello", "output_mode=count",
            f"case_insensitive={word}",
        )  # fmt: skip
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["structured"] == {"hello.txt": 1, "shout.txt": 1}
    wrong = run(env, tmp_path, "call", "grep", "pattern=hello", "case_insensitive=maybe")
    assert wrong.returncode != 0
    assert '$.case_insensitive: expected a boolean (got "maybe")' in one_line_error(wrong)


def test_a_tools_folder_that_is_not_there_is_said(env: dict[str, str], tmp_path: Path) -> None:
    """A new user's trial: `tools_dir: nosuch` hid every tool file while `check` said all
    was well. A folder the settings name is a broken source; the default one, not made yet,
    is a note saying where tool files go."""
    ws = tmp_path / "ws"
    checked = run(env, tmp_path, "check")
    assert checked.returncode == 0, checked.stdout
    assert f"note: no tools folder yet: tool files saved in {ws / 'tools' / 'dynamic'}" in (
        checked.stdout
    )
    (ws / "nex.yaml").write_text("search: {mode: keyword}\ntools_dir: nosuch\n")
    checked = run(env, tmp_path, "check", "--json")
    assert checked.returncode == 1, checked.stdout
    folder = next(s for s in json.loads(checked.stdout)["sources"] if s["kind"] == "directory")
    assert folder["status"] == "error"
    assert folder["error"].startswith(f"the tools folder {ws / 'nosuch'} (tools_dir in nex.yaml)")
    listed = run(env, tmp_path, "list")
    assert listed.returncode == 0
    assert "nexus-tools: warning: the tools folder" in listed.stderr
    (ws / "nosuch").mkdir()
    assert run(env, tmp_path, "check").returncode == 0
