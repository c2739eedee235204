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

import difflib
import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ...core.config.loading import where_set
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
    def _consistent(self) -> ServeAuth:
        problem = _inconsistency(self)
        if problem is not None:
            raise ValueError(problem[1])
        return self

    @property
    def enabled(self) -> bool:
        return self.mode != "none"

    @classmethod
    def resolve(cls, configured: Any, files: Sequence[str | Path] = (), **given: Any) -> ServeAuth:
        """nex.yaml's ``serve.auth`` (``configured``) overridden by the command line's
        non-``None`` options in ``given``. ``files`` are the nex.yaml files that were merged
        (``Settings.files``), so that an error names the file and line of the bad setting.
        A ``token_file`` is read relative to the nex.yaml that names it, and must exist.
        Raises :class:`ConfigError`."""
        given = {k: v for k, v in given.items() if v is not None}
        at = _Locator(files, configured, given)
        base: dict[str, Any]
        if configured is None:
            base = {}
        elif isinstance(configured, str):
            base = {"mode": configured}
        elif isinstance(configured, dict):
            base = dict(configured)
        else:
            raise ConfigError(
                f"{at.file(())}serve.auth must be a mode (none, tokens, oauth) or a mapping, "
                f"got {configured!r}. Write `auth: tokens`, or `auth: {{mode: oauth, issuer: "
                "URL, audience: AUD}` under `serve:`."
            )
        if given.get("mode", "oauth") != "oauth":
            # `--auth none|tokens` overrides an oauth block of nex.yaml as a whole
            base = {k: v for k, v in base.items() if k not in _OAUTH_ONLY}
        base.update(given)
        try:
            auth = cls.model_validate(base)
        except ValidationError as exc:
            raise ConfigError(" ".join(at.describe(e, base) for e in exc.errors()[:3])) from None
        return at.found_token_file(auth)


def _option(key: str) -> str:
    """How setting ``key`` is spelt on the command line."""
    return "--auth" if key == "mode" else "--" + key.replace("_", "-")


_FIX = (
    "Use `auth: tokens`, or `auth: {mode: oauth, issuer: URL, audience: AUD}` under `serve:` "
    "(or --auth tokens, --auth oauth --issuer URL --audience AUD)."
)


def _inconsistency(auth: ServeAuth) -> tuple[str, str] | None:
    """``(setting at fault, why)`` when the settings contradict each other."""
    if auth.mode == "oauth" and (not auth.issuer or not auth.audience):
        return "mode", (
            "mode oauth needs the issuer and the audience: `issuer: URL` and `audience: AUD` "
            "in serve.auth of nex.yaml, or --issuer URL and --audience AUD"
        )
    # OAuth settings without `--auth oauth` would leave the server open while its
    # operator believes it checks tokens: say so instead of ignoring them.
    stray = [f for f in _OAUTH_ONLY if getattr(auth, f)]
    if auth.mode != "oauth" and stray:
        names = ", ".join("--" + f.replace("_", "-") for f in stray)
        return stray[0], (
            f"{names} only apply with --auth oauth (serve.auth mode: oauth in nex.yaml), "
            f"but the mode is {auth.mode!r}: set that mode, or remove them"
        )
    return None


class _Locator:
    """Where a ``serve.auth`` setting came from: ``--option``, or nex.yaml's file and line."""

    def __init__(self, files: Sequence[str | Path], configured: Any, given: dict[str, Any]):
        self.files, self.configured, self.given = files, configured, given

    def file(self, key: tuple[str, ...]) -> str:
        """``"PATH, line N: "`` of ``serve.auth`` + ``key`` (the nearest enclosing key
        found), or ``""``."""
        for depth in range(len(key), -1, -1):
            found = where_set(self.files, ("serve", "auth", *key[:depth]))
            if found is not None:
                return f"{found[0]}, line {found[1]}: "
        return ""

    def of(self, key: str) -> str:
        """Where setting ``key`` came from, as a prefix of the message."""
        if key in self.given:
            return ""  # the message names the option
        if isinstance(self.configured, dict) and key in self.configured:
            return self.file((key,))
        return self.file(("mode",) if isinstance(self.configured, dict) else ())

    def describe(self, error: Any, base: dict[str, Any]) -> str:
        loc = [str(part) for part in error["loc"]]
        if not loc:  # the settings contradict each other: blame the one at fault
            fault = _inconsistency(ServeAuth.model_construct(**base))
            key, why = fault if fault is not None else ("mode", str(error["msg"]))
            if key in _OAUTH_ONLY and key not in self.given:  # worded for nex.yaml
                why = (
                    f"serve.auth.{key} only applies with `mode: oauth`, but the mode is "
                    f"{base.get('mode', 'none')!r}: set `mode: oauth` in serve.auth (or pass "
                    f"--auth oauth), or remove `{key}:`"
                )
            return f"{self.of(key)}{why}."
        key = loc[0]
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(key, list(ServeAuth.model_fields), n=1)
            hint = f"Did you mean {close[0]!r}?" if close else _FIX
            known = ", ".join(ServeAuth.model_fields)
            return f"{self.file((key,))}unknown key serve.auth.{key} (known: {known}). {hint}"
        shown = f" (got {error.get('input')!r})"
        name = _option(key) if key in self.given else f"serve.auth.{key}"
        return f"{self.of(key)}{name}: {error['msg']}{shown}. {_FIX}"

    def found_token_file(self, auth: ServeAuth) -> ServeAuth:
        """``auth`` with its ``token_file`` relative to the nex.yaml naming it; refused when
        that file does not exist (every token would be refused, for a typo)."""
        named = auth.token_file
        if auth.mode != "tokens" or not named or "://" in named:
            return auth
        path = Path(named).expanduser()
        where = where_set(self.files, ("serve", "auth", "token_file"))
        if not path.is_absolute() and where is not None:
            path = where[0].resolve().parent / path
        if path.is_file():
            return auth.model_copy(update={"token_file": str(path)})
        folder = "" if path.parent.is_dir() else f" (nor its folder {path.parent})"
        raise ConfigError(
            f"{self.file(('token_file',))}serve.auth.token_file: there is no token file at "
            f"{path}{folder}. Fix the path (a relative one is read from the folder of the "
            f"nex.yaml), or make the file with `nexus-tools tokens create NAME --token-file "
            f"{path}`."
        )


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


def auth_app_options(auth: ServeAuth, resource_url: str, token_store: Any = None) -> dict[str, Any]:
    """``auth=`` and ``token_verifier=`` for the SDK's ``streamable_http_app`` (``{}`` when
    authentication is off). ``resource_url`` is the server's own URL as clients see it;
    ``token_store`` (``--auth tokens``) is the store to check tokens against, else the one
    ``auth.token_file`` names."""
    from mcp.server.auth.settings import AuthSettings

    if not auth.enabled:
        return {}
    if auth.mode == "tokens":
        from .tokens import open_token_store
        from .verifiers import ApiTokenVerifier

        store = token_store if token_store is not None else open_token_store(auth.token_file)
        verifier: Any = ApiTokenVerifier(store)
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
