"""``nexus-tools`` as a new user meets it, as real subprocesses: what tools print stays off
stdout, ``key=value`` follows the tool's schema, ``--json`` keeps its notes and errors, and
mistakes on the command line (a missing root, an unknown source, a bad timeout, an install
that did not help, a name with nothing close) say what was wrong and what to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).parent / "nexus-tools")

NOISY = '''import subprocess
from nexus_jupyter import tool

print("IMPORT-TIME PRINT")


@tool
def noisy(n: int) -> int:
    """Print a line, start a program that prints one, then return n."""
    print("CALL-TIME PRINT")
    subprocess.run(["echo", "PROGRAM PRINT"], check=True)
    return n


@tool
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


@tool
def label(name: str | None = None, size: int | str = 1) -> dict:
    """The arguments as given, with their JSON types."""
    return {"name": name, "size": size}
'''

DECLARED = """search: {mode: keyword}
tools:
  - id: gh
    source: {type: cli, command: gh-not-installed-xyz}
    install: {command: "true"}
  - id: build
    source: {type: cli, command: 'true'}
    availability: conditional
    install: {check: "test -f built", command: "touch built"}
  - id: now
    source: {type: cli, command: date}
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    tools = tmp_path / "ws" / "tools" / "dynamic"
    tools.mkdir(parents=True)
    (tools / "noisy.py").write_text(NOISY)
    (tmp_path / "ws" / "nex.yaml").write_text("search: {mode: keyword}\n")
    out = {k: v for k, v in os.environ.items() if not k.startswith("NEXUS_CRED_")}
    out["NEXUS_HOME"] = str(tmp_path / "home")
    return out


def run(env: dict[str, str], tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--root", str(tmp / "ws"), "--wait", "5", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("nexus-tools: error: ")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.mark.parametrize("isolation", ["auto", "process"])
def test_what_tools_print_goes_to_stderr(
    env: dict[str, str], tmp_path: Path, isolation: str
) -> None:
    """At import and during a call, in this process (print and a program it starts) or in
    a worker process (nex.yaml's isolation: process): stdout stays the CLI's own output."""
    (tmp_path / "ws" / "nex.yaml").write_text(
        f"search: {{mode: keyword}}\nisolation: {isolation}\n"
    )
    listed = run(env, tmp_path, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "noisy" in {row["name"] for row in json.loads(listed.stdout)}
    assert "IMPORT-TIME PRINT" in listed.stderr
    called = run(env, tmp_path, "call", "noisy", "n=7", "--json")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structured"] == 7
    for line in ("IMPORT-TIME PRINT", "CALL-TIME PRINT", "PROGRAM PRINT"):
        assert line in called.stderr
    plain = run(env, tmp_path, "call", "noisy", "n=7")
    assert plain.stdout == "7\n", plain.stdout
    # the cases of `nexus-tools test` call tools too: its report stays the only output
    cases = tmp_path / "ws" / "tools" / "dynamic" / "noisy.tests.yaml"
    cases.write_text("- tool: noisy\n  arguments: {n: 3}\n  expect: 3\n")
    tested = run(env, tmp_path, "test", "noisy", "--json")
    assert tested.returncode == 0, tested.stderr
    assert json.loads(tested.stdout)["outcomes"][0]["state"] == "passed"
    assert "CALL-TIME PRINT" in tested.stderr and "PROGRAM PRINT" in tested.stderr


def test_key_value_follows_the_schema(env: dict[str, str], tmp_path: Path) -> None:
    written = run(env, tmp_path, "call", "write", "path=n.txt", "content=42")
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "ws" / "n.txt").read_text() == "42"
    shouted = run(env, tmp_path, "call", "shout", "text=true")
    assert shouted.returncode == 0 and shouted.stdout == "TRUE\n", shouted.stderr
    as_typed = run(env, tmp_path, "call", "shout", 'text="quoted"')
    assert as_typed.stdout == '"QUOTED"\n', as_typed.stderr
    # str | None: a number typed is the text, null is null; int | str: a number is a number
    mixed = run(env, tmp_path, "--json", "call", "label", "name=42", "size=2")
    assert json.loads(mixed.stdout)["structured"] == {"name": "42", "size": 2}
    unset = run(env, tmp_path, "--json", "call", "label", "name=null", "size=big")
    assert json.loads(unset.stdout)["structured"] == {"name": None, "size": "big"}
    # a non-string parameter still reads JSON, and the error shows the value as JSON
    wrong = run(env, tmp_path, "call", "noisy", "n=true")
    assert wrong.returncode == 2
    line = error_line(wrong)
    assert "$.n: expected an integer (got true)" in line and "True" not in line
    assert "nexus-tools info noisy" in line


def test_search_json_keeps_its_notes_on_stderr(env: dict[str, str], tmp_path: Path) -> None:
    found = run(env, tmp_path, "--json", "search", "post to Slakc channel")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout) == []
    assert "searched for: post to Slack channel" in found.stderr
    assert "no installed tool works with Slack" in found.stderr


def test_search_says_when_the_list_is_cut(env: dict[str, str], tmp_path: Path) -> None:
    every = run(env, tmp_path, "--json", "list")
    total = len(json.loads(every.stdout))
    cut = run(env, tmp_path, "search", "", "--limit", "3")
    assert cut.returncode == 0, cut.stderr
    assert len(cut.stdout.splitlines()) == 1 + 3  # the header, three rows
    assert f"showing 3 of {total} tools; `--limit {total}` shows them all." in cut.stderr
    whole = run(env, tmp_path, "search", "", "--limit", str(total))
    assert "showing" not in whole.stderr


def test_call_json_answers_usage_errors_in_json(env: dict[str, str], tmp_path: Path) -> None:
    cases = {
        ("call", "nosuch", "--json"): ("ToolNotFound", "No tool named 'nosuch'"),
        ("call", "shout", "text", "--json"): ("UsageError", "key=value pairs"),
        ("call", "shout", '{"text": 3}', "--json"): ("ToolValidationError", "$.text"),
        ("call", "shout", "text=a", "--timeout", "-1", "--json"): ("UsageError", "--timeout"),
        ("--json", "call", "shout", "--timeout", "soon"): ("UsageError", "--timeout"),
    }
    for argv, (kind, said) in cases.items():
        done = run(env, tmp_path, *argv)
        assert done.returncode == 2, (argv, done.stderr)
        assert said in done.stderr, (argv, done.stderr)
        answer = json.loads(done.stdout)
        assert answer["is_error"] is True and answer["error_type"] == kind, (argv, answer)
        assert said in answer["error"], (argv, answer)
    invalid = run(env, tmp_path, "call", "shout", '{"text": 3}', "--json")
    assert json.loads(invalid.stdout)["errors"][0]["path"] == "$.text"


def test_a_timeout_must_be_positive(env: dict[str, str], tmp_path: Path) -> None:
    for value in ("-1", "0"):
        done = run(env, tmp_path, "call", "noisy", "n=1", "--timeout", value)
        assert done.returncode == 2 and done.stdout == ""
        assert "--timeout must be a positive number of seconds" in error_line(done)


def test_a_missing_root_is_a_usage_error(env: dict[str, str], tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    for argv in (("list",), ("call", "ls")):
        done = run(env, tmp_path, *argv, "--root", str(missing))
        assert done.returncode == 2, done.stderr
        line = error_line(done)
        assert f"the workspace root '{missing}' does not exist" in line and "--root" in line
    a_file = run(env, tmp_path, "list", "--root", str(tmp_path / "ws" / "nex.yaml"))
    assert a_file.returncode == 2 and "is a file, not a folder" in error_line(a_file)


def test_list_names_an_unknown_source_or_category(env: dict[str, str], tmp_path: Path) -> None:
    source = run(env, tmp_path, "list", "--source", "nosuch")
    assert source.returncode == 2 and source.stdout == ""
    line = error_line(source)
    assert "--source nosuch: there is no such source" in line and "builtin" in line
    category = run(env, tmp_path, "list", "--category", "fils")
    assert category.returncode == 2
    assert "Did you mean 'files'?" in error_line(category)
    assert run(env, tmp_path, "list", "--category", "files").returncode == 0
    assert run(env, tmp_path, "list", "--source", "directory").returncode == 0


def test_install_says_what_went_wrong(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "ws" / "nex.yaml").write_text(DECLARED)
    ran = run(env, tmp_path, "install", "gh", "--yes")
    assert ran.returncode == 1, ran.stderr
    assert "`true` ran without error, but 'gh' is still not available" in ran.stdout
    assert "'gh-not-installed-xyz' is not installed (not on PATH)" in ran.stdout
    assert "nexus-tools install gh" not in ran.stdout  # the command that just ran
    unknown = run(env, tmp_path, "install", "nosuch")
    assert unknown.returncode == 2
    line = error_line(unknown)
    assert "Did you mean" not in line and "No declared tool named 'nosuch'" in line
    assert "build, gh, now" in line
    close = run(env, tmp_path, "install", "biuld")
    assert "Did you mean 'build'?" in error_line(close) and "'gh'" not in close.stderr


def test_tokens_name_a_token_file_that_is_not_there(env: dict[str, str], tmp_path: Path) -> None:
    """`tokens list --token-file` with a wrong path says so (exit 2), not "No tokens"."""
    missing = tmp_path / "no" / "such" / "tokens.json"
    listed = run(env, tmp_path, "tokens", "list", "--token-file", str(missing))
    assert listed.returncode == 2, listed.stdout
    assert f"No token file at {missing}" in listed.stderr and "no folder" in listed.stderr
    assert "No tokens." not in listed.stdout
    made = run(env, tmp_path, "tokens", "create", "ci", "--token-file", str(tmp_path / "t.json"))
    assert made.returncode == 0, made.stderr
    listed = run(env, tmp_path, "tokens", "list", "--token-file", str(tmp_path / "t.json"))
    assert listed.returncode == 0 and "ci" in listed.stdout


def test_wrong_arguments_of_publish_tokens_and_register_exit_2(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A file that is not there, a missing cluster or a token name that cannot be used is a
    mistake on the command line: exit 2, with what to do."""
    no_cluster = run(env, tmp_path, "publish", "nope.py")
    assert no_cluster.returncode == 2 and "No cluster to publish to" in no_cluster.stderr
    missing = run(env, tmp_path, "publish", "nope.py", "--cluster", "redis://127.0.0.1:9/0")
    assert missing.returncode == 2 and "No file 'nope.py'" in missing.stderr
    reserved = run(env, tmp_path, "tokens", "create", "local")
    assert reserved.returncode == 2 and "cannot be used" in reserved.stderr
    assert not (tmp_path / "home" / "tokens.json").exists()  # nothing was made
    unknown = run(env, tmp_path, "register", "nope.yaml")
    assert unknown.returncode == 2 and "No file 'nope.yaml'" in unknown.stderr


def test_options_go_anywhere_among_the_arguments(env: dict[str, str], tmp_path: Path) -> None:
    """`call NAME --json k=v`, `--timeout 5` or `--yes` between the pairs: the options are
    read as options wherever they stand, and values that look like options stay values."""
    as_json = run(env, tmp_path, "call", "label", "--json", "name=--weird", "size=-1")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["structured"] == {"name": "--weird", "size": -1}
    timed = run(env, tmp_path, "call", "shout", "--timeout", "5", "text=--weird")
    assert timed.returncode == 0 and timed.stdout == "--WEIRD\n", timed.stderr
    between = run(env, tmp_path, "call", "write", "path=n.txt", "--yes", "content=x", "--json")
    assert between.returncode == 0, between.stderr
    assert (tmp_path / "ws" / "n.txt").read_text() == "x"
    # after `--` every word is an argument, even one that looks like an option
    literal = run(env, tmp_path, "call", "shout", "--json", "--", "text=--yes")
    assert json.loads(literal.stdout)["structured"] == "--YES", literal.stderr
    checked = run(env, tmp_path, "check", "noisy", "--no-tests", "shout", "--json")
    assert checked.returncode == 0, checked.stderr
    assert [row["name"] for row in json.loads(checked.stdout)] == ["noisy", "shout"]
    typo = run(env, tmp_path, "call", "shout", "--tiemout", "5", "text=a")
    assert typo.returncode == 2
    line = error_line(typo)
    assert "unknown option '--tiemout'. Did you mean '--timeout'?" in line
    assert "text=a" not in line and "nexus-tools call --help" in line
    missing = run(env, tmp_path, "call", "--json")
    assert missing.returncode == 2
    assert missing.stderr.endswith("error: the following arguments are required: name\n")


def test_serve_http_options_need_http(env: dict[str, str], tmp_path: Path) -> None:
    """`serve --port N` without `--transport http` is refused, not served on stdio."""
    for argv, named in (
        (("--port", "8768"), "--port only applies to --transport http"),
        (("--transport", "stdio", "--host", "0.0.0.0"), "not to --transport stdio"),
    ):
        done = run(env, tmp_path, "serve", *argv)
        assert done.returncode == 2, done.stderr
        assert named in done.stderr and "Add --transport http" in done.stderr
        assert "Serving" not in done.stderr and done.stdout == ""


def test_install_of_an_available_tool_runs_nothing(env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "ws" / "nex.yaml").write_text(DECLARED)
    first = run(env, tmp_path, "install", "build", "--yes")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "build: install command: touch built",
        "build: installed -- ran `touch built`; the check now passes.",
    ]
    again = run(env, tmp_path, "install", "build", "--yes")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "build: already installed (it is available here); nothing to do.\n"


def test_a_misspelt_grant_is_one_error_where_it_was_written(
    env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "ws" / "nex.yaml"
    config.write_text("search: {mode: keyword}\ngrant: workspace_writ\n")
    for command in ("check", "list"):
        done = run(env, tmp_path, command)
        assert done.returncode == 1, done.stderr
        line = error_line(done)
        assert line.count("workspace_writ'") == 1, line  # one error, not one per face
        assert f"{config}, line 2: key 'grant':" in line
        assert "Did you mean 'workspace_write'?" in line
    config.write_text("grant: {mcp: read_onyl}\n")
    line = error_line(run(env, tmp_path, "list"))
    assert "key 'grant.mcp'" in line and "Did you mean 'read_only'?" in line
