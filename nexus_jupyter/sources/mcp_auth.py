"""Signing in to OAuth-protected upstream MCP servers (``auth:`` in nex.yaml), on the SDK's
``mcp.client.auth`` providers.

- ``type: client_credentials``: a service signs in with its own id and secret, no person.
- ``type: oauth``: authorization code + PKCE. The sign-in link goes to every registered link
  opener (the notebook shows it as a link; ``add_link_opener``), to the source's status and
  log, and to a local browser when there is one; the browser then comes back to a one-shot
  listener on a loopback port with the code.

Either way the tokens (and a dynamically registered client) are kept in the credential store
under ``mcp-oauth:<server>`` and refreshed by the SDK when they expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import sys
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..core.config.mcp_auth import McpAuthSettings
from ..core.errors import SourceError
from .sign_in_links import add_link_opener, offer_to_openers

__all__ = ["CredentialTokenStorage", "add_link_opener", "build_auth", "refusal_reason"]

log = logging.getLogger(__name__)

#: How long a person has to finish signing in before the attempt fails (and is retried).
SIGN_IN_TIMEOUT_S = 300.0


class CredentialTokenStorage:
    """The SDK's ``TokenStorage`` on the credential store: ``mcp-oauth:<server>`` holds
    ``tokens`` and ``client`` as JSON (masked in every output like any credential)."""

    def __init__(self, credentials: Any, server: str, preset_client: Any = None) -> None:
        self.credentials = credentials
        self.service = f"mcp-oauth:{server}"
        self.preset_client = preset_client

    def _read(self, key: str, model: Any) -> Any:
        raw = self.credentials.lookup(self.service, key) if self.credentials is not None else None
        if not raw:
            return None
        try:
            return model.model_validate_json(raw)
        except ValueError:
            log.warning("ignoring unreadable %s/%s in the credential store", self.service, key)
            return None

    def _write(self, key: str, value: Any) -> None:
        if self.credentials is not None:
            self.credentials.set(self.service, key, value.model_dump_json(exclude_none=True))

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        return self._read("tokens", OAuthToken)

    async def set_tokens(self, tokens: Any) -> None:
        self._write("tokens", tokens)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        return self._read("client", OAuthClientInformationFull) or self.preset_client

    async def set_client_info(self, client_info: Any) -> None:
        self._write("client", client_info)


class LoopbackCallback:
    """An HTTP listener on ``127.0.0.1`` that takes the browser's redirect after each sign-in
    (the first, and any step-up to more scopes) and hands back its code."""

    def __init__(self, port: int = 0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.redirect_uri = f"http://127.0.0.1:{self.sock.getsockname()[1]}/callback"
        self._server: asyncio.Server | None = None
        self._waiting: asyncio.Future[dict[str, str]] | None = None

    async def wait(self, timeout: float = SIGN_IN_TIMEOUT_S) -> Any:
        from mcp.client.auth import AuthorizationCodeResult

        self._waiting = asyncio.get_running_loop().create_future()
        if self._server is None:  # it owns the socket from now on (closing it closes both)
            self._server = await asyncio.start_server(self._answer, sock=self.sock)
        try:
            async with asyncio.timeout(timeout):
                query = await self._waiting
        except TimeoutError:
            raise SourceError(
                f"Nobody signed in within {timeout:g} s; the sign-in link is offered again "
                "at the next connection attempt."
            ) from None
        # `iss` too (RFC 9207): the SDK checks it against the issuer it discovered.
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await reader.readline()).decode("latin-1")
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass
            target = line.split(" ")[1] if line.count(" ") >= 2 else ""
            query = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
            ok = "code" in query
            text = "Signed in; you can close this tab." if ok else "Sign-in failed."
            writer.write(
                f"HTTP/1.1 {200 if ok else 400} {'OK' if ok else 'Bad Request'}\r\n"
                "content-type: text/plain\r\nconnection: close\r\n"
                f"content-length: {len(text)}\r\n\r\n{text}".encode()
            )
            await writer.drain()
            waiting = self._waiting
            if waiting is None or waiting.done():
                return  # nobody is signing in now: a stray or repeated request
            if ok:
                waiting.set_result(query)
            else:
                refusal = query.get("error", "no code in the redirect")
                waiting.set_exception(SourceError(f"The sign-in was refused: {refusal!r}."))
        finally:
            writer.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        with contextlib.suppress(OSError):
            self.sock.close()


def _offer_link(server: str, url: str, status: Callable[[str], Any] | None) -> None:
    if status is not None:
        status(url)
    offer_to_openers(server, url)
    print(f"MCP server {server!r} needs you to sign in: {url}", file=sys.stderr, flush=True)
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or sys.platform == "darwin":
        # Only with a desktop: without one, webbrowser may start a text browser that
        # takes over the terminal.
        with contextlib.suppress(Exception):
            webbrowser.open(url)


def build_auth(
    settings: McpAuthSettings,
    *,
    server: str,
    url: str,
    credentials: Any,
    fill: Callable[[str | None], str | None],
    on_link: Callable[[str], Any] | None = None,
) -> tuple[Any, Callable[[], None]]:
    """An ``httpx2.Auth`` for ``url`` per ``settings`` and a function that releases what it
    holds (the callback port). ``fill`` expands ``${credentials:...}`` in a setting."""
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    client_id, secret = fill(settings.client_id), fill(settings.client_secret)
    if settings.type == "client_credentials":
        from mcp.client.auth.extensions.client_credentials import (
            ClientCredentialsOAuthProvider,
        )

        if not client_id or not secret:
            raise SourceError(
                f"MCP server {server!r}: auth.client_id and auth.client_secret are empty; "
                "set them in nex.yaml (the secret as ${credentials:SERVICE/KEY})."
            )
        service = ClientCredentialsOAuthProvider(
            url,
            CredentialTokenStorage(credentials, server),
            client_id,
            secret,
            scope=settings.scope,
            issuer=settings.issuer or _no_issuer(server),
        )
        return service, lambda: None
    from mcp.client.auth import OAuthClientProvider

    callback = LoopbackCallback(settings.redirect_port)
    metadata = OAuthClientMetadata(
        client_name=f"nexus-tools ({server})",
        redirect_uris=[callback.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_basic" if secret else "none",
        scope=settings.scope,
    )
    preset = None
    if client_id:
        preset = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=secret,
            **metadata.model_dump(exclude_none=True),
        )

    async def redirect(link: str) -> None:
        _offer_link(server, link, on_link)

    provider = OAuthClientProvider(
        url,
        metadata,
        CredentialTokenStorage(credentials, server, preset),
        redirect_handler=redirect,
        callback_handler=callback.wait,
    )
    return provider, callback.close


def _no_issuer(server: str) -> Any:
    # The SDK warns (deprecated) when no issuer pins the authorization server; say it once
    # in our words and let discovery choose, as the SDK does.
    log.warning(
        "MCP server %r: auth.issuer is not set, so any authorization server the resource "
        "names is trusted with the client secret; set auth.issuer in nex.yaml.",
        server,
    )
    return None


def describe_tokens(credentials: Any, server: str) -> dict[str, Any]:
    """What the status may show about stored tokens (never the tokens)."""
    raw = credentials.lookup(f"mcp-oauth:{server}", "tokens") if credentials else None
    if not raw:
        return {"signed_in": False}
    try:
        scope = json.loads(raw).get("scope")
    except ValueError:
        scope = None
    return {"signed_in": True, "scope": scope}


def refusal_reason(response: Any, *, signs_in: bool) -> str | None:
    """What a 401/403 ``response`` of an upstream MCP server means and how to fix it
    (``signs_in``: the server has ``auth:`` in nex.yaml); ``None`` for any other response."""
    if response.status_code not in (401, 403) or response.request.url.path.startswith(
        "/.well-known"
    ):
        return None
    challenge = response.headers.get("www-authenticate", "")
    fix = (
        "its sign-in failed or was refused; check auth: in nex.yaml"
        if signs_in
        else "add auth: {type: oauth} (or client_credentials) to this server in nex.yaml, "
        "or a token in headers: {Authorization: 'Bearer ${credentials:SERVICE/token}'}"
    )
    what = "needs authentication" if response.status_code == 401 else "refused the token"
    return (
        f"HTTP {response.status_code}: the server {what}"
        + (f" ({challenge})" if challenge else "")
        + f"; {fix}"
    )
