"""Bearer-token verifiers for the SDK's auth middleware (``mcp.server.auth``).

:class:`ApiTokenVerifier` accepts the static tokens of a :class:`TokenStore`;
:class:`JwtVerifier` accepts JWT access tokens signed by an OAuth issuer's keys (its JWKS),
checking the signature, ``iss``, ``aud``, ``exp``/``nbf`` and ``sub``. Both answer ``None``
for anything they do not accept (the middleware then sends 401); the subject becomes the
principal of the calls. Both also say how a client gets a token and, as far as is safe,
why one was refused (see :mod:`.challenge`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from mcp.server.auth.provider import AccessToken

from ...core.errors import ConfigError
from .scopes import expand_scopes, scopes_for_grant
from .tokens import RESERVED_NAMES, TokenStore

__all__ = ["ApiTokenVerifier", "JwksCache", "JwtVerifier"]

log = logging.getLogger(__name__)

#: Signature algorithms accepted in JWTs: asymmetric only, so the issuer's public keys can
#: never be used as an HMAC secret ("alg confusion"), and never ``none``.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
#: Clock skew tolerated on ``exp``/``nbf``/``iat``.
LEEWAY_S = 30
#: A token names a key the cached JWKS lacks: fetch again, but no more often than this, so
#: forged tokens with made-up key ids cannot make us hammer the issuer.
REFETCH_INTERVAL_S = 30.0
#: Keys are re-read this often even when every token's key is known (key rotation).
JWKS_MAX_AGE_S = 3600.0


class ApiTokenVerifier:
    """Static API tokens (``nexus-tools tokens create``) as the SDK's ``TokenVerifier``."""

    def __init__(self, store: TokenStore) -> None:
        self.store = store

    async def verify_token(self, token: str) -> AccessToken | None:
        found = self.store.lookup(token)
        if found is None:
            return None
        return AccessToken(
            token=token,
            client_id=found.name,
            scopes=scopes_for_grant(found.grant),
            subject=found.name,
            claims={"iss": "nexus-tools tokens"},
        )

    def how_to_get_a_token(self) -> str:
        return (
            "Whoever runs this server makes one with `nexus-tools tokens create NAME` "
            "(it is printed once)."
        )

    async def refusal(self, token: str) -> str:
        # Revoked tokens are deleted: unknown and revoked look alike, by design.
        return "it is unknown or has been revoked"


class JwksCache:
    """An issuer's signing keys, fetched over HTTP(S) and kept for :data:`JWKS_MAX_AGE_S`."""

    def __init__(self, jwks_url: str, *, timeout: float = 10.0) -> None:
        self.jwks_url = jwks_url
        self.timeout = timeout
        self._keys: dict[str, Any] = {}
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> Any | None:
        """The key with id ``kid`` (the only key when the token names none), else ``None``."""
        now = time.monotonic()
        stale = now - self._fetched > JWKS_MAX_AGE_S
        missing = self._pick(kid) is None and now - self._fetched > REFETCH_INTERVAL_S
        if stale or missing:
            async with self._lock:
                if time.monotonic() - self._fetched > min(REFETCH_INTERVAL_S, JWKS_MAX_AGE_S):
                    await self._fetch()
        return self._pick(kid)

    def _pick(self, kid: str | None) -> Any | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _fetch(self) -> None:
        import httpx2
        import jwt

        self._fetched = time.monotonic()  # also on failure: retry only after the interval
        try:
            async with httpx2.AsyncClient(timeout=self.timeout) as client:
                response = await client.get(self.jwks_url)
                response.raise_for_status()
                document = response.json()
        except Exception as exc:  # the server keeps its old keys and says why in the log
            log.warning("cannot fetch the issuer's keys from %s: %s", self.jwks_url, exc)
            return
        keys: dict[str, Any] = {}
        for i, entry in enumerate(document.get("keys", []) if isinstance(document, dict) else []):
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                jwk = jwt.PyJWK(entry)
            except Exception as exc:  # one odd key must not hide the others
                log.warning("skipping key %d of %s: %s", i, self.jwks_url, exc)
                continue
            keys[str(entry.get("kid", f"#{i}"))] = jwk
        self._keys = keys


class JwtVerifier:
    """JWT access tokens from ``issuer`` for ``audience`` (RFC 9068 style), as the SDK's
    ``TokenVerifier``.

    Scopes come from ``scope`` (space-separated) or ``scp`` (a list); a ``tools:`` scope
    implies the lower ones (see :mod:`.scopes`). ``sub`` is the principal.
    """

    def __init__(self, issuer: str, audience: str, jwks: JwksCache) -> None:
        if not issuer or not audience:
            raise ConfigError(
                "OAuth needs both the issuer and the audience: --issuer URL --audience AUD "
                "(or serve: {auth: {mode: oauth, issuer: ..., audience: ...}} in nex.yaml)."
            )
        self.issuer = issuer
        self.audience = audience
        self.jwks = jwks

    async def verify_token(self, token: str) -> AccessToken | None:
        import jwt

        try:
            claims = await self._claims(token, leeway=LEEWAY_S, verify_exp=True)
        except jwt.PyJWTError as exc:
            log.info("refused a bearer token: %s", exc)
            return None
        if claims is None:
            return None
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject or subject in RESERVED_NAMES:
            return None
        return AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or subject),
            scopes=expand_scopes(_scopes_of(claims)),
            expires_at=int(claims["exp"]),
            resource=self.audience,
            subject=subject,
            claims=claims,
        )

    async def _claims(
        self, token: str, *, leeway: float, verify_exp: bool
    ) -> dict[str, Any] | None:
        """The claims of ``token`` once its signature, ``iss`` and ``aud`` (and ``exp`` when
        ``verify_exp``) are checked; ``None`` for a token with no usable header or key.
        Raises ``jwt.PyJWTError`` for one that fails a check."""
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        if header.get("alg") not in ALGORITHMS:
            return None
        kid = header.get("kid")
        key = await self.jwks.key(kid if isinstance(kid, str) else None)
        if key is None:
            return None
        claims: dict[str, Any] = jwt.decode(
            token,
            key=key,
            algorithms=[header["alg"]],
            audience=self.audience,
            issuer=self.issuer,
            leeway=leeway,
            options={"require": ["exp", "iss", "aud", "sub"], "verify_exp": verify_exp},
        )
        return claims

    def how_to_get_a_token(self) -> str:
        return (
            f"Access tokens come from the OAuth issuer {self.issuer} for the audience "
            f"{self.audience!r}: sign in there (an MCP client does it by itself, starting from "
            "the resource_metadata of WWW-Authenticate)."
        )

    async def refusal(self, token: str) -> str:
        """ "it has expired" for a token that is this issuer's, for this audience and valid
        but for its age (its holder can read that in it anyway); a generic reason else."""
        import jwt

        try:
            claims = await self._claims(token, leeway=0, verify_exp=False)
            expired = claims is not None and float(claims["exp"]) < time.time()
        except (jwt.PyJWTError, TypeError, ValueError):
            expired = False
        if expired:
            return "it has expired; sign in again (or refresh it) for a new one"
        return f"it is unknown or expired, or not an access token of {self.issuer}"


def _scopes_of(claims: dict[str, Any]) -> list[str]:
    scope = claims.get("scope")
    if isinstance(scope, str):
        return scope.split()
    scp = claims.get("scp")
    if isinstance(scp, list):
        return [s for s in scp if isinstance(s, str)]
    return []
