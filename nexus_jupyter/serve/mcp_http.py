"""Streamable HTTP for the MCP server: uvicorn on a socket we bind ourselves, behind a strict
``Host``/``Origin`` check (DNS-rebinding protection).

A web page on another site can make a browser send requests to ``127.0.0.1``; with DNS
rebinding it can even make them look same-origin. So every request must name this server in
``Host`` (a loopback name or the bound address, with the bound port) and, when it carries an
``Origin``, come from a loopback or bound-address origin. Anything else is refused before the
MCP layer sees it: ``421`` for a foreign ``Host``, ``403`` for a foreign ``Origin``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

__all__ = ["HostGuard", "bind_socket", "run_uvicorn"]

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def _split_host(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` -> (host, port); ``None`` when malformed."""
    try:
        parts = urlsplit(f"//{value}")
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if not host or parts.username is not None or parts.password is not None or parts.path:
        return None
    return host, port


def exact_hosts(names: Sequence[str]) -> set[str]:
    """The ``NAME:PORT`` entries of ``names`` (lowercase): Hosts allowed exactly as given."""
    return {n.lower() for n in names if (parsed := _split_host(n)) is not None and parsed[1]}


class HostGuard:
    """ASGI middleware: refuse requests whose ``Host`` or ``Origin`` is not this server."""

    def __init__(self, app: Any, host: str, port: int, extra_names: Sequence[str] = ()) -> None:
        self.app = app
        self.port = port
        self.names = set(LOOPBACK_NAMES)
        if host not in _WILDCARDS:
            self.names.add(host.strip("[]").lower())
        # NAME:PORT allows that exact Host, e.g. the address of a load balancer in front.
        self.exact = exact_hosts(extra_names)
        self.names.update(n.strip("[]").lower() for n in extra_names if n.lower() not in self.exact)
        self.rejected = 0
        self.closed = False

    def host_ok(self, value: str | None) -> bool:
        parsed = _split_host(value) if value else None
        if parsed is None:
            return False
        host, port = parsed
        if value is not None and value.lower() in self.exact:
            return True
        return host.lower() in self.names and (port or 80) == self.port

    def origin_ok(self, value: str | None) -> bool:
        if value is None:
            return True  # not a browser, or a same-origin GET: Host already checked
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or parts.path not in ("", "/"):
            return False
        if parts.username is not None or parts.query or parts.fragment:
            return False
        hostname = (parts.hostname or "").lower()
        return hostname in self.names or any(e.startswith(f"{hostname}:") for e in self.exact)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, list[str]] = {}
        for key, val in scope.get("headers", ()):
            headers.setdefault(key.decode("latin-1").lower(), []).append(val.decode("latin-1"))
        hosts, origins = headers.get("host", []), headers.get("origin", [])
        status, text = 0, b""
        if self.closed:
            status, text = 503, b"This MCP server is shutting down"
        elif len(hosts) != 1 or not self.host_ok(hosts[0]):
            status, text = 421, b"Invalid Host header: this MCP server only answers to localhost"
        elif len(origins) > 1 or not self.origin_ok(origins[0] if origins else None):
            status, text = 403, b"Invalid Origin header: cross-site requests are refused"
        if status:
            self.rejected += status != 503
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"text/plain; charset=utf-8"),
                        (b"content-length", str(len(text)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": text})
            return
        await self._serve(scope, receive, send)

    async def _serve(self, scope: Any, receive: Any, send: Any) -> None:
        """The MCP app's answer; a request still running when the server stops is cut short
        quietly. Stopping cancels what is left (uvicorn after its grace period, the loop as
        it closes): uvicorn would log that as "Exception in ASGI application" with the
        cancellation's traceback (in a kernel: printed into the notebook)."""
        answered = {"started": False, "complete": False}

        async def tracked(message: Any) -> None:
            if message["type"] == "http.response.start":
                answered["started"] = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                answered["complete"] = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except asyncio.CancelledError:
            if not self.closed:
                raise
            log.debug("a request to %s was cut short by the shutdown", scope.get("path"))
            await _end_response(send, **answered)


async def _end_response(send: Any, started: bool, complete: bool) -> None:
    """Finish a response the shutdown interrupted: a 503 if none began, else its last
    chunk (the client sees the stream end; uvicorn then has nothing to complain about)."""
    text = b"This MCP server is shutting down"
    messages: list[dict[str, Any]] = []
    if not started:
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"connection", b"close")]
        messages.append({"type": "http.response.start", "status": 503, "headers": headers})
        messages.append({"type": "http.response.body", "body": text})
    elif not complete:
        messages.append({"type": "http.response.body", "body": b"", "more_body": False})
    try:
        for message in messages:
            await send(message)
    except Exception:  # the connection is already gone: nothing more to tell it
        log.debug("could not end an interrupted response", exc_info=True)


def check_address(host: str, port: int, *, authenticated: bool = False) -> None:
    """Refuse what this server must not listen on. Raises :class:`ConfigError`.

    Its tools can write files that the watcher then imports, so without client
    authentication it listens on loopback only; anything else would let whoever reaches the
    port run code here. With ``authenticated`` (``--auth``) any address is allowed.
    """
    from ..core.errors import ConfigError

    if not 0 <= port <= 65535:
        raise ConfigError(f"Port {port!r} is out of range; use 0-65535 (0 picks a free one).")
    name = host.strip("[]")
    try:
        loopback = name == "localhost" or ipaddress.ip_address(name).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not authenticated:
        raise ConfigError(
            f"Refusing to serve MCP on {host!r} without client authentication: without "
            "--auth the HTTP transport binds loopback only (127.0.0.1, ::1, localhost), since "
            "anyone who reaches the port could run tools here. Add --auth tokens (API tokens "
            "from `nexus-tools tokens create NAME`) or --auth oauth --issuer URL --audience AUD."
        )


def bind_socket(host: str, port: int, *, authenticated: bool = False) -> socket.socket:
    """A listening TCP socket (``port=0`` picks a free one); a loopback address unless
    ``authenticated``."""
    check_address(host, port, authenticated=authenticated)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: asyncio only sets TCP_NODELAY on accepted sockets whose proto is
    # IPPROTO_TCP, and without it every small response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.setblocking(False)
    return sock


#: A stateful (earlier-protocol) session with no request for this long is closed and its
#: memory freed; the client then initializes again.
DEFAULT_SESSION_IDLE_S = 600.0
#: While this many sessions are open, a new one is refused with 503 "Too many open
#: sessions" until one ends or idles out (so the cap never locks clients out for good).
DEFAULT_MAX_SESSIONS = 1000


def build_app(
    server: Any,
    host: str,
    port: int,
    extra_names: Sequence[str] = (),
    *,
    session_idle_s: float = DEFAULT_SESSION_IDLE_S,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    auth_options: dict[str, Any] | None = None,
) -> HostGuard:
    """The SDK's streamable-HTTP Starlette app for ``server``, behind :class:`HostGuard`.
    ``auth_options`` are the SDK's ``auth=`` / ``token_verifier=`` (see :mod:`.auth`)."""
    from mcp.server.transport_security import TransportSecuritySettings

    own = {host} if host not in _WILDCARDS else set()
    exact = sorted(exact_hosts(extra_names))
    extra_names = [n for n in extra_names if n.lower() not in exact]
    guard_names = sorted(LOOPBACK_NAMES | own | {n.strip("[]").lower() for n in extra_names})
    shown = [f"[{n}]" if ":" in n else n for n in guard_names]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:{port}" for n in shown] + exact,
        allowed_origins=[f"{scheme}://{n}:*" for n in shown for scheme in ("http", "https")]
        + [f"{scheme}://{n}" for n in shown for scheme in ("http", "https")],
    )
    app = server.streamable_http_app(
        transport_security=security,
        host=host,
        session_idle_timeout=session_idle_s,
        max_sessions=max_sessions,
        **(auth_options or {}),
    )
    if auth_options:
        from .auth.challenge import fit_auth_routes

        fit_auth_routes(app, auth_options)  # a 401 that says what is wrong; every scope listed
    return HostGuard(app, host, port, [*extra_names, *exact])


async def run_uvicorn(
    server: Any,
    host: str,
    port: int,
    *,
    started: Callable[[tuple[str, int]], Any] | None = None,
    closing: Callable[[], Any] | None = None,
    allowed_hosts: Sequence[str] = (),
    session_idle_s: float = DEFAULT_SESSION_IDLE_S,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    auth: Any = None,
    token_store: Any = None,
) -> None:
    """Serve the SDK ``server`` over streamable HTTP until cancelled, then shut down cleanly.

    We run the SDK's session manager ourselves (uvicorn's lifespan is off) so that on the way
    out the MCP sessions end first: their open SSE streams then finish, and uvicorn has no
    request left to wait for. ``closing`` runs before that (e.g. to close listen streams).
    ``allowed_hosts`` are extra host names (besides loopback and ``host``) that clients may
    use in ``Host``/``Origin``, e.g. an alias of this machine that resolves to loopback.
    ``auth`` (a :class:`~.auth.ServeAuth`) makes every MCP request need a bearer token;
    ``token_store`` is the store its tokens are checked against (default: the one
    ``auth.token_file`` names).
    """
    import uvicorn

    from .auth import auth_app_options

    authenticated = auth is not None and auth.enabled
    sock = bind_socket(host, port, authenticated=authenticated)
    bound_port = sock.getsockname()[1]
    try:
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound_port}/mcp"
        options = auth_app_options(auth, url, token_store) if auth else {}
    except BaseException:
        sock.close()
        raise
    app = build_app(
        server,
        host,
        bound_port,
        [*allowed_hosts, *_public_names(auth, bound_port)],
        session_idle_s=session_idle_s,
        max_sessions=max_sessions,
        auth_options=options,
    )
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
        timeout_graceful_shutdown=2,
    )
    web = uvicorn.Server(config)
    task: asyncio.Future[None] | None = None
    try:
        async with server.session_manager.run():
            task = asyncio.ensure_future(web.serve(sockets=[sock]))
            try:
                while not web.started:
                    if task.done():
                        await task  # surfaces the start-up error
                        raise RuntimeError("uvicorn stopped before it started listening")
                    await asyncio.sleep(0.01)
                if started is not None:
                    started((host, bound_port))
                await asyncio.shield(task)
            finally:
                app.closed = True  # requests that still arrive get 503, not a crash
                if closing is not None:
                    closing()
    finally:
        web.should_exit = True
        if task is not None and not task.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(task), timeout=5)
            if not task.done():
                web.force_exit = True
                task.cancel()
        sock.close()


def _public_names(auth: Any, port: int) -> list[str]:
    """The host of ``auth.public_url`` when clients reach this port under that name."""
    url = getattr(auth, "public_url", None)
    if not url:
        return []
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return [parts.hostname] if parts.hostname and (parts.port or default) == port else []
