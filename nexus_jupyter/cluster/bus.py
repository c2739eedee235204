"""The MCP SDK's ``SubscriptionBus`` over Redis pub/sub: a listen event published on any
replica reaches the ``subscriptions/listen`` streams of every replica.

    bus = RedisSubscriptionBus(address)
    await bus.start()                 # on the loop that serves MCP
    await bus.publish(ResourceUpdated(uri="file:///x"))   # every replica's listeners
    await bus.publish_local(ToolsListChanged())            # this replica's listeners only
    await bus.close()

Tool-list changes caused by a publication are *not* sent across: each replica's registry
changes when it has loaded the new file, and only then may its own clients be told (a
client told earlier would list the tools and not find the new one). The server therefore
publishes registry-driven events with :meth:`publish_local`; everything else crosses.

While Redis is away, :meth:`publish` still delivers to this replica's listeners, so local
clients keep working; the reader reconnects by itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from .store import ClusterAddress, ClusterStore, follow_channel, stop_task

__all__ = ["RedisSubscriptionBus", "event_from_json", "event_to_json"]

log = logging.getLogger(__name__)


def event_to_json(event: Any, origin: str) -> str:
    from mcp.shared.subscriptions import ResourceUpdated

    data: dict[str, Any] = {"type": type(event).__name__, "origin": origin}
    if isinstance(event, ResourceUpdated):
        data["uri"] = event.uri
    return json.dumps(data)


def event_from_json(raw: str) -> tuple[Any, str] | None:
    """``(event, origin)``, or ``None`` for a message this version does not know."""
    from mcp.shared import subscriptions as events

    data = json.loads(raw)
    kind = data.get("type")
    if kind == "ResourceUpdated":
        return events.ResourceUpdated(uri=str(data.get("uri", ""))), str(data.get("origin"))
    if kind in ("ToolsListChanged", "PromptsListChanged", "ResourcesListChanged"):
        return getattr(events, kind)(), str(data.get("origin"))
    return None


class RedisSubscriptionBus:
    """A ``SubscriptionBus`` (``publish`` / ``subscribe``) shared by every replica."""

    def __init__(
        self, address: ClusterAddress, origin: str, *, outage_level: int = logging.WARNING
    ) -> None:
        from mcp.server.subscriptions import InMemorySubscriptionBus

        self.address = address
        self.origin = origin
        #: The level a Redis outage is logged at (DEBUG when the ``cluster`` source says it).
        self.outage_level = outage_level
        self._local = InMemorySubscriptionBus()
        self._store: ClusterStore | None = None
        self._reader: asyncio.Task[None] | None = None
        self.connected = False
        self._connected = asyncio.Event()
        self.received = 0  # events from other replicas delivered here

    def subscribe(self, listener: Callable[[Any], None]) -> Callable[[], None]:
        return self._local.subscribe(listener)

    async def publish_local(self, event: Any) -> None:
        await self._local.publish(event)

    async def publish(self, event: Any) -> None:
        """Deliver ``event`` here at once and to every other replica through Redis."""
        await self._local.publish(event)
        store = self._store
        if store is None or not self.connected:
            return
        try:
            await store.redis.publish(store.bus_channel, event_to_json(event, self.origin))
        except Exception as exc:  # Redis away: local delivery has happened; the reader reconnects
            # the reader says the outage (once); this is its detail
            log.debug("cluster bus: could not publish %s to Redis: %s", type(event).__name__, exc)

    async def start(self) -> None:
        """Start reading other replicas' events (reconnecting until :meth:`close`)."""
        if self._reader is None:
            self._reader = asyncio.ensure_future(self._read_forever())

    async def wait_connected(self, timeout: float) -> bool:
        """Whether the reader is subscribed in Redis within ``timeout`` seconds."""
        try:
            await asyncio.wait_for(self._connected.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def close(self) -> None:
        await stop_task(self._reader)
        self._reader = None

    async def _read_forever(self) -> None:
        await follow_channel(
            self.address,
            "bus_channel",
            self._deliver,
            self._on_state,
            outage_level=self.outage_level,
        )

    def _on_state(self, store: ClusterStore | None) -> None:
        self._store, self.connected = store, store is not None
        if store is not None:
            self._connected.set()
        else:
            self._connected.clear()

    async def _deliver(self, raw: str) -> None:
        try:
            decoded = event_from_json(raw)
        except (ValueError, TypeError) as exc:
            log.warning("cluster bus: ignoring a malformed event %r: %s", raw[:80], exc)
            return
        if decoded is None or decoded[1] == self.origin:
            return  # unknown kind, or our own event (already delivered locally)
        self.received += 1
        await self._local.publish(decoded[0])
