"""Signing in to an OAuth-protected upstream MCP server: a real authorization server made by
the test (``oauth_issuer``), a real protected ``nexus-tools serve --auth oauth`` process, the
registry's MCP source as the client (the SDK's OAuth providers), tokens in a real credential
store."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from oauth_issuer import Issuer, running_issuer
from serving import serve_http
from waiting import wait_until

from nexus_jupyter import Registry
from nexus_jupyter.core.policy.credentials import CredentialStore
from nexus_jupyter.sources.mcp import McpSource
from nexus_jupyter.sources.mcp_auth import add_link_opener

SCOPE = "tools:read tools:write"


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer(clients={"ci-bot": "s3cret-ci"}) as running:
        yield running


@pytest.fixture(scope="module")
def upstream(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("upstream")
    (root / "hello.txt").write_text("hi from upstream\n")
    with serve_http(
        root, "--auth", "oauth", "--issuer", issuer.url, "--audience", issuer.audience
    ) as served:
        yield served.url


def _wait_state(source: McpSource, states: set[str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while source.state not in states:  # a status, not a registry change: poll it, bounded
        assert time.monotonic() < deadline, f"state {source.state!r}: {source.reason}"
        time.sleep(0.05)


def _registry(source: McpSource) -> Registry:
    reg = Registry()
    reg.add_source(source)
    return reg


def test_client_credentials_sign_in(issuer: Issuer, upstream: str, tmp_path: Path) -> None:
    store = CredentialStore(home=tmp_path)
    store.set("team", "client_secret", "s3cret-ci", provider="file")
    auth = {
        "type": "client_credentials",
        "client_id": "ci-bot",
        "client_secret": "${credentials:team/client_secret}",
        "issuer": issuer.url,
        "scope": SCOPE,
    }
    source = McpSource("up", url=upstream, auth=auth, credentials=store)
    reg = _registry(source)
    try:
        wait_until(reg, lambda: reg.find("mcp__up__read") is not None)
        result = reg.call_sync("mcp__up__read", {"path": "hello.txt"})
        assert result.error is None and "hi from upstream" in str(result.content)
        assert store.lookup("mcp-oauth:up", "tokens")  # kept in the credential store
        assert any(r.get("grant_type") == "client_credentials" for r in issuer.token_requests)
    finally:
        reg.close()


def test_a_wrong_secret_is_a_visible_source_error(
    issuer: Issuer, upstream: str, tmp_path: Path
) -> None:
    auth = {
        "type": "client_credentials",
        "client_id": "ci-bot",
        "client_secret": "wrong",
        "issuer": issuer.url,
    }
    source = McpSource("up", url=upstream, auth=auth, credentials=CredentialStore(home=tmp_path))
    reg = _registry(source)
    try:
        _wait_state(source, {"error"})
        assert "401" in (source.reason or "") or "invalid_client" in (source.reason or "")
        assert reg.find("mcp__up__read") is None
        broken = [s for s in reg.status()["sources"] if s["name"] == "mcp:up"]
        assert broken and broken[0]["status"] == "error"
    finally:
        reg.close()


def test_no_auth_against_a_protected_server_says_so(upstream: str) -> None:
    source = McpSource("up", url=upstream)
    reg = _registry(source)
    try:
        _wait_state(source, {"error"})
        assert "HTTP 401" in (source.reason or "") and "auth:" in (source.reason or "")
    finally:
        reg.close()


def _browser() -> tuple[Callable[[str, str], Any], list[str]]:
    """A link opener that plays the person's browser: it follows the sign-in link (the
    authorization server approves at once) and its redirect back to our callback."""
    opened: list[str] = []

    def follow(url: str) -> None:
        with httpx.Client(follow_redirects=True, timeout=10) as browser:
            browser.get(url)

    def opener(server: str, url: str) -> None:
        opened.append(url)
        threading.Thread(target=follow, args=(url,), daemon=True).start()

    return opener, opened


def test_authorization_code_with_pkce(issuer: Issuer, upstream: str, tmp_path: Path) -> None:
    store = CredentialStore(home=tmp_path)
    opener, opened = _browser()
    remove = add_link_opener(opener)
    auth = {"type": "oauth", "client_id": "notebook", "scope": SCOPE}
    source = McpSource("up", url=upstream, auth=auth, credentials=store)
    reg = _registry(source)
    try:
        wait_until(reg, lambda: reg.find("mcp__up__read") is not None)
        assert len(opened) == 1
        assert "code_challenge=" in opened[0] and "code_challenge_method=S256" in opened[0]
        result = reg.call_sync("mcp__up__read", {"path": "hello.txt"})
        assert result.error is None and "hi from upstream" in str(result.content)
        assert any(r.get("code_verifier") for r in issuer.token_requests)
        assert store.lookup("mcp-oauth:up", "tokens")
        # A new connection reuses the stored tokens: nobody is asked to sign in again.
        source.restart().result(30)
        wait_until(reg, lambda: source.state == "ready" and reg.find("mcp__up__read") is not None)
        assert len(opened) == 1
    finally:
        remove()
        reg.close()


def test_expired_tokens_are_refreshed(issuer: Issuer, upstream: str, tmp_path: Path) -> None:
    opener, opened = _browser()
    remove = add_link_opener(opener)
    issuer.token_lifetime_s = 1  # the server still takes them for its 30 s of clock skew
    auth = {"type": "oauth", "client_id": "notebook", "scope": SCOPE}
    source = McpSource("up", url=upstream, auth=auth, credentials=CredentialStore(home=tmp_path))
    reg = _registry(source)
    try:
        wait_until(reg, lambda: reg.find("mcp__up__read") is not None)
        time.sleep(1.5)  # the token's own lifetime: there is no event to wait on
        result = reg.call_sync("mcp__up__read", {"path": "hello.txt"})
        assert result.error is None, result.error
        grants = [r.get("grant_type") for r in issuer.token_requests]
        assert "refresh_token" in grants
        assert len(opened) == 1  # refreshed, not signed in again
    finally:
        issuer.token_lifetime_s = 300
        remove()
        reg.close()


def test_the_cli_shows_a_401_upstream_and_exits_1(upstream: str, tmp_path: Path) -> None:
    """``nexus-tools list --source mcp:NAME`` (and ``check``) against a server that answers
    401: the error, with what to do, and exit code 1, never an empty list and 0."""
    import subprocess
    import sys

    (tmp_path / "nex.yaml").write_text(f"mcp:\n  servers:\n    - {{name: up, url: '{upstream}'}}\n")
    main = "import sys; from nexus_jupyter.cli import main; sys.exit(main())"
    for args in (["list", "--source", "mcp:up"], ["check"]):
        done = subprocess.run(
            [sys.executable, "-c", main, *args, "--root", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        shown = done.stdout + done.stderr
        assert "HTTP 401" in shown and "auth: {type: oauth}" in shown, (args, shown)
