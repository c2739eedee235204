"""The 401 of ``nexus-tools serve``: a missing token and a refused one told apart (RFC 6750 §3).

The SDK's ``RequireAuthMiddleware`` answers both with ``error="invalid_token"``,
"Authentication required". :func:`fit_auth_routes` swaps it, on the SDK's own ``/mcp`` route,
for :class:`ExplainedAuth`, which answers

- no ``Authorization: Bearer`` header: ``WWW-Authenticate: Bearer`` with no error code (as
  §3.1 asks), ``resource_metadata`` where the SDK gives one, and a body saying how to get a
  token (``nexus-tools tokens create``, or the OAuth issuer);
- a token that is not accepted: ``error="invalid_token"`` and a description that says so,
  and what to do. Only what the token's holder can see in it anyway is said (a JWT that is
  genuinely the issuer's and expired); never whether a static token existed and was revoked.

A valid token without the ``tools:read`` scope gets 403 ``insufficient_scope`` with the scopes it
has and the one to ask for (the SDK's says only "Required scope: tools:read"). In OAuth mode both challenges carry
``scope="tools:read"``: the SDK's client requests the challenge's scope, else every scope in the
RFC 9728 metadata, which lists all of them (:data:`~.scopes.SCOPE_GRANTS`) since the metadata
says what the server understands, not what it needs.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, RequireAuthMiddleware
from starlette.types import Receive, Scope, Send

from .scopes import SCOPE_GRANTS

__all__ = ["ExplainedAuth", "ExplainingVerifier", "bearer_token_of", "fit_auth_routes"]


@runtime_checkable
class ExplainingVerifier(Protocol):
    """A token verifier that can tell a client how to get a token, and why one was refused."""

    def how_to_get_a_token(self) -> str:
        """One sentence for a client that sent no token."""
        ...

    async def refusal(self, token: str) -> str:
        """Why ``token`` was refused, as far as is safe to tell whoever sent it ("it is
        unknown or has been revoked"); called only for a token the verifier refused."""
        ...


def bearer_token_of(scope: Scope) -> str | None:
    """The token of the request's ``Authorization: Bearer`` header (as the SDK reads it), or
    ``None`` when the request has no such header."""
    for key, value in scope.get("headers", ()):
        if key.lower() == b"authorization":
            text = value.decode("latin-1")
            return text[7:] if text.lower().startswith("bearer ") else None
    return None


class ExplainedAuth(RequireAuthMiddleware):
    """``RequireAuthMiddleware`` whose 401 says whether the token was missing or refused."""

    def __init__(
        self,
        app: Any,
        required_scopes: list[str],
        resource_metadata_url: Any,
        verifier: Any,
        *,
        challenge_scope: str | None = None,
    ) -> None:
        super().__init__(app, required_scopes, resource_metadata_url)
        self.verifier = verifier
        self.challenge_scope = challenge_scope

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if isinstance(user, AuthenticatedUser):
            held = set(user.scopes or ())
            missing = [s for s in self.required_scopes if s not in held]
            if missing:
                await self._challenge(send, "insufficient_scope", _short_of(missing, held), 403)
                return
            await self.app(scope, receive, send)
            return
        token = bearer_token_of(scope)
        if token is None:
            await self._challenge(send, None, _how_to_get(self.verifier))
            return
        reason = await _refusal(self.verifier, token)
        await self._challenge(send, "invalid_token", _refused(reason, self.verifier))

    async def _challenge(
        self, send: Send, error: str | None, description: str, status: int = 401
    ) -> None:
        parts = []
        if error is not None:  # RFC 6750 §3.1: no error information when no token was sent
            parts += [f'error="{error}"', f'error_description="{_quotable(description)}"']
        if self.challenge_scope:
            parts.append(f'scope="{self.challenge_scope}"')
        if self.resource_metadata_url:
            parts.append(f'resource_metadata="{self.resource_metadata_url}"')
        challenge = "Bearer" + (" " + ", ".join(parts) if parts else "")
        body = json.dumps(
            {"error": error, "error_description": description}
            if error
            else {"error_description": description}
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", challenge.encode("latin-1")),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _how_to_get(verifier: Any) -> str:
    told = verifier.how_to_get_a_token() if isinstance(verifier, ExplainingVerifier) else ""
    return "This MCP server needs a bearer token: send 'Authorization: Bearer TOKEN'." + (
        f" {told}" if told else ""
    )


async def _refusal(verifier: Any, token: str) -> str:
    if not isinstance(verifier, ExplainingVerifier):
        return "it is unknown, revoked or expired"
    return await verifier.refusal(token)


def _refused(reason: str, verifier: Any) -> str:
    told = verifier.how_to_get_a_token() if isinstance(verifier, ExplainingVerifier) else ""
    return f"The bearer token was not accepted: {reason}." + (f" {told}" if told else "")


def _short_of(missing: list[str], held: set[str]) -> str:
    """Why a valid token is not enough (RFC 6750 ``insufficient_scope``), and what to ask for."""
    has = ", ".join(sorted(held)) or "no scope"
    levels = ", ".join(SCOPE_GRANTS)
    return (
        f"The token is valid but lacks the scope {' '.join(missing)} (it has: {has}). Ask the "
        f"issuer for a token with {missing[0]}; this server understands {levels}."
    )


def _quotable(text: str) -> str:
    """``text`` fit for a quoted ``error_description`` (RFC 6750: no ``"`` nor ``\\``)."""
    return "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\' else "'" for c in text)


def fit_auth_routes(app: Any, options: dict[str, Any]) -> None:
    """Put :class:`ExplainedAuth` on the ``/mcp`` route of the SDK's Starlette ``app`` and list
    every ``tools:`` scope in its RFC 9728 metadata. ``options`` are the ``auth=`` /
    ``token_verifier=`` the app was built with. Raises ``RuntimeError`` when the app lacks
    the SDK's auth route (an SDK whose layout changed: the tests say so, not a silent 401)."""
    from mcp.server.auth.routes import create_protected_resource_routes
    from starlette.routing import Route

    settings, verifier = options["auth"], options["token_verifier"]
    routes = app.router.routes
    guarded = [i for i, r in enumerate(routes) if isinstance(r, Route) and _sdk_guard(r)]
    if len(guarded) != 1:
        raise RuntimeError("the MCP SDK's app has no single RequireAuthMiddleware route")
    old = routes[guarded[0]]
    routes[guarded[0]] = Route(
        old.path,
        endpoint=ExplainedAuth(
            old.endpoint.app,
            old.endpoint.required_scopes,
            old.endpoint.resource_metadata_url,
            verifier,
            challenge_scope=" ".join(settings.required_scopes or [])
            if settings.resource_server_url
            else None,
        ),
        methods=old.methods,
        name=old.name,
    )
    if settings.resource_server_url is None:
        return  # static tokens: no authorization server, no metadata
    for new in create_protected_resource_routes(
        resource_url=settings.resource_server_url,
        authorization_servers=[settings.issuer_url],
        scopes_supported=list(SCOPE_GRANTS),
    ):
        at = [i for i, r in enumerate(routes) if getattr(r, "path", None) == new.path]
        if len(at) != 1:
            raise RuntimeError(f"the MCP SDK's app has no single route at {new.path}")
        routes[at[0]] = new


def _sdk_guard(route: Any) -> bool:
    return type(route.endpoint) is RequireAuthMiddleware
