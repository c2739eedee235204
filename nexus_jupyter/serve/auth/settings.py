"""How ``nexus-tools serve --transport http`` authenticates clients: ``--auth`` and friends,
or ``serve: {auth: ...}`` in nex.yaml (the command line wins).

    serve:
      auth: tokens                      # static tokens (nexus-tools tokens create NAME)
    serve:
      auth:
        mode: oauth                     # OAuth 2.1 resource server
        issuer: https://login.example.com/realms/team
        audience: nexus-tools           # the `aud` tokens must carry
        jwks_url: ...                   # default: from the issuer's metadata
        public_url: https://tools.example.com/mcp   # what clients use (behind a proxy)

:func:`auth_app_options` turns it into the SDK's ``auth=`` / ``token_verifier=``; the SDK then
serves the RFC 9728 metadata and answers 401 / 403 with ``WWW-Authenticate``.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ...core.errors import ConfigError
from .scopes import READ_SCOPE, grant_of_scopes

__all__ = ["ServeAuth", "auth_app_options", "discover_jwks_url", "identity_of"]

AuthMode = Literal["none", "tokens", "oauth"]
#: Settings that mean something only with ``mode: oauth``.
_OAUTH_ONLY = ("issuer", "audience", "jwks_url")


class ServeAuth(BaseModel):
    """The ``serve.auth`` block of nex.yaml (a bare string is the mode)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: AuthMode = "none"
    issuer: str | None = None
    audience: str | None = None
    jwks_url: str | None = None
    public_url: str | None = None
    token_file: str | None = None  # default <NEXUS_HOME>/tokens.json; redis://... on a cluster

    @model_validator(mode="after")
    def _oauth_needs_issuer(self) -> ServeAuth:
        if self.mode == "oauth" and (not self.issuer or not self.audience):
            raise ValueError("--auth oauth needs --issuer URL and --audience AUD")
        # OAuth settings without `--auth oauth` would leave the server open while its
        # operator believes it checks tokens: say so instead of ignoring them.
        stray = [f for f in _OAUTH_ONLY if getattr(self, f)]
        if self.mode != "oauth" and stray:
            names = ", ".join("--" + f.replace("_", "-") for f in stray)
            raise ValueError(
                f"{names} only apply with --auth oauth (serve.auth mode: oauth in nex.yaml), "
                f"but the mode is {self.mode!r}"
            )
        return self

    @property
    def enabled(self) -> bool:
        return self.mode != "none"

    @classmethod
    def resolve(cls, configured: Any, **given: Any) -> ServeAuth:
        """nex.yaml's ``serve.auth`` (``configured``) overridden by the command line's
        non-``None`` options in ``given``. Raises :class:`ConfigError`."""
        base: dict[str, Any]
        if configured is None:
            base = {}
        elif isinstance(configured, str):
            base = {"mode": configured}
        elif isinstance(configured, dict):
            base = dict(configured)
        else:
            raise ConfigError(
                f"serve.auth in nex.yaml must be a mode (tokens, oauth) or a mapping, "
                f"got {configured!r}."
            )
        given = {k: v for k, v in given.items() if v is not None}
        if given.get("mode", "oauth") != "oauth":
            # `--auth none|tokens` overrides an oauth block of nex.yaml as a whole
            base = {k: v for k, v in base.items() if k not in _OAUTH_ONLY}
        base.update(given)
        try:
            return cls.model_validate(base)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'auth'}: {e['msg']}" for e in exc.errors()
            )
            raise ConfigError(
                f"Invalid serve authentication settings ({problems}). Use --auth tokens, or "
                "--auth oauth --issuer URL --audience AUD (or serve.auth in nex.yaml)."
            ) from None


def discover_jwks_url(issuer: str, *, timeout: float = 10.0) -> str:
    """The ``jwks_uri`` of ``issuer``'s RFC 8414 (then OpenID Connect) metadata.
    Raises :class:`ConfigError` naming both addresses tried."""
    base = issuer.rstrip("/")
    tried = []
    for suffix in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
        url = base + suffix
        tried.append(url)
        try:
            with urllib.request.urlopen(url, timeout=timeout) as response:
                document = json.load(response)
        except (OSError, ValueError, urllib.error.URLError):
            continue
        if not isinstance(document, dict):
            continue
        named = document.get("issuer")
        if isinstance(named, str) and named and named != issuer:
            # Tokens carry the metadata's `iss`; with another --issuer every one is refused.
            raise ConfigError(
                f"The issuer's metadata at {url} names the issuer {named!r}, not {issuer!r}: "
                f"tokens carry {named!r} as `iss`, so pass --issuer {named} (character for "
                "character, a trailing slash included)."
            )
        jwks = document.get("jwks_uri")
        if isinstance(jwks, str) and jwks:
            return jwks
    raise ConfigError(
        f"Cannot find the signing keys of issuer {issuer!r}: no jwks_uri at "
        f"{' or '.join(tried)}. Check --issuer, or give the keys' address with --jwks-url."
    )


def auth_app_options(auth: ServeAuth, resource_url: str) -> dict[str, Any]:
    """``auth=`` and ``token_verifier=`` for the SDK's ``streamable_http_app`` (``{}`` when
    authentication is off). ``resource_url`` is the server's own URL as clients see it."""
    from mcp.server.auth.settings import AuthSettings

    if not auth.enabled:
        return {}
    if auth.mode == "tokens":
        from .tokens import open_token_store
        from .verifiers import ApiTokenVerifier

        verifier: Any = ApiTokenVerifier(open_token_store(auth.token_file))
        # No authorization server hands out static tokens, so there is no RFC 9728
        # metadata to point at: the 401 says only that a bearer token is needed.
        settings = AuthSettings(
            issuer_url=resource_url,  # type: ignore[arg-type]  # pydantic parses the str
            resource_server_url=None,
            required_scopes=[READ_SCOPE],
        )
        return {"auth": settings, "token_verifier": verifier}
    from .verifiers import JwksCache, JwtVerifier

    issuer, audience = auth.issuer or "", auth.audience or ""  # the validator said both are set
    jwks_url = auth.jwks_url or discover_jwks_url(issuer)
    verifier = JwtVerifier(issuer, audience, JwksCache(jwks_url))
    settings = AuthSettings(
        issuer_url=issuer,  # type: ignore[arg-type]
        resource_server_url=auth.public_url or resource_url,  # type: ignore[arg-type]
        required_scopes=[READ_SCOPE],
        # The verifier checks `aud` itself (the audience may be a name, not this URL).
        validate_token_resource=False,
    )
    return {"auth": settings, "token_verifier": verifier}


def identity_of(request: Any) -> tuple[str | None, Any]:
    """``(principal, ceiling)`` of an authenticated HTTP request (a Starlette request): the
    token's subject and the highest level its scopes grant. ``(None, None)`` without auth."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    if not isinstance(user, AuthenticatedUser):
        return None, None
    token = user.access_token
    return token.subject or token.client_id, grant_of_scopes(token.scopes) or "read_only"
