"""Approvals and the audit stream shared by every replica of a cluster.

- :class:`SharedApprovals` wraps the registry's policy: an "approve always" given through
  any replica (``registry.policy.remember``) is stored in Redis and announced, and every
  replica then allows that tool *with that definition* without asking again. A changed
  definition (another hash) needs approval again, exactly as on one machine.
- :class:`SharedAudit` wraps the audit sink: each call's record still goes to the local
  log, and also to the cluster's Redis stream (``P:audit``, tagged with the replica), so
  one place shows who called what on any replica. Records made while Redis is away wait
  (up to :data:`~.store.AUDIT_KEEP`) and are sent on reconnect.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..core.policy.protocols import Decision
from .node import ClusterNode
from .store import AUDIT_KEEP, ClusterStore

__all__ = ["SharedApprovals", "SharedAudit"]

log = logging.getLogger(__name__)

#: How often buffered audit records are sent to Redis.
AUDIT_FLUSH_S = 0.05


class SharedApprovals:
    """A ``CallPolicy`` whose session approvals are the cluster's."""

    def __init__(self, inner: Any, node: ClusterNode) -> None:
        self.inner = inner
        self.node = node
        self.approved: set[tuple[str, str]] = set()  # (tool, definition hash), any replica
        self._unsent: set[tuple[str, str, str]] = set()  # (tool, hash, by) not yet in Redis
        node.on_connect.append(self._on_connect)
        node.channels["approved_channel"] = self._on_announced

    def check(self, spec: Any, arguments: Mapping[str, Any], request: Any) -> Decision:
        decision: Decision = self.inner.check(spec, arguments, request)
        if decision.action == "ask" and (spec.name, spec.definition_hash) in self.approved:
            return Decision("allow", "approved always (shared by the cluster)", decision.rule)
        return decision

    def remember(self, spec: Any, request: Any = None) -> None:
        self.inner.remember(spec, request)
        key = (spec.name, spec.definition_hash)
        self.approved.add(key)
        by = str(getattr(request, "principal", None) or "unknown")
        self._unsent.add((*key, by))
        self.node.registry.loop.submit(self._send())

    def __getattr__(self, name: str) -> Any:  # describe, forget, is_remembered, grant ...
        return getattr(self.inner, name)

    async def _send(self) -> None:
        store = self.node.store
        if store is None:
            return  # sent on reconnect
        for item in list(self._unsent):
            try:
                await store.approve(*item)
                self._unsent.discard(item)
            except Exception as exc:
                # sent on reconnect; the node says the outage, so this is its detail
                log.debug("cluster: approval of %s not shared yet: %s", item[0], exc)
                return

    async def _on_connect(self, store: ClusterStore) -> None:
        self.approved.update(await store.approvals())
        await self._send()

    async def _on_announced(self, data: str) -> None:
        tool, _, definition_hash = data.partition("\0")
        if definition_hash:
            self.approved.add((tool, definition_hash))


class SharedAudit:
    """An ``AuditSink`` that also appends every record to the cluster's stream."""

    def __init__(
        self, inner: Any, node: ClusterNode, masker: Callable[[str], str] | None = None
    ) -> None:
        self.inner = inner
        self.node = node
        self.masker = masker
        self.sent = 0
        self._buffer: collections.deque[dict[str, Any]] = collections.deque(maxlen=AUDIT_KEEP)
        self._flusher = node.registry.loop.submit(self._flush_forever())

    def record(self, **entry: Any) -> None:
        """The :class:`AuditSink` call: ``tool``, ``principal``, ``request_id``, ``client``,
        ``decision``, ``duration`` and ``error``, all keywords."""
        if self.inner is not None:
            self.inner.record(**entry)
        error = entry.get("error")
        if error is not None and self.masker is not None:
            error = self.masker(error)
        shared = {**entry, "error": error[:2000] if error else error}
        shared["duration"] = round(float(entry.get("duration", 0.0)), 6)
        self._buffer.append({"time": time.time(), "replica": self.node.replica, **shared})

    def close(self) -> None:
        self._flusher.cancel()
        if self.inner is not None:
            self.inner.close()

    def __getattr__(self, name: str) -> Any:  # read, written, path ...
        return getattr(self.inner, name)

    async def _flush_forever(self) -> None:
        while True:
            await asyncio.sleep(AUDIT_FLUSH_S)
            store = self.node.store
            if store is None or not self._buffer:
                continue
            batch = [self._buffer.popleft() for _ in range(min(len(self._buffer), 500))]
            try:
                await store.append_audit(batch)
                self.sent += len(batch)
            except Exception as exc:
                self._buffer.extendleft(reversed(batch))  # kept for the next attempt
                log.debug("cluster: audit records wait for Redis: %s", exc)  # as above
