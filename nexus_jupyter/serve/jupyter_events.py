"""The live side of the Jupyter server extension: registry changes pushed to browsers.

Registry callbacks run on whatever thread made the change (the watcher on the registry's
background loop, a request thread, ...). Tornado objects may only be touched on the server's
IOLoop, so :class:`EventHub` hops there with ``IOLoop.add_callback`` (thread-safe) before it
writes to any socket.
"""

from __future__ import annotations

import json
import threading
import time
from typing import TYPE_CHECKING, Any

from jupyter_core.utils import ensure_async
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web, websocket
from tornado.ioloop import IOLoop, PeriodicCallback

if TYPE_CHECKING:
    from ..core.registry.registry import Registry
    from ..core.registry.state import RegistryChanged

__all__ = ["AUTH_RESOURCE", "CALLS_EVERY_MS", "EventHub", "EventsHandler", "VersionHistory"]

#: The resource name every nexus endpoint is authorized against.
AUTH_RESOURCE = "nexus"
#: How often, while a browser listens, the hub looks for tools called since it last looked
#: (by anyone: the sidebar, an MCP client of this server, REST, or a notebook in its own
#: kernel, as that kernel last reported): a ``calls`` message names them, so an open tool's
#: call counts follow without a reload.
CALLS_EVERY_MS = 1000


class VersionHistory:
    """The versions of each tool this server has seen since it started, newest first.

    The registry keeps only the current version; the catalog's "versions" list comes from
    here, fed by the same change events the browsers get.
    """

    def __init__(self, limit: int = 20) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._seen: dict[str, list[dict[str, Any]]] = {}

    def record(self, name: str, version: str, source: str) -> None:
        with self._lock:
            versions = self._seen.setdefault(name, [])
            if versions and versions[0]["version"] == version:
                return
            versions.insert(0, {"version": version, "source": source, "time": time.time()})
            del versions[self._limit :]

    def seed(self, registry: Registry) -> None:
        for entry in registry.entries():
            self.record(entry.name, entry.spec.version, entry.spec.source)

    def on_change(self, registry: Registry, change: RegistryChanged) -> None:
        for name in (*change.added, *change.updated):
            tool = registry.find(name)
            if tool is not None:
                self.record(name, tool.spec.version, tool.spec.source)

    def versions(self, name: str, current: str) -> list[dict[str, Any]]:
        with self._lock:
            seen = [dict(v) for v in self._seen.get(name, ())]
        for item in seen:
            item["current"] = item["version"] == current
        return seen


class EventHub:
    """Fans registry changes, and which tools were called, out to every open events socket."""

    def __init__(self) -> None:
        self._sockets: set[EventsHandler] = set()
        self._ioloop: IOLoop | None = None
        self._registry: Registry | None = None
        self._calls_seen: dict[str, tuple[int, ...]] = {}
        self._calls_timer: PeriodicCallback | None = None

    def follow_calls(self, registry: Registry) -> None:
        """Send ``{"type": "calls", "tools": [...]}`` for the tools of ``registry`` called
        since the last look (every :data:`CALLS_EVERY_MS` while a socket is open)."""
        self._registry = registry

    def attach(self, socket: EventsHandler) -> None:
        # Called on the server's IOLoop (from ``open``): remember it for cross-thread hops.
        self._ioloop = IOLoop.current()
        self._sockets.add(socket)
        if self._registry is not None and self._calls_timer is None:
            self._calls_seen = self._call_counts()
            self._calls_timer = PeriodicCallback(self._look_for_calls, CALLS_EVERY_MS)
            self._calls_timer.start()

    def detach(self, socket: EventsHandler) -> None:
        self._sockets.discard(socket)
        if not self._sockets and self._calls_timer is not None:
            self._calls_timer.stop()  # nobody listens: no need to look
            self._calls_timer = None

    def _call_counts(self) -> dict[str, tuple[int, ...]]:
        """The registry's counts, and those the live kernels reported of their notebooks'
        calls (what each kernel last listed: nothing is asked of a kernel here)."""
        assert self._registry is not None
        seen: dict[str, tuple[int, ...]] = dict(self._registry.call_counts())
        for state in self._registry.sources():
            if state.kind != "kernel" or not hasattr(state.source, "call_counts"):
                continue
            for name, counts in state.source.call_counts().items():
                seen[name] = (*seen.get(name, (0, 0)), *counts)
        return seen

    def close(self) -> None:
        """Stop looking for calls (the extension is unloading; sockets may still be open)."""
        self._registry = None
        if self._calls_timer is not None:
            self._calls_timer.stop()
            self._calls_timer = None

    def _look_for_calls(self) -> None:
        if self._registry is None:
            return
        seen = self._call_counts()
        called = sorted(
            name for name, counts in seen.items() if self._calls_seen.get(name) != counts
        )
        self._calls_seen = seen
        if called:
            self._broadcast(json.dumps({"type": "calls", "tools": called}))

    @property
    def listeners(self) -> int:
        return len(self._sockets)

    def on_change(self, change: RegistryChanged) -> None:
        """Registry subscriber: safe to call from any thread."""
        loop = self._ioloop
        if loop is None or not self._sockets:
            return
        message = json.dumps({"type": "changed", **change.to_dict()}, default=str)
        loop.add_callback(self._broadcast, message)

    def on_offers_change(self, _catalog: Any = None) -> None:
        """Catalog subscriber (resources, prompts): a ``changed`` message naming no tool,
        with ``"offers": true``. Safe to call from any thread."""
        loop = self._ioloop
        if loop is None or not self._sockets:
            return
        empty: list[str] = []
        message = json.dumps(
            {
                "type": "changed",
                "added": empty,
                "removed": empty,
                "updated": empty,
                "sources": empty,
                "offers": True,
            }
        )
        loop.add_callback(self._broadcast, message)

    def _broadcast(self, message: str) -> None:
        for socket in list(self._sockets):
            try:
                socket.write_message(message)
            except websocket.WebSocketClosedError:
                # The peer vanished without a close handshake; forget it.
                self._sockets.discard(socket)


class EventsHandler(WebSocketMixin, websocket.WebSocketHandler, JupyterHandler):
    """``GET /nexus/api/events``: a WebSocket of ``{"type": "changed", ...}`` messages.

    Authenticated like every Jupyter WebSocket (token or cookie; browsers cannot set headers
    on a WebSocket) and authorized as ``execute`` on the ``nexus`` resource.
    """

    auth_resource = AUTH_RESOURCE

    @property
    def hub(self) -> EventHub:
        hub: EventHub = self.settings["nexus"].hub
        return hub

    async def pre_get(self) -> None:
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, "execute", AUTH_RESOURCE)
        )
        if not allowed:
            raise web.HTTPError(403)

    async def get(self, *args: Any, **kwargs: Any) -> None:
        if self.current_user is None:
            self.log.warning("Couldn't authenticate the nexus events WebSocket")
            raise web.HTTPError(403)
        await self.pre_get()
        res = super().get(*args, **kwargs)
        if res is not None:
            await res

    def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)
        self.hub.attach(self)
        # A hello message lets clients (and tests) know the subscription is live.
        self.write_message(
            json.dumps({"type": "hello", "tools": len(self.settings["nexus"].registry)})
        )

    def on_message(self, message: str | bytes) -> None:
        """Clients do not send anything; ignore what they do send."""

    def on_close(self) -> None:
        self.hub.detach(self)
