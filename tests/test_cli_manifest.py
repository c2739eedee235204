"""``nexus-tools check NAME | install | register | sync`` and ``list --capability`` as real
subprocesses against temporary projects with real scripts and a real MCP server process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).parent / "nexus-tools")

# A project-written MCP server: one tool per line of tools.txt next to it.
SERVER = """import sys
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("listed")


def make(name):
    def tool(text: str = "") -> str:
        return f"{name}: {text}"
    return tool


for name in Path(__file__).with_name("tools.txt").read_text().split():
    server.add_tool(make(name), name=name, description=f"Tool {name} of the listed server.")
server.run()
"""

PROJECT = """# the project's tools -- this comment must survive `register`
search: {mode: keyword}   # keyword search: no model in every subprocess
tools:
  - id: greet
    source: {type: script, path: scripts/greet.sh, args: ["{name}"]}
    parameters: {type: object, properties: {name: {type: string}}, required: [name]}
    capabilities: [greeting]
    permission: read_only
  - id: alpha
    source: {type: cli, command: 'true'}
    availability: conditional
    install: {check: "test -f alpha.installed", command: "touch alpha.installed"}
  - id: beta
    source: {type: cli, command: 'true'}
    availability: conditional
    install: {check: "test -f beta.installed", command: "touch beta.installed && touch beta.ran"}
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    ws = tmp_path / "ws"
    (ws / "scripts").mkdir(parents=True)
    (ws / "scripts" / "greet.sh").write_text(
        '#!/bin/bash\necho "hello $1 from $(basename "$(pwd)")"\n'
    )
    (ws / "nex.yaml").write_text(PROJECT)
    out = {k: v for k, v in os.environ.items() if not k.startswith("NEXUS_CRED_")}
    out["NEXUS_HOME"] = str(home)
    return out


def run(env: dict[str, str], tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """From a different working directory: everything must resolve against --root."""
    return subprocess.run(
        [EXE, *args],
        env=env,
        cwd=str(tmp / "home"),
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )


def test_script_tool_runs_with_root_from_elsewhere(env: dict[str, str], tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    done = run(env, tmp_path, "call", "greet", "name=ada", "--root", ws, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["structured"]["stdout"] == "hello ada from ws\n"
    listed = run(env, tmp_path, "list", "--capability", "greeting", "--json", "--root", ws)
    assert [r["name"] for r in json.loads(listed.stdout)] == ["greet"]
    info = run(env, tmp_path, "info", "greet", "--json", "--root", ws)
    assert json.loads(info.stdout)["capabilities"] == ["greeting"]


def test_check_named_exit_status(env: dict[str, str], tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    ok = run(env, tmp_path, "--root", ws, "check", "greet")
    assert ok.returncode == 0 and ok.stdout.strip() == "greet: available", ok.stderr
    bad = run(env, tmp_path, "check", "greet", "alpha", "--root", ws)
    assert bad.returncode == 1
    assert "alpha: unavailable -- check 'test -f alpha.installed' failed (exit 1)" in bad.stdout
    assert "nexus-tools install alpha" in bad.stdout
    unknown = run(env, tmp_path, "check", "nope", "--root", ws)
    assert unknown.returncode == 2 and "No tool named 'nope'" in unknown.stderr


def test_install_asks_or_needs_yes_then_rechecks(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    refused = run(env, tmp_path, "install", "alpha", "--root", str(ws))
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert not (ws / "alpha.installed").exists()
    done = run(env, tmp_path, "install", "alpha", "--yes", "--root", str(ws))
    assert done.returncode == 0, done.stderr
    assert "alpha: install command: touch alpha.installed" in done.stdout
    assert "alpha: installed" in done.stdout and (ws / "alpha.installed").exists()
    assert run(env, tmp_path, "check", "alpha", "--root", str(ws)).returncode == 0


def test_all_missing_installs_only_the_missing(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "beta.installed").touch()  # beta is already there: its command must not run
    done = run(env, tmp_path, "--root", str(ws), "install", "--all-missing", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    outcomes = {o["name"]: o["status"] for o in json.loads(done.stdout)}
    assert outcomes == {"alpha": "installed"}
    assert (ws / "alpha.installed").exists() and not (ws / "beta.ran").exists()


def test_register_keeps_comments_and_other_keys(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    definition = tmp_path / "lint.yaml"
    definition.write_text(
        "- id: lint\n  description: Lint the code.\n"
        "  source: {type: cli, command: 'echo lint'}\n  categories: [quality]\n"
        "- id: greet\n  description: Replaced greeting.\n"
        "  source: {type: script, path: scripts/greet.sh, args: ['{name}']}\n"
    )
    done = run(env, tmp_path, "register", str(definition), "--root", str(ws))
    assert done.returncode == 0, done.stderr
    assert f"lint: added in {ws / 'nex.yaml'}" in done.stdout
    assert "greet: replaced" in done.stdout
    text = (ws / "nex.yaml").read_text()
    assert "# the project's tools -- this comment must survive `register`" in text
    assert "# keyword search: no model in every subprocess" in text
    listed = run(env, tmp_path, "list", "--category", "quality", "--json", "--root", str(ws))
    assert [r["name"] for r in json.loads(listed.stdout)] == ["lint"]
    assert text.count("id: greet") == 1 and "Replaced greeting." in text

    bad = tmp_path / "bad.yaml"
    bad.write_text("id: broken\nsource:\n  type: cli\n  comand: x\n")
    refused = run(env, tmp_path, "register", str(bad), "--user", "--root", str(ws))
    assert refused.returncode == 1
    assert f"{bad}, line 4: unknown key 'source.comand'. Did you mean 'command'?" in refused.stderr
    assert not (tmp_path / "home" / "nex.yaml").exists()


def test_register_user_level(env: dict[str, str], tmp_path: Path) -> None:
    definition = tmp_path / "one.yaml"
    definition.write_text("id: mine\nsource: {type: cli, command: 'true'}\n")
    done = run(env, tmp_path, "register", str(definition), "--user")
    assert done.returncode == 0, done.stderr
    assert "id: mine" in (tmp_path / "home" / "nex.yaml").read_text()
    bound = tmp_path / "bound.yaml"
    bound.write_text("id: deploy\nproject_specific: true\nsource: {type: cli, command: 'true'}\n")
    refused = run(env, tmp_path, "register", str(bound), "--user")
    assert refused.returncode == 2 and "project_specific" in refused.stderr
    assert "deploy" not in (tmp_path / "home" / "nex.yaml").read_text()


def test_sync_reports_an_mcp_server_whose_tools_changed(
    env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / "server.py").write_text(SERVER)
    (ws / "tools.txt").write_text("alpha_tool\nbeta_tool\n")
    (ws / "nex.yaml").write_text(
        PROJECT + f"mcp: {{servers: [{{name: listed, command: '{sys.executable}', "
        "args: [server.py]}]}\n"
    )
    (ws / "nex.yaml").write_text(
        (ws / "nex.yaml").read_text().replace("args: [server.py]", f"args: ['{ws / 'server.py'}']")
    )
    first = run(env, tmp_path, "sync", "--root", str(ws), "--wait", "60")
    assert first.returncode == 0, first.stderr
    listed = run(env, tmp_path, "list", "--source", "mcp", "--json", "--root", str(ws))
    names = [r["name"] for r in json.loads(listed.stdout)]
    assert names == ["mcp__listed__alpha_tool", "mcp__listed__beta_tool"], listed.stderr
    assert first.stdout.startswith("First sync of this project:")
    same = run(env, tmp_path, "sync", "--root", str(ws), "--wait", "60")
    assert same.stdout.strip() == "No changes since the last sync.", same.stdout
    (ws / "tools.txt").write_text("alpha_tool\ngamma_tool\n")
    changed = run(env, tmp_path, "sync", "--root", str(ws), "--wait", "60")
    assert changed.returncode == 0, changed.stderr
    lines = changed.stdout.splitlines()
    assert "added    mcp__listed__gamma_tool" in lines
    assert "removed  mcp__listed__beta_tool" in lines
    (ws / "alpha.installed").touch()  # a check now passes: alpha's status changes
    again = run(env, tmp_path, "sync", "--root", str(ws), "--wait", "60", "--json")
    report = json.loads(again.stdout)
    assert [c["name"] for c in report["changed"]] == ["alpha"]
    assert report["changed"][0]["after"]["status"] == "ok"


def test_cli_tools_script_path_works_with_root(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "scripts" / "greet.sh").chmod(0o755)
    (ws / "nex.yaml").write_text(
        PROJECT + "cli_tools:\n  - {name: greet_cli, command: ./scripts/greet.sh,"
        " categories: [demo], capabilities: [greeting]}\n"
    )
    listed = run(env, tmp_path, "list", "--capability", "greeting", "--json", "--root", str(ws))
    assert [r["name"] for r in json.loads(listed.stdout)] == ["greet", "greet_cli"]
    checked = run(env, tmp_path, "--root", str(ws), "--json", "check")
    tools = {t["name"]: t for t in json.loads(checked.stdout)["tools"]}
    assert tools["greet_cli"]["status"] == "ok", tools["greet_cli"]
    done = run(env, tmp_path, "--root", str(ws), "call", "greet_cli", '{"args": ["bo"]}', "--yes")
    assert done.returncode == 0, done.stderr
    assert '"stdout": "hello bo from ws\\n"' in done.stdout


def test_a_declared_mcp_tool_is_ready_once_its_server_answered(
    env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    time_server = Path(sys.executable).parent / "mcp-server-time"
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\n"
        f"mcp: {{servers: [{{name: time, command: '{time_server}'}}]}}\n"
        "tools:\n  - {id: now, source: {type: mcp, server: time, tool: get_current_time}}\n"
    )
    info = run(env, tmp_path, "info", "now", "--json", "--root", str(ws), "--wait", "60")
    assert info.returncode == 0, info.stderr
    entry = json.loads(info.stdout)
    assert (entry["status"], entry["reason"]) == ("ok", None)
    assert "timezone" in entry["input_schema"]["properties"]  # the server's own schema


LONG = (
    "{id: wide, source: {type: cli, command: 'echo a line longer than eighty columns, kept whole'}}"
)


@pytest.mark.parametrize(
    ("before", "added"),
    [
        pytest.param(  # the README's layout: keys by 2, "  - " items
            f"# mine\nmcp:\n  servers: []   # none yet\ntools:\n  - {LONG}\n",
            "  - id: lint\n    source: {type: cli, command: echo lint}\n",
            id="readme",
        ),
        pytest.param(  # keys by 4, dashes flush with their key
            f"mcp:\n    servers: []\ntools:\n- {LONG}\n",
            "- id: lint\n  source: {type: cli, command: echo lint}\n",
            id="compact",
        ),
        pytest.param(  # no tools: yet: the list is added at the end, laid out as the file
            "mcp:\n    servers: []   # none yet\n",
            "tools:\n  - id: lint\n    source: {type: cli, command: echo lint}\n",
            id="new-list",
        ),
    ],
)
def test_register_keeps_the_files_layout(
    env: dict[str, str], tmp_path: Path, before: str, added: str
) -> None:
    ws = tmp_path / "ws"
    (ws / "nex.yaml").write_text(before)
    definition = tmp_path / "lint.yaml"
    definition.write_text("id: lint\nsource: {type: cli, command: echo lint}\n")
    done = run(env, tmp_path, "register", str(definition), "--root", str(ws))
    assert done.returncode == 0, done.stderr
    assert (ws / "nex.yaml").read_text() == before + added


# The README's example entry, pasted into a definition file: flow mappings over two lines
# with comments inside them.
BUILD = """\
  - id: build
    title: Build
    source: {type: script, path: scripts/build.sh,        # or {type: cli, command: "make -C ."}
             args: ["--target", "{target}", "{files}", "{verbose}"], timeout: 60}
    parameters:                   # JSON Schema; "{files}" expands a list
      type: object
      properties: {target: {type: string}, files: {type: array, items: {type: string}},
                   verbose: {type: boolean}}
      required: [target]
    categories: [build]
"""

# A nex.yaml as a person keeps it: comments, flow mappings over lines, a long line, blanks.
KEPT_HEAD = """\
# project settings -- kept byte for byte
version: 1
settings: {auto_install: false}   # true: install a missing tool on its first call

search: {mode: keyword,
         threshold: 0.2}          # a flow mapping over two lines
tools:
  - {id: report, source: {type: script, path: scripts/report.py, stdin: json}}  # arguments as JSON, and a line well past a hundred columns
"""
KEPT_ITEMS = """\

  # what time it is
  - {id: now, source: {type: cli, command: date}}   # the clock
"""
KEPT_TAIL = "skills: [~/team-skills]   # more folders\n"


def test_register_changes_only_the_entry_it_adds_or_replaces(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The README's example entry, registered into a nex.yaml with comments, flow mappings
    over two lines and long lines: every byte outside the entry stays, and the entry keeps
    its own comments and flow mappings, on add and on replace."""
    ws = tmp_path / "ws"
    (ws / "nex.yaml").write_text(KEPT_HEAD + KEPT_ITEMS + KEPT_TAIL)
    definition = tmp_path / "lint.yaml"
    definition.write_text("# the build tool\ntools:\n" + BUILD)
    done = run(env, tmp_path, "register", str(definition), "--project", "--root", str(ws))
    assert done.returncode == 0, done.stderr
    assert "build: added" in done.stdout
    assert (ws / "nex.yaml").read_text() == KEPT_HEAD + KEPT_ITEMS + BUILD + KEPT_TAIL

    # replaced in its place; written at column 0 in its file, moved to the list's column
    changed = BUILD.replace("title: Build", "title: Build it").replace("timeout: 60", "timeout: 90")
    definition.write_text("\n".join(line[2:] for line in changed.split("\n")))
    again = run(env, tmp_path, "register", str(definition), "--project", "--root", str(ws))
    assert again.returncode == 0, again.stderr
    assert "build: replaced" in again.stdout
    text = (ws / "nex.yaml").read_text()
    assert text == KEPT_HEAD + KEPT_ITEMS + changed + KEPT_TAIL
    assert '# or {type: cli, command: "make -C ."}' in text
    info = run(env, tmp_path, "--root", str(ws), "info", "build", "--json")
    assert info.returncode == 0, info.stderr
    assert json.loads(info.stdout)["input_schema"]["required"] == ["target"]


def test_register_keeps_the_crlf_line_ends_of_a_nex_yaml(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A nex.yaml saved on Windows: every byte outside the entry stays, and the entry comes
    in with the file's CRLF line ends (the definition file's own are LF)."""
    ws = tmp_path / "ws"
    crlf = (KEPT_HEAD + KEPT_ITEMS + KEPT_TAIL).replace("\n", "\r\n").encode()
    (ws / "nex.yaml").write_bytes(crlf)
    definition = tmp_path / "lint.yaml"
    definition.write_text("# the build tool\ntools:\n" + BUILD)
    done = run(env, tmp_path, "register", str(definition), "--project", "--root", str(ws))
    assert done.returncode == 0, done.stderr
    expected = KEPT_HEAD + KEPT_ITEMS + BUILD + KEPT_TAIL
    assert (ws / "nex.yaml").read_bytes() == expected.replace("\n", "\r\n").encode()


def test_toolsets_names_a_misspelt_toolset_or_tool(env: dict[str, str], tmp_path: Path) -> None:
    """A toolset that exists nowhere, or a tool name its `tools:` or approval map does not
    have, is an error of `nexus-tools toolsets` (exit 1), not silently nothing: a misspelt
    `blocked` entry would block nothing."""
    ws = tmp_path / "ws"
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\n"
        "toolsets:\n"
        "  files: {tools: [read, lss]}\n"
        "  shell: {approval: {bsh: blocked}}\n"
        "  fies: {prefix: f_}\n"
    )
    shown = run(env, tmp_path, "--root", str(ws), "--wait", "2", "toolsets", "--json")
    assert shown.returncode == 1, shown.stderr
    rows = {r["toolset"]: r for r in json.loads(shown.stdout)}
    assert "No toolset 'fies'" in rows["fies"]["error"]
    assert "Did you mean 'files'?" in rows["fies"]["error"] and rows["fies"]["origin"] == "-"
    assert "'lss', which is not a tool of this toolset" in rows["files"]["error"]
    assert "'bsh'" in rows["shell"]["error"] and rows["web"]["error"] is None
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\ntoolsets:\n  files: {tools: [read, ls]}\n"
        "  shell: {approval: {bash: blocked}}\n"
        "  installed_elsewhere: {enabled: false}\n"  # off: never loaded, so nothing to check
    )
    fine = run(env, tmp_path, "--root", str(ws), "--wait", "2", "toolsets")
    assert fine.returncode == 0, fine.stdout + fine.stderr
    # a new user's trial: a switch-off one slip from a built-in toolset left it on unsaid;
    # check and list say so too
    (ws / "nex.yaml").write_text("search: {mode: keyword}\ntoolsets:\n  webb: {enabled: false}\n")
    checked = run(env, tmp_path, "--root", str(ws), "--wait", "2", "check", "--json")
    assert checked.returncode == 0, checked.stdout
    [note] = [n for n in json.loads(checked.stdout)["notes"] if n.startswith("toolsets.")]
    assert note.startswith("toolsets.webb: No toolset 'webb' to switch off")
    assert "Did you mean 'web'? ('web' is still on.)" in note
    listed = run(env, tmp_path, "--root", str(ws), "--wait", "2", "list")
    assert f"nexus-tools: warning: {note}" in listed.stderr


def test_a_module_toolset_does_not_hold_up_one_shot_commands(
    env: dict[str, str], tmp_path: Path
) -> None:
    """A `module:` toolset is loaded when the registry starts: `list` and `check` do not
    wait `--wait` for availability checks it never runs, nor call it broken."""
    ws = tmp_path / "ws"
    (ws / "team_tools.py").write_text(
        "from nexus_jupyter import tool\n\n\n@tool\ndef summarize(text: str) -> str:\n"
        '    """Summarize a text."""\n    return text[:10]\n\n\n'
        "def research_tools():\n    return [summarize]\n"
    )
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\ntoolsets:\n  research: {module: 'team_tools:research_tools'}\n"
    )
    listed = run(env, tmp_path, "--root", str(ws), "--wait", "30", "--json", "list")
    assert listed.returncode == 0, listed.stderr
    assert "summarize" in {row["name"] for row in json.loads(listed.stdout)}
    assert "did not finish" not in listed.stderr
    checked = run(env, tmp_path, "--root", str(ws), "--wait", "30", "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_declared_tool_whose_program_is_missing_is_reported_with_the_fix(
    env: dict[str, str], tmp_path: Path
) -> None:
    ws = tmp_path / "ws"
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\ntools:\n"
        "  - {id: lint, source: {type: cli, command: nosuch-linter-4711}}\n"
        "cli_tools:\n  - {name: gh2, command: nosuch-gh-4711}\n"
    )
    listed = run(env, tmp_path, "list", "--available", "--root", str(ws))
    assert listed.returncode == 0, listed.stderr
    assert "lint" not in listed.stdout and "gh2" not in listed.stdout  # not available
    assert (
        "nexus-tools: warning: source manifest: 'lint' cannot run: 'nosuch-linter-4711' is "
        "not installed (not on PATH). Install it, or correct the command of tool 'lint' under "
        f"tools: in nex.yaml ({ws / 'nex.yaml'})"
    ) in listed.stderr
    assert (
        "nexus-tools: warning: source config:cli_tools: 'gh2' cannot run: 'nosuch-gh-4711' is "
        "not installed (not on PATH). Install it, or correct the command of 'gh2' under "
        "cli_tools: in nex.yaml"
    ) in listed.stderr
    checked = run(env, tmp_path, "check", "lint", "--root", str(ws))
    assert checked.returncode == 1
    assert "Install it, or correct the command of tool 'lint'" in checked.stdout


def test_check_notes_a_declared_tool_a_builtin_hides(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\ntools:\n  - id: read\n    source: {type: cli, command: cat}\n"
    )
    checked = run(env, tmp_path, "--root", str(ws), "--wait", "10", "check", "--no-tests")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    said = checked.stdout + checked.stderr
    assert "declares 'read', which the built-in 'read' hides" in said
    assert "allow_overrides" in said
    as_json = run(env, tmp_path, "--root", str(ws), "--wait", "10", "--json", "check", "--no-tests")
    assert any("'read'" in note for note in json.loads(as_json.stdout)["notes"])


def test_a_declared_skill_in_the_skills_folder_is_one_tool(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The README's `{id: review, source: {type: skill, path: skills/review}}` with the skill
    in ./skills (a default skills folder): `list` shows one `review`, of the manifest, with no
    conflict, and `call review` answers."""
    ws = tmp_path / "ws"
    (ws / "skills" / "review").mkdir(parents=True)
    (ws / "skills" / "review" / "SKILL.md").write_text(
        "---\nname: review\ndescription: Review a change.\n---\nRead the diff.\n"
    )
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\ntools:\n"
        "  - {id: review, source: {type: skill, path: skills/review}, categories: [quality]}\n"
    )
    listed = run(env, tmp_path, "--root", str(ws), "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = [r for r in json.loads(listed.stdout) if r["name"] == "review"]
    assert len(rows) == 1 and rows[0]["source"] == "manifest", rows
    assert "conflict" not in listed.stdout + listed.stderr
    called = run(env, tmp_path, "--root", str(ws), "call", "review", "--json")
    assert called.returncode == 0, called.stdout + called.stderr
    assert "Read the diff." in called.stdout
