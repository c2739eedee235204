"""A bad ``serve: auth:`` block of nex.yaml is reported with its file and line, and the fix,
by ``nexus-tools serve`` (which refuses to start) and by ``nexus-tools check`` (exit 1). Real
processes on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).parent / "nexus-tools")

#: the serve block, the line of it to blame (the file has one line before it), words of the fix
CASES = {
    "unknown mode": ("serve:\n  auth: tokenz\n", 2, ["'tokenz'", "`auth: tokens`"]),
    "unknown mode in a block": (
        "serve:\n  auth:\n    mode: oath\n    audience: a\n",
        3,
        ["'oath'", "'none', 'tokens' or 'oauth'"],
    ),
    "oauth setting without oauth mode": (
        "serve:\n  auth:\n    mode: tokens\n    issuer: https://login.example.com\n",
        4,
        ["serve.auth.issuer only applies with `mode: oauth`", "remove `issuer:`"],
    ),
    "no audience": (
        "serve:\n  auth:\n    mode: oauth\n    issuer: https://login.example.com\n",
        3,
        ["`audience: AUD`", "--issuer URL and --audience AUD"],
    ),
    "token file not there": (
        "serve:\n  auth: {mode: tokens,\n    token_file: nothere/tokens.json}\n",
        3,
        ["no token file at", "nothere/tokens.json (nor its folder", "nexus-tools tokens create"],
    ),
    "token file of the wrong type": (
        "serve:\n  auth:\n    mode: tokens\n    token_file: 5\n",
        4,
        ["serve.auth.token_file: Input should be a valid string (got 5)"],
    ),
    "a list for auth": ("serve:\n  auth: [tokens]\n", 2, ["must be a mode", "`auth: tokens`"]),
    "misspelt key": (
        "serve:\n  auth:\n    mode: tokens\n    tokenfile: t.json\n",
        4,
        ["unknown key serve.auth.tokenfile", "Did you mean 'token_file'?"],
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEXUS_CRED_")}
    env["NEXUS_HOME"] = str(project.parent / "home")
    return subprocess.run(
        [EXE, "--root", str(project), "--wait", "5", *args],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("case", list(CASES))
def test_serve_and_check_name_the_line(project: Path, case: str) -> None:
    text, line, words = CASES[case]
    (project / "nex.yaml").write_text("search: {mode: keyword}\n" + text)
    where = f"{project / 'nex.yaml'}, line {line + 1}: "
    served = _run(project, "serve", "--transport", "http", "--port", "0")
    assert served.returncode == 2, served.stderr
    said = " ".join(served.stderr.split())
    assert where in said, said
    for word in words:
        assert word in said, said
    checked = _run(project, "check")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    said = " ".join(checked.stdout.split())
    assert f"`nexus-tools serve` settings: {where}" in said, said
    for word in words:
        assert word in said, said


def test_check_reports_serve_settings_in_json(project: Path) -> None:
    (project / "nex.yaml").write_text("serve:\n  auth: tokenz\n")
    checked = _run(project, "check", "--json")
    assert checked.returncode == 1
    error = json.loads(checked.stdout)["serve"]["error"]
    assert error.startswith(f"{project / 'nex.yaml'}, line 2: serve.auth.mode: ")
    (project / "nex.yaml").write_text("serve:\n  auth: tokens\n")
    fine = _run(project, "check", "--json")
    assert json.loads(fine.stdout)["serve"] == {"error": None}


def test_a_relative_token_file_is_read_beside_its_nex_yaml(tmp_path: Path) -> None:
    """So `serve --root` from another folder reads the same file."""
    from nexus_jupyter.serve.auth import FileTokenStore
    from nexus_jupyter.serve.auth.settings import ServeAuth

    project = tmp_path / "ws"
    FileTokenStore(project / "keys" / "tokens.json").create("gail", "read_only")
    (project / "nex.yaml").write_text(
        "serve:\n  auth: {mode: tokens, token_file: keys/tokens.json}\n"
    )
    configured = {"mode": "tokens", "token_file": "keys/tokens.json"}
    auth = ServeAuth.resolve(configured, [str(project / "nex.yaml")])
    assert auth.token_file == str(project / "keys" / "tokens.json")
    # the command line's mode does not drop the token file
    assert ServeAuth.resolve(configured, [str(project / "nex.yaml")], mode="tokens").token_file
