"""``resources/subscribe``: which session follows which resource, and
``notifications/resources/updated`` to it when that resource's contents change.

- A resource of this server (``@resource`` in a tool file, the notebook) changes when its
  definition is replaced: its file was saved again, the notebook cell ran again. A template's
  change reaches every subscribed URI it serves.
- A resource of an upstream MCP server is followed there: the first session's subscription
  is forwarded upstream (``resources/subscribe``), the last one's end unsubscribes, and the
  upstream's ``notifications/resources/updated`` is relayed with the URI as this server lists
  it (the upstream's own). A server that cannot tell changes refuses the subscription.
- An unknown URI is ``-32002`` (resource not found).

Subscriptions belong to the session's connection and end with it. 2026-07-28 clients follow
resources on their ``subscriptions/listen`` stream: every update is published on the bus too.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..core.registry.catalog import Catalog
from ..core.tools.offers import ResourceDef

__all__ = ["RESOURCE_NOT_FOUND", "ResourceSubscriptions"]

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002  # the code resources/read uses (MCP 2025-11-25)
_BACKGROUND: set[asyncio.Task[Any]] = set()  # the loop keeps only weak references to tasks


class ResourceSubscriptions:
    """The handlers of ``resources/subscribe``/``unsubscribe`` over one catalog, and what
    turns catalog changes and upstream updates into notifications (on the serving loop)."""

    def __init__(self, catalog: Catalog, bus: Any) -> None:
        self.catalog = catalog
        # 2026-07-28 listeners hear it on the bus; on a cluster each replica tells its own
        self.publish = getattr(bus, "publish_local", bus.publish)
        self.sessions: dict[Any, set[str]] = {}  # connection -> subscribed URIs
        self._upstream: dict[str, tuple[Any, int]] = {}  # URI -> (its watch, subscribers)
        self._defs = self._local_defs()  # this server's resources as last seen, by URI
        #: per upstream URI: its subscribe and unsubscribe forwards run one at a time
        self._locks: dict[str, asyncio.Lock] = {}

    def attach(self, on_change: Any) -> Any:
        """Call ``on_change(catalog)`` on each change of the catalog's set, and hear upstream
        updates (said on any thread) on this loop (the serving one); returns how to stop."""
        loop = asyncio.get_running_loop()

        def heard(uri: str) -> None:
            try:
                loop.call_soon_threadsafe(_background, self.updated(uri))
            except RuntimeError:
                pass  # the serving loop has just shut down

        stops = [self.catalog.subscribe(on_change), self.catalog.subscribe_updates(heard)]
        return lambda: [stop() for stop in stops]

    # -- handlers --------------------------------------------------------------------------

    async def subscribe(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        uri = str(params.uri)
        found = self.catalog.find_resource(uri)
        if found is None:
            raise MCPError(
                RESOURCE_NOT_FOUND,
                f"Resource not found: {uri!r}. Subscribe to a URI that resources/list lists "
                "or a resource template serves.",
                data={"uri": uri},
            )
        if found.remote and found.watch is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Resource {uri!r} comes from an MCP server that does not announce changes "
                "to its resources; read it again when you need it.",
                data={"uri": uri},
            )
        connection = getattr(ctx.session, "_connection", None)
        uris = self.sessions.get(connection)
        if uris is None:
            uris = self.sessions[connection] = set()
            if connection is not None:
                connection.exit_stack.callback(self._session_ended, connection)
        if uri in uris:
            return types.EmptyResult()
        if found.watch is not None:
            async with self._lock_of(uri):  # one forward at a time per URI: counts stay true
                await self._follow(uri, found.watch)
            if self.sessions.get(connection) is not uris:  # the session ended meanwhile
                await self._unfollow(uri)
                return types.EmptyResult()
        uris.add(uri)
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        uri = str(params.uri)
        uris = self.sessions.get(getattr(ctx.session, "_connection", None), set())
        if uri in uris:
            uris.discard(uri)
            await self._unfollow(uri)
        return types.EmptyResult()

    # -- upstream --------------------------------------------------------------------------

    async def _follow(self, uri: str, watch: Any) -> None:
        from mcp.shared.exceptions import MCPError

        followed = self._upstream.get(uri)
        if followed is not None:
            self._upstream[uri] = (followed[0], followed[1] + 1)
            return
        try:
            await watch(uri, True)
        except Exception as exc:
            raise MCPError(
                -32603,
                f"Subscribing to {uri!r} at its MCP server failed: {exc}. Try again once "
                "that server is connected.",
                data={"uri": uri},
            ) from None
        self._upstream[uri] = (watch, 1)

    def _lock_of(self, uri: str) -> asyncio.Lock:
        lock = self._locks.get(uri)
        if lock is None:
            lock = self._locks[uri] = asyncio.Lock()
        return lock

    async def _unfollow(self, uri: str) -> None:
        async with self._lock_of(uri):
            await self._unfollow_now(uri)

    async def _unfollow_now(self, uri: str) -> None:
        followed = self._upstream.pop(uri, None)
        if followed is None:
            return
        watch, count = followed
        if count > 1:
            self._upstream[uri] = (watch, count - 1)
            return
        try:
            await watch(uri, False)
        except Exception as exc:  # the server may be gone; it forgot us then
            log.debug("unsubscribing from %s upstream failed: %s", uri, exc)

    def _session_ended(self, connection: Any) -> None:
        uris = self.sessions.pop(connection, set())
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        for uri in uris:
            if uri in self._upstream:
                _background(self._unfollow(uri))

    # -- changes ---------------------------------------------------------------------------

    def _local_defs(self) -> dict[str, ResourceDef]:
        return {
            r.uri: r for r in [*self.catalog.resources(), *self.catalog.templates()] if not r.remote
        }

    async def catalog_changed(self) -> None:
        """The catalog changed: tell the subscribers of each resource of this server whose
        definition was replaced, and follow upstream resources again on a new connection."""
        before, self._defs = self._defs, self._local_defs()
        changed = {k for k, d in self._defs.items() if k in before and before[k] != d}
        updated = {k for k in changed if not self._defs[k].is_template}
        for template in (self._defs[k] for k in changed if self._defs[k].is_template):
            updated |= {
                uri
                for uris in self.sessions.values()
                for uri in uris
                if uri not in self._defs and template.match(uri) is not None
            }
        for uri in sorted(updated):
            await self.updated(uri)
        for uri, (watch, count) in list(self._upstream.items()):
            found = self.catalog.find_resource(uri)
            if found is not None and found.watch is not None and found.watch is not watch:
                try:  # the upstream connection is new: it does not know our subscription
                    await found.watch(uri, True)
                    self._upstream[uri] = (found.watch, count)
                except Exception as exc:
                    log.warning("following %s upstream again failed: %s", uri, exc)

    async def updated(self, uri: str) -> None:
        """Send ``notifications/resources/updated`` for ``uri`` to the sessions that follow it."""
        from mcp.server.subscriptions import ResourceUpdated

        await self.publish(ResourceUpdated(uri=uri))
        sends = [c.send_resource_updated(uri) for c, uris in self.sessions.items() if uri in uris]
        await asyncio.gather(*sends, return_exceptions=True)  # best effort, like list_changed


def _background(coro: Any) -> None:
    task = asyncio.get_running_loop().create_task(coro)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)
