"""``nexus-tools serve --transport http --auth oauth|tokens``: a real server process, a real
issuer made here (keys generated, JWKS over local HTTP, tokens minted), real HTTP requests.

What a refused client is told follows RFC 6750 §3: no token -> a bare ``Bearer`` challenge
and how to get a token; a token that is not accepted -> ``invalid_token`` saying so, never
whether a static token once existed. The RFC 9728 metadata lists every scope."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import jwt
import mcp
import pytest
from cryptography.hazmat.primitives import serialization
from oauth_issuer import Issuer, new_key, running_issuer
from serving import INIT, call_text, serve_http

from nexus_jupyter.serve.auth import FileTokenStore

HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
NEX_YAML = """
audit: audit.jsonl
policies:
  - principal: bob
    deny: [ls]
"""


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("auth-project")
    (root / "nex.yaml").write_text(NEX_YAML)
    (root / "notes.txt").write_text("hello\n")
    return root


@pytest.fixture(scope="module")
def oauth_server(issuer: Issuer, project: Path) -> Iterator[str]:
    with serve_http(
        project, "--auth", "oauth", "--issuer", issuer.url, "--audience", issuer.audience
    ) as served:
        yield served.url


def _initialize(url: str, token: str | None) -> httpx.Response:
    headers = dict(HEADERS)
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return httpx.post(url, json=INIT, headers=headers, timeout=10)


def test_tokens_get_the_right_status(issuer: Issuer, oauth_server: str) -> None:
    cases = {
        "good": (issuer.mint("alice"), 200),
        "expired": (issuer.mint("alice", expires_in=-120), 401),
        "wrong audience": (issuer.mint("alice", aud="someone-else"), 401),
        "wrong issuer": (issuer.mint("alice", iss="https://evil.example"), 401),
        "missing scope": (issuer.mint("alice", scope="email profile"), 403),
        "forged": (issuer.mint("alice", key=new_key()), 401),
        "unknown key id": (issuer.mint("alice", key=new_key(), kid="other"), 401),
        "none": (None, 401),
    }
    got = {name: _initialize(oauth_server, token).status_code for name, (token, _) in cases.items()}
    assert got == {name: status for name, (_, status) in cases.items()}


def test_401_points_at_the_protected_resource_metadata(issuer: Issuer, oauth_server: str) -> None:
    refused = _initialize(oauth_server, None)
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith("Bearer ") and "error=" not in challenge  # none sent
    metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
    assert metadata_url.endswith("/.well-known/oauth-protected-resource/mcp")
    metadata = httpx.get(metadata_url, timeout=10).json()
    assert metadata["resource"] == oauth_server
    assert metadata["authorization_servers"] == [issuer.url]
    assert metadata["scopes_supported"] == ["tools:read", "tools:write", "tools:admin"]
    short = _initialize(oauth_server, issuer.mint("alice", scope="email"))
    assert short.status_code == 403
    assert 'error="insufficient_scope"' in short.headers["www-authenticate"]
    assert short.json()["error_description"] == (
        "The token is valid but lacks the scope tools:read (it has: email). Ask the issuer for "
        "a token with tools:read; this server understands tools:read, tools:write, tools:admin."
    )


@asynccontextmanager
async def _client(url: str, token: str) -> AsyncIterator[mcp.Client]:
    """An MCP client sending ``token``; its HTTP client is closed on the way out (left to
    the garbage collector, it left CPython 3.11.7's AST recursion counter off, and a later
    ``ast.parse`` in the same process raised SystemError)."""
    from mcp.client.streamable_http import streamable_http_client

    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        async with mcp.Client(
            streamable_http_client(url, http_client=http), mode="legacy"
        ) as client:
            yield client


async def test_the_token_subject_is_the_principal(
    issuer: Issuer, oauth_server: str, project: Path
) -> None:
    async with _client(oauth_server, issuer.mint("bob")) as bob:
        error, text = await call_text(bob, "ls", {"path": "."})
        assert error and "principal 'bob'" in text  # the ACL for bob, not for 'unknown'
        error, text = await call_text(bob, "read", {"path": "notes.txt"})
        assert not error and "hello" in text
    async with _client(oauth_server, issuer.mint("alice")) as alice:
        error, text = await call_text(alice, "ls", {"path": "."})
        assert not error and "notes.txt" in text
    audit = [json.loads(line) for line in (project / "audit.jsonl").read_text().splitlines()]
    assert {(a["tool"], a["principal"]) for a in audit} >= {
        ("ls", "bob"),
        ("read", "bob"),
        ("ls", "alice"),
    }


async def test_scopes_cap_the_grant(issuer: Issuer, oauth_server: str, project: Path) -> None:
    async with _client(oauth_server, issuer.mint("carol", scope="tools:read")) as reader:
        error, text = await call_text(reader, "write", {"path": "x.txt", "content": "no"})
        assert error and "by its token" in text
        assert not (project / "x.txt").exists()
    async with _client(oauth_server, issuer.mint("carol", scope="tools:write")) as writer:
        error, text = await call_text(writer, "write", {"path": "x.txt", "content": "yes"})
        assert not error, text
        assert (project / "x.txt").read_text() == "yes"


def _fuzzed_headers(issuer: Issuer, good: str) -> list[list[tuple[bytes, bytes]]]:
    """500 Authorization header variants, none of which carries a valid token."""
    head, body, signature = good.split(".")
    other_key = new_key()
    bad_tokens = [
        "",
        " ",
        good[:-1],
        good + "x",
        good[1:],
        f"{head}.{body}.",
        f"{head}.{body}",
        f"{head}..{signature}",
        f"{head}.{body}.{signature[::-1]}",
        issuer.mint("alice", expires_in=-100),
        issuer.mint("alice", aud="x"),
        issuer.mint("alice", iss=issuer.url + "/"),
        issuer.mint("alice", scope=""),
        issuer.mint("alice", key=other_key),
        issuer.mint("local"),
        issuer.mint("", scope="tools:admin"),
        "nxt_" + "A" * 43,
        "null",
        "a.b.c",
    ]

    def b64(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    claims = json.loads(base64.urlsafe_b64decode(body + "=="))
    bad_tokens += [
        f"{b64({'alg': 'none', 'typ': 'JWT'})}.{body}.",
        f"{b64({'alg': 'HS256', 'kid': issuer.kid})}.{body}.{signature}",
        f"{head}.{b64({**claims, 'sub': 'root'})}.{signature}",
        f"{head}.{b64({**claims, 'exp': claims['exp'] + 10_000})}.{signature}",
    ]
    public_pem = issuer.key.public_key().public_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PublicFormat.SubjectPublicKeyInfo,
    )
    try:  # alg confusion: HMAC "signed" with the public key (PyJWT refuses to make it)
        bad_tokens.append(jwt.encode(claims, public_pem, algorithm="HS256"))
    except jwt.PyJWTError:
        pass
    schemes = ["Bearer ", "bearer ", "BEARER ", "Bearer  ", "Basic ", "Token ", "", "Bearer\t"]
    variants: list[list[tuple[bytes, bytes]]] = [[]]
    for scheme in schemes:
        for token in bad_tokens:
            # HTTP clients refuse values with whitespace at either end; servers never see them
            value = f"{scheme}{token}".strip().encode()
            variants.append([(b"authorization", value)])
    # the good token in the wrong place or under the wrong scheme
    variants += [
        [(b"authorization", f"Basic {good}".encode())],
        [(b"authorization", good.encode())],
        [(b"x-authorization", f"Bearer {good}".encode())],
        [(b"cookie", f"token={good}".encode())],
        [(b"authorization", f"Token {good}".encode())],
    ]
    rng = random.Random(23)
    while len(variants) < 500:  # random corruptions of the good token
        chars = list(good)
        for _ in range(rng.randint(1, 4)):
            chars[rng.randrange(len(chars))] = rng.choice("ABCxyz019-_.=")
        mutated = "".join(chars)
        if mutated != good:
            variants.append([(b"authorization", f"Bearer {mutated}".encode())])
    return variants[:500]


def test_no_call_succeeds_without_a_valid_token(
    issuer: Issuer, oauth_server: str, project: Path
) -> None:
    good = issuer.mint("alice", scope="tools:admin")
    opened = _initialize(oauth_server, good)
    assert opened.status_code == 200
    session = opened.headers["mcp-session-id"]
    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "write", "arguments": {"path": "fuzz.txt", "content": "pwned"}},
    }
    variants = _fuzzed_headers(issuer, good)
    assert len(variants) == 500
    statuses: dict[int, int] = {}
    with httpx.Client(timeout=10) as http:
        for extra in variants:
            headers = [
                (b"content-type", b"application/json"),
                (b"accept", b"application/json, text/event-stream"),
                (b"mcp-session-id", session.encode()),
                (b"mcp-protocol-version", b"2025-11-25"),
                *extra,
            ]
            answer = http.post(oauth_server, content=json.dumps(call), headers=headers)
            statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
    assert not any(200 <= status < 300 for status in statuses), statuses
    assert not (project / "fuzz.txt").exists()


def test_a_session_is_its_principals(issuer: Issuer, oauth_server: str) -> None:
    opened = _initialize(oauth_server, issuer.mint("alice"))
    session = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    headers = {
        **HEADERS,
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-11-25",
        "authorization": f"Bearer {issuer.mint('mallory')}",  # valid, but not alice
    }
    taken = httpx.post(oauth_server, json=listing, headers=headers, timeout=10)
    assert not 200 <= taken.status_code < 300, taken.text


def test_api_tokens_create_use_and_revoke(tmp_path: Path, project: Path) -> None:
    env = {**os.environ, "NEXUS_HOME": str(tmp_path / "home")}
    cli = [str(Path(sys.executable).parent / "nexus-tools"), "tokens"]  # the console script

    def tokens(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*cli, *args], env=env, capture_output=True, text=True, timeout=60)

    made = tokens("create", "dana", "--grant", "read_only")
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert secret.startswith("nxt_")
    stored = (tmp_path / "home" / "tokens.json").read_text()
    assert secret not in stored and "dana" in stored  # hashed, never the secret
    assert (tmp_path / "home" / "tokens.json").stat().st_mode & 0o077 == 0
    listed = tokens("list")
    assert "dana" in listed.stdout and "read_only" in listed.stdout and secret not in listed.stdout
    assert tokens("create", "dana").returncode == 1  # one token per name

    with serve_http(project, "--auth", "tokens", env={"NEXUS_HOME": env["NEXUS_HOME"]}) as served:
        assert _initialize(served.url, secret).status_code == 200
        assert _initialize(served.url, secret + "x").status_code == 401
        refused = _initialize(served.url, None)
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith(
            "Bearer"
        )
        assert tokens("revoke", "dana").returncode == 0
        assert _initialize(served.url, secret).status_code == 401  # live, no restart
    assert tokens("revoke", "dana").returncode == 2


async def test_api_token_name_is_the_principal(tmp_path: Path, project: Path) -> None:
    store = FileTokenStore(tmp_path / "home" / "tokens.json")
    _, bob = store.create("bob", "read_only")
    env = {"NEXUS_HOME": str(tmp_path / "home")}
    with serve_http(project, "--auth", "tokens", env=env) as served:
        async with _client(served.url, bob) as client:
            error, text = await call_text(client, "ls", {"path": "."})
            assert error and "principal 'bob'" in text
            error, text = await call_text(client, "write", {"path": "y.txt", "content": "n"})
            assert error and "by its token" in text


SERVE = [sys.executable, "-m", "nexus_jupyter.serve.cli_serve", "--transport", "http"]


def _serve_fails(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``serve --transport http --port 0 ARGS`` that must exit at once (a refused setting)."""
    return subprocess.run(
        [*SERVE, "--port", "0", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_non_loopback_needs_auth(project: Path, tmp_path: Path) -> None:
    refused = _serve_fails(project, "--host", "0.0.0.0")
    assert refused.returncode == 2 and "cannot listen on 0.0.0.0:0" in refused.stderr
    assert "without client authentication" in refused.stderr and "--auth tokens" in refused.stderr
    env = {"NEXUS_HOME": str(tmp_path / "home")}
    with serve_http(project, "--host", "0.0.0.0", "--auth", "tokens", env=env) as served:
        assert served.url.startswith("http://0.0.0.0:")


def test_bad_oauth_settings_are_clear(project: Path) -> None:
    missing = _serve_fails(project, "--auth", "oauth")
    assert missing.returncode == 2 and "--issuer URL and --audience AUD" in missing.stderr
    assert "cannot listen" not in missing.stderr  # the settings are wrong, not the address
    unreachable = _serve_fails(
        project, "--auth", "oauth", "--issuer", "http://127.0.0.1:9", "--audience", "a"
    )
    assert unreachable.returncode == 2 and "--jwks-url" in unreachable.stderr


def test_auth_from_nex_yaml(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "nex.yaml").write_text("serve: {auth: tokens}\n")
    env = {"NEXUS_HOME": str(tmp_path / "home")}
    with serve_http(project, "--host", "0.0.0.0", env=env) as served:  # allowed: auth is on
        assert _initialize(served.url.replace("0.0.0.0", "127.0.0.1"), None).status_code == 401
    (project / "nex.yaml").write_text("serve: {auth: {mode: oauth}}\n")
    refused = _serve_fails(project)
    assert refused.returncode == 2 and "--issuer URL and --audience AUD" in refused.stderr


# -- what a refused client is told ------------------------------------------------------


def _metadata_url(url: str) -> str:
    return url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")


def test_oauth_no_token_is_told_how_to_get_one(issuer: Issuer, oauth_server: str) -> None:
    refused = _initialize(oauth_server, None)
    assert refused.status_code == 401
    # §3.1: no error code when the request had no credentials; the SDK's client still finds
    # the metadata (resource_metadata) and asks only for the scope needed to connect
    assert refused.headers["www-authenticate"] == (
        f'Bearer scope="tools:read", resource_metadata="{_metadata_url(oauth_server)}"'
    )
    body = refused.json()
    assert "error" not in body
    assert body["error_description"].startswith("This MCP server needs a bearer token")
    assert f"from the OAuth issuer {issuer.url}" in body["error_description"]
    # a scheme other than Bearer is no bearer token either
    basic = httpx.post(oauth_server, json=INIT, headers={**HEADERS, "authorization": "Basic YTpi"})
    assert "error=" not in basic.headers["www-authenticate"]


@pytest.mark.parametrize(
    ("case", "expired"),
    [("garbage", False), ("forged", False), ("wrong audience", False), ("expired", True)],
)
def test_oauth_refused_token_is_named_invalid(
    issuer: Issuer, oauth_server: str, case: str, expired: bool
) -> None:
    token = {
        "garbage": "not-a-jwt",
        "forged": issuer.mint("alice", key=new_key()),
        "wrong audience": issuer.mint("alice", aud="someone-else"),
        "expired": issuer.mint("alice", expires_in=-120),
    }[case]
    refused = _initialize(oauth_server, token)
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token", error_description="The bearer ')
    assert f'resource_metadata="{_metadata_url(oauth_server)}"' in challenge
    body = refused.json()
    assert body["error"] == "invalid_token"
    assert body["error_description"].startswith("The bearer token was not accepted: ")
    assert body["error_description"] in challenge  # the same words for people and programs
    assert ("it has expired" in body["error_description"]) is expired
    assert "sign in" in body["error_description"]


def test_oauth_expired_but_forged_is_not_called_expired(issuer: Issuer, oauth_server: str) -> None:
    """Only a token the issuer really signed is said to have expired."""
    token = issuer.mint("alice", key=new_key(), expires_in=-120)
    assert "expired;" not in _initialize(oauth_server, token).json()["error_description"]


def test_the_metadata_lists_every_scope_but_tools_read_is_enough(
    issuer: Issuer, oauth_server: str
) -> None:
    metadata = httpx.get(_metadata_url(oauth_server), timeout=10).json()
    assert metadata["scopes_supported"] == ["tools:read", "tools:write", "tools:admin"]
    assert _initialize(oauth_server, issuer.mint("alice", scope="tools:read")).status_code == 200


def test_tokens_mode_missing_unknown_and_revoked(tmp_path: Path, project: Path) -> None:
    store = FileTokenStore(tmp_path / "home" / "tokens.json")
    _, kept = store.create("erin", "read_only")
    _, gone = store.create("frank", "read_only")
    assert store.revoke("frank")
    with serve_http(project, "--auth", "tokens", env={"NEXUS_HOME": str(tmp_path / "home")}) as s:
        assert _initialize(s.url, kept).status_code == 200
        missing = _initialize(s.url, None)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == "Bearer"  # no metadata: no issuer
        told = missing.json()["error_description"]
        assert "needs a bearer token" in told and "`nexus-tools tokens create NAME`" in told
        unknown = _initialize(s.url, "nxt_" + "A" * 43)
        revoked = _initialize(s.url, gone)
        for refused in (unknown, revoked):
            assert refused.status_code == 401
            assert refused.headers["www-authenticate"].startswith(
                'Bearer error="invalid_token", error_description="The bearer token was not '
                "accepted: it is unknown or has been revoked."
            )
            assert "nexus-tools tokens create" in refused.json()["error_description"]
        # a revoked token is told exactly what an unknown one is: nothing about its past
        assert revoked.content == unknown.content
        assert revoked.headers["www-authenticate"] == unknown.headers["www-authenticate"]
