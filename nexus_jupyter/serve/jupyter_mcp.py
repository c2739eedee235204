"""``/nexus/mcp``: the Jupyter server's registry (kernel tools included) over MCP streamable
HTTP, behind Jupyter's own authentication.

An agent connects with the server's token (``Authorization: token <T>`` or ``Bearer <T>``;
on JupyterHub a hub-issued API token of the server's user); a browser session with its
cookie must pass Jupyter's XSRF check on POST. Anything else gets Jupyter's 403 before the
MCP layer sees the request. The Jupyter user is the calls' principal (policies, audit). The SDK's session manager runs on
the server's loop; :class:`McpHandler` hands each tornado request to it as an ASGI call and
streams the answer (SSE included) back, so list changes reach connected agents live.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import MutableMapping
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web
from tornado.iostream import StreamClosedError

from .jupyter_events import AUTH_RESOURCE

__all__ = ["McpEndpoint", "McpHandler"]


class McpEndpoint:
    """The registry's MCP server and the SDK session manager that serves it over HTTP."""

    def __init__(self, registry: Any) -> None:
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from .mcp_paths import ShownPaths
        from .mcp_server import RegistryServer

        # Agents reach it as MCP callers: offered only what their grant lets them call, and
        # shown the workspace's paths as an HTTP client of `serve` is (a hub's agent is remote).
        root = getattr(registry, "root", None) or os.getcwd()
        self.app = RegistryServer(
            registry, name="nexus-jupyter", granted_only=True, paths=ShownPaths(root)
        )
        # No DNS-rebinding check here: Jupyter authenticates every request (token, or
        # cookie + XSRF) and applies its own host and origin rules.
        self.manager = StreamableHTTPSessionManager(app=self.app.server)
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the session manager on the running (server) loop."""
        self._task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        self.app.attach()
        try:
            async with self.manager.run():
                self._ready.set()
                await self._stop.wait()
        finally:
            self.app.detach()

    async def ready(self) -> None:
        await self._ready.wait()

    async def stop(self) -> None:
        self._stop.set()
        self.app.listen_handler.close()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, timeout=5)


def _caller_identity(user: Any) -> dict[str, Any]:
    """The ASGI ``user`` for an MCP request Jupyter authenticated: its user name is the
    calls' principal (on JupyterHub, the hub user whose token it is), as on the REST routes.
    Jupyter decided the access, so it puts no ceiling of its own on the grant."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    name = getattr(user, "username", None)
    if not name:
        return {}
    token = AccessToken(token="", client_id=name, scopes=["tools:admin"], subject=name)
    return {"user": AuthenticatedUser(token)}


def _no_login(request: Any) -> web.HTTPError:
    """403 for a request that is not signed in, saying how an agent signs in (Jupyter's
    own answer to a POST without a token is about a browser's ``_xsrf`` cookie)."""
    how = "send the header 'Authorization: token <T>' (or 'Bearer <T>')"
    where = "`jupyter server list` shows the token of each running server"
    if request.headers.get("Authorization", "").strip():
        message = f"The token sent is not this Jupyter server's token: {where}; {how}."
    else:
        message = f"/nexus/mcp needs the Jupyter server's token: {how}; {where}."
    return web.HTTPError(403, message)


class McpHandler(APIHandler):
    """``GET|POST|DELETE /nexus/mcp``: one streamable-HTTP MCP request."""

    auth_resource = AUTH_RESOURCE
    _gone: asyncio.Event | None = None

    def check_xsrf_cookie(self) -> None:
        # Jupyter checks XSRF once it knows the user; a request with no user at all (no
        # token, no session cookie) is an agent without its token, not a browser.
        if hasattr(self, "_jupyter_current_user") and self.current_user is None:
            raise _no_login(self.request)
        super().check_xsrf_cookie()

    def get_login_url(self) -> str:
        if not self.current_user:  # @web.authenticated on GET and DELETE
            raise _no_login(self.request)
        return str(super().get_login_url())

    def on_connection_close(self) -> None:
        if self._gone is not None:
            self._gone.set()
        super().on_connection_close()

    @web.authenticated
    @authorized
    async def get(self) -> None:
        await self._bridge()

    @web.authenticated
    @authorized
    async def post(self) -> None:
        await self._bridge()

    @web.authenticated
    @authorized
    async def delete(self) -> None:
        await self._bridge()

    async def _bridge(self) -> None:
        endpoint: McpEndpoint = self.settings["nexus_mcp"]
        await endpoint.ready()
        self._gone = gone = asyncio.Event()
        request = self.request
        body_sent = False

        async def receive() -> dict[str, Any]:
            nonlocal body_sent
            if not body_sent:
                body_sent = True
                return {"type": "http.request", "body": request.body or b"", "more_body": False}
            await gone.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.set_status(message["status"])
                self.clear_header("Content-Type")
                for key, value in message.get("headers", ()):
                    name = key.decode("latin-1")
                    if name.lower() != "content-length":  # tornado frames the body itself
                        self.add_header(name, value.decode("latin-1"))
            elif message["type"] == "http.response.body":
                chunk = message.get("body", b"")
                if chunk:
                    self.write(chunk)
                if message.get("more_body", False):
                    try:
                        await self.flush()
                    except StreamClosedError:
                        gone.set()

        headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.get_all()
        ]
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": request.protocol,
            "path": "/mcp",
            "raw_path": b"/mcp",
            "query_string": (request.query or "").encode("latin-1"),
            "root_path": "",
            "headers": headers,
            "client": (request.remote_ip or "", 0),
            "server": ("127.0.0.1", 0),
            **_caller_identity(self.current_user),
        }
        await endpoint.manager.handle_request(scope, receive, send)
        if not gone.is_set():
            self.finish()
