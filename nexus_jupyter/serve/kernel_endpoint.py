"""The private MCP endpoint a kernel serves its notebook's tools on (see
:mod:`nexus_jupyter.notebook.kernel_link`): loopback only, every request carrying the
kernel's secret as ``Authorization: Bearer <secret>``; anything else gets 401."""

from __future__ import annotations

import concurrent.futures
import hmac
import logging
import threading
from typing import Any

__all__ = ["KernelEndpoint"]

log = logging.getLogger(__name__)


class _SecretGuard:
    """ASGI middleware: only requests with the kernel's secret reach the MCP app."""

    def __init__(self, app: Any, secret: str) -> None:
        self.app = app
        self._expected = f"Bearer {secret}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers", ())).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                text = b"This kernel's tools need its secret (see the nexus-kernel-*.json file)"
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                    }
                )
                await send({"type": "http.response.body", "body": text})
                return
        await self.app(scope, receive, send)


class _GuardedServer:
    """The SDK server as :func:`~nexus_jupyter.serve.mcp_http.run_uvicorn` sees it, with
    the secret check in front of its HTTP app."""

    def __init__(self, server: Any, secret: str) -> None:
        self._server, self._secret = server, secret

    def streamable_http_app(self, **options: Any) -> Any:
        return _SecretGuard(self._server.streamable_http_app(**options), self._secret)

    @property
    def session_manager(self) -> Any:
        return self._server.session_manager


class KernelEndpoint:
    """``registry`` served over MCP on ``127.0.0.1:<free port>/mcp`` behind ``secret``, on
    the registry's background loop."""

    def __init__(
        self, registry: Any, secret: str, timeout: float = 30.0, **server_options: Any
    ) -> None:
        from .mcp_http import run_uvicorn
        from .mcp_server import RegistryServer

        bound: concurrent.futures.Future[tuple[str, int]] = concurrent.futures.Future()
        self.app: Any = None  # the RegistryServer, once it serves
        # Set once serve() has shut down: its requests answered, its connections closed.
        self._served = threading.Event()

        def started(address: tuple[str, int]) -> None:
            if not bound.done():
                bound.set_result(address)

        async def serve() -> None:
            try:
                app = RegistryServer(registry, name="nexus-kernel", **server_options)
                self.app = app
                app.attach()
                try:
                    await run_uvicorn(
                        _GuardedServer(app.server, secret),
                        "127.0.0.1",
                        0,
                        started=started,
                        closing=app.listen_handler.close,
                    )
                finally:
                    app.detach()
            finally:
                self._served.set()

        self._future = registry.loop.submit(serve())

        def failed(f: concurrent.futures.Future[None]) -> None:
            if not bound.done():
                exc = None if f.cancelled() else f.exception()
                bound.set_exception(exc or RuntimeError("the kernel's MCP endpoint stopped"))

        self._future.add_done_callback(failed)
        host, self.port = bound.result(timeout)
        self.url = f"http://{host}:{self.port}/mcp"

    def relist(self) -> None:
        """List the tools again and tell the server (their listing ``_meta`` changed)."""
        if self.app is not None:
            self.app.relist()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving and wait (up to ``timeout``) until it has: open listen streams get
        their final answer and uvicorn lets its connections go before the caller stops the
        registry's loop. A cancelled future is done at once, before the coroutine has even
        seen the cancellation; returning then left the shutdown to the loop's stop, which
        cancels uvicorn's request tasks mid-request (each one an "Exception in ASGI
        application" traceback on the kernel's stderr, which is the notebook's cell)."""
        if not self._future.done():
            self._future.cancel()  # run_uvicorn's way out: cancelled
        if not self._served.wait(timeout):
            log.debug("the kernel's MCP endpoint did not stop within %s s", timeout)
            return  # a slow stop is not worth holding the kernel
        try:
            self._future.result(0)
        except (concurrent.futures.CancelledError, concurrent.futures.TimeoutError):
            pass  # cancelled is how it stops
        except Exception:
            log.exception("the kernel's MCP endpoint failed while stopping")
