"""A missing credential says how to set it on every face (REST on a real Jupyter server, MCP,
the notebook magic, the CLI as a subprocess); an expired OAuth token is refreshed against a
real local token endpoint before the call, and a failed refresh says how to sign in again."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from jupyter_fixtures import *

from nexus_jupyter import Registry, ToolContext, tool
from nexus_jupyter.core.errors import CredentialRefreshFailed, MissingCredential
from nexus_jupyter.core.policy.credentials import CredentialStore

HOW_TO = (
    "`%tool credentials set github token`",
    "`nexus-tools credentials set github token`",
    "NEXUS_CRED_GITHUB_TOKEN",
)


@tool(requires_credentials=["github/token"])
async def list_repos(*, ctx: ToolContext) -> dict[str, Any]:
    """List the user's repositories."""
    token = await ctx.credentials.get("github", "token")
    return {"fresh": token == "fresh-token-7Qm2", "length": len(token)}


def assert_says_how(text: str) -> None:
    assert "Missing credential 'github/token'" in text, text
    for part in HOW_TO:
        assert part in text, (part, text)


@pytest.fixture
def store(tmp_path: Path) -> CredentialStore:
    return CredentialStore(home=tmp_path / "home")


@pytest.fixture
def given_registry(store: CredentialStore) -> Iterator[Registry]:
    reg = Registry(search="keyword", credentials=store)
    reg.add(list_repos)
    yield reg
    reg.close()


@pytest.fixture
def jp_server_config(given_registry: Registry) -> dict[str, Any]:
    return nexus_server_config(lambda root: given_registry)


@on_server_loop
async def test_rest_face(jp_fetch: Any) -> None:
    status, text = await rest_call(jp_fetch, "list_repos", {})
    assert status == 412
    answer = json.loads(text)
    assert answer["error"] == "missing_credential" and answer["service"] == "github"
    assert_says_how(answer["message"])


async def test_mcp_face(given_registry: Registry) -> None:
    import mcp

    from nexus_jupyter.serve.mcp_server import RegistryServer

    served = RegistryServer(given_registry)
    served.attach()
    try:
        async with mcp.Client(served.server) as client:  # a real client, in memory
            result = await client.call_tool("list_repos", {})
    finally:
        served.detach()
    assert result.is_error
    assert_says_how(result.content[0].text)
    # an agent cannot set it where the server runs: it is told whom to ask
    assert "ask the user to set it with" in result.content[0].text


def test_notebook_face(given_registry: Registry) -> None:
    from IPython.core.error import UsageError
    from IPython.core.interactiveshell import InteractiveShell

    from nexus_jupyter.notebook import extension
    from nexus_jupyter.session import reset_session_registry

    reset_session_registry(given_registry)
    try:
        shell = InteractiveShell.instance()
        if "nexus_jupyter" not in shell.extension_manager.loaded:
            shell.run_line_magic("load_ext", "nexus_jupyter")
        else:
            extension.load(shell)
        with pytest.raises(UsageError) as info:
            shell.run_line_magic("tool", "call list_repos")
        assert_says_how(str(info.value))
    finally:
        reset_session_registry(None)


def test_cli_face(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\n"
        "tools:\n"
        "  - {id: list_repos, source: {type: cli, command: 'true'},\n"
        "     requires_credentials: [github/token], permission: read_only}\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEXUS_CRED_")}
    env["NEXUS_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [str(Path(sys.executable).parent / "nexus-tools"), "call", "list_repos", "--root", str(ws)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("nexus-tools: error: ")
    assert_says_how(done.stderr)
    checked = subprocess.run(
        [
            str(Path(sys.executable).parent / "nexus-tools"),
            "check",
            "list_repos",
            "--root",
            str(ws),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 1
    assert "unavailable -- missing credential 'github/token'; set it with" in checked.stdout
    for part in HOW_TO:  # the listing's reason says every way too
        assert part in checked.stdout, (part, checked.stdout)


# -- OAuth refresh --------------------------------------------------------------------------


class TokenEndpoint(BaseHTTPRequestHandler):
    """Answers the refresh-token grant: ``r1`` is good (and rotated to ``r2``)."""

    grants: list[dict[str, str]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
        self.grants.append(form)
        if form.get("grant_type") == "refresh_token" and form.get("refresh_token") == "r1":
            status, body = (
                200,
                {
                    "access_token": "fresh-token-7Qm2",
                    "expires_in": 3600,
                    "refresh_token": "r2",
                    "token_type": "Bearer",
                },
            )
        else:
            status, body = 400, {"error": "invalid_grant"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def token_url() -> Iterator[str]:
    TokenEndpoint.grants = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), TokenEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/oauth/token"
    server.shutdown()
    server.server_close()
    thread.join(5)


def _expired(store: CredentialStore, token_url: str, refresh_token: str) -> None:
    for key, value in {
        "token": "stale-token-Xw3e",
        "refresh_token": refresh_token,
        "token_url": token_url,
        "client_id": "nexus-test",
        "expires_at": str(int(time.time() - 60)),
    }.items():
        store.set("github", key, value, provider="file")


async def test_expired_token_is_refreshed_before_the_call(
    given_registry: Registry, store: CredentialStore, token_url: str
) -> None:
    _expired(store, token_url, "r1")
    result = await given_registry.call("list_repos", {})
    assert result.ok, result.error
    assert result.structured["fresh"] is True
    assert TokenEndpoint.grants == [
        {"grant_type": "refresh_token", "refresh_token": "r1", "client_id": "nexus-test"}
    ]
    assert store.lookup("github", "refresh_token") == "r2"  # rotated
    assert float(store.lookup("github", "expires_at") or 0) > time.time() + 3000
    again = given_registry.call_sync("list_repos", {})
    assert again.structured["fresh"] is True and len(TokenEndpoint.grants) == 1  # still valid


async def test_failed_refresh_says_how_to_sign_in_again(
    given_registry: Registry, store: CredentialStore, token_url: str
) -> None:
    _expired(store, token_url, "revoked")
    with pytest.raises(CredentialRefreshFailed) as info:
        await given_registry.call("list_repos", {})
    message = str(info.value)
    assert "HTTP 400 (invalid_grant)" in message and "Sign in again" in message
    assert "`nexus-tools credentials set github token`" in message
    assert isinstance(info.value, MissingCredential)  # faces show it like a missing one
    assert "stale-token-Xw3e" not in message and "revoked" not in message
