"""A streamable-HTTP MCP server run on a registry's background loop, stopped and started from
any thread (``%tool serve`` in a kernel, tests)."""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Any

from .mcp_grant import Offered, mcp_grant, offered

__all__ = ["McpServerHandle"]


class McpServerHandle:
    """A streamable-HTTP MCP server running on the registry's background loop, so a kernel
    can serve its registry without blocking (``%tool serve``)."""

    def __init__(
        self,
        registry: Any,
        future: concurrent.futures.Future[None],
        host: str,
        port: int,
        finished: threading.Event,
        defer: bool = False,
    ) -> None:
        self.registry, self._future, self.host, self.port = registry, future, host, port
        self._finished = finished
        self.defer = defer

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    @property
    def running(self) -> bool:
        return not self._future.done()

    def offered(self) -> Offered:
        """The tools a client is offered now, as its ``tools/list`` lists them (not those
        above the MCP grant; with ``defer`` the eager ones, the rest deferred)."""
        return offered(self.registry, mcp_grant(self.registry), defer=self.defer)

    @classmethod
    def start(
        cls,
        registry: Any,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        defer: bool = False,
        timeout: float = 30.0,
    ) -> McpServerHandle:
        """Start serving and wait until the port is bound (``port=0`` picks a free one)."""
        bound: concurrent.futures.Future[tuple[str, int]] = concurrent.futures.Future()

        def started(address: tuple[str, int]) -> None:
            if not bound.done():
                bound.set_result(address)

        finished = threading.Event()

        from .mcp_server import serve_http  # it imports this module

        async def serve() -> None:
            try:
                await serve_http(registry, host, port, defer=defer, started=started)
            finally:
                finished.set()

        future = registry.loop.submit(serve())

        def failed(f: concurrent.futures.Future[None]) -> None:
            if not bound.done():
                exc = None if f.cancelled() else f.exception()
                bound.set_exception(exc or RuntimeError("the MCP server stopped before listening"))

        future.add_done_callback(failed)
        bound_host, bound_port = bound.result(timeout)
        return cls(registry, future, bound_host, bound_port, finished, defer)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving (open sessions are closed)."""
        if not self._future.done():
            self._future.cancel()
        self._finished.wait(timeout)

    def __repr__(self) -> str:
        return f"<McpServerHandle {self.url} {'running' if self.running else 'stopped'}>"
