"""A real OAuth 2.1 authorization server for tests, on a loopback port: RSA keys generated
here, its JWKS and RFC 8414 metadata served over HTTP, JWT access tokens minted on demand or
issued at ``/token`` (client credentials, authorization code + PKCE S256, refresh tokens), and
``/authorize`` that approves at once (the "user" always says yes) by redirecting with a code.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm


def new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Issuer:
    url: str
    key: rsa.RSAPrivateKey
    kid: str = "test-key-1"
    clients: dict[str, str] = field(default_factory=dict)  # client_id -> secret
    audience: str = "nexus-test"
    token_lifetime_s: int = 300
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    refresh_tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    token_requests: list[dict[str, str]] = field(default_factory=list)

    @property
    def jwks(self) -> dict[str, Any]:
        public = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    @property
    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "client_credentials", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        }

    def mint(
        self,
        sub: str = "alice",
        *,
        scope: str = "tools:read tools:write",
        aud: str | None = None,
        iss: str | None = None,
        expires_in: int | None = None,
        key: rsa.RSAPrivateKey | None = None,
        kid: str | None = None,
        **claims: Any,
    ) -> str:
        """A signed JWT access token; every part can be made wrong on purpose."""
        now = int(time.time())
        payload = {
            "iss": iss or self.url,
            "sub": sub,
            "aud": aud or self.audience,
            "iat": now,
            "exp": now + (expires_in if expires_in is not None else self.token_lifetime_s),
            "scope": scope,
            "jti": uuid.uuid4().hex,
            **claims,
        }
        return jwt.encode(
            payload, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid}
        )

    # -- the token endpoint ---------------------------------------------------------------

    def token_response(
        self, form: dict[str, str], basic: tuple[str, str] | None
    ) -> tuple[int, dict[str, Any]]:
        self.token_requests.append(dict(form))
        grant = form.get("grant_type")
        client_id, secret = basic or (form.get("client_id", ""), form.get("client_secret", ""))
        if grant == "client_credentials":
            if self.clients.get(client_id) != secret or not secret:
                return 401, {"error": "invalid_client"}
            return 200, self._tokens(client_id, form.get("scope", "tools:read"), refresh=False)
        if grant == "authorization_code":
            code = self.codes.pop(form.get("code", ""), None)
            if code is None or code["client_id"] != client_id:
                return 400, {"error": "invalid_grant"}
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
            if digest.rstrip(b"=").decode() != code["challenge"]:
                return 400, {"error": "invalid_grant", "error_description": "PKCE check failed"}
            return 200, self._tokens(code["sub"], code["scope"], refresh=True, client=client_id)
        if grant == "refresh_token":
            held = self.refresh_tokens.pop(form.get("refresh_token", ""), None)
            if held is None:
                return 400, {"error": "invalid_grant"}
            return 200, self._tokens(
                held["sub"], held["scope"], refresh=True, client=held["client"]
            )
        return 400, {"error": "unsupported_grant_type"}

    def _tokens(self, sub: str, scope: str, *, refresh: bool, client: str = "") -> dict[str, Any]:
        body: dict[str, Any] = {
            "access_token": self.mint(sub, scope=scope, client_id=client or sub),
            "token_type": "Bearer",
            "expires_in": self.token_lifetime_s,
            "scope": scope,
        }
        if refresh:
            handle = secrets.token_urlsafe(24)
            self.refresh_tokens[handle] = {"sub": sub, "scope": scope, "client": client}
            body["refresh_token"] = handle
        return body

    def authorize(self, query: dict[str, str]) -> str:
        """The redirect an approving user's browser is sent to."""
        code = secrets.token_urlsafe(16)
        self.codes[code] = {
            "client_id": query.get("client_id", ""),
            "challenge": query.get("code_challenge", ""),
            "scope": query.get("scope", "tools:read"),
            "sub": "alice",
        }
        params = {"code": code}
        if "state" in query:
            params["state"] = query["state"]
        return f"{query['redirect_uri']}?{urlencode(params)}"


def _handler(issuer: Issuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path in (
                "/.well-known/oauth-authorization-server",
                "/.well-known/openid-configuration",
            ):
                self._json(200, issuer.metadata)
            elif parts.path == "/jwks":
                self._json(200, issuer.jwks)
            elif parts.path == "/authorize":
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                self.send_response(302)
                self.send_header("location", issuer.authorize(query))
                self.send_header("content-length", "0")
                self.end_headers()
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
            basic = None
            header = self.headers.get("authorization", "")
            if header.lower().startswith("basic "):
                from urllib.parse import unquote

                user, _, password = base64.b64decode(header[6:]).decode().partition(":")
                basic = (unquote(user), unquote(password))
            if urlsplit(self.path).path != "/token":
                self._json(404, {"error": "not_found"})
                return
            status, body = issuer.token_response(form, basic)
            self._json(status, body)

    return Handler


@contextmanager
def running_issuer(**options: Any) -> Iterator[Issuer]:
    """An :class:`Issuer` listening on ``127.0.0.1`` (a free port) until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(None))  # type: ignore[arg-type]
    issuer = Issuer(url=f"http://127.0.0.1:{server.server_address[1]}", key=new_key(), **options)
    server.RequestHandlerClass = _handler(issuer)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield issuer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
