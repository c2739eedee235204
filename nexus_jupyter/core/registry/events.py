"""Change delivery: every subscriber gets every change, in order, on its own queue.

The thread that changes the registry (a watcher saving a file, a kernel running a cell, an MCP
session) only appends the change to each subscriber's queue; it never runs subscriber code.
Each subscriber drains its queue on its own: on a thread of its own (started when the queue
goes from empty to non-empty, ended when it drains), or on an asyncio loop the subscriber
names, in order. So a slow subscriber (a widget rebuilding sixty buttons) delays only itself,
and a subscriber that changes the registry gets that change after the current one, never
re-entrantly.

A subscriber that raises is recorded (:meth:`EventHub.failures`, shown in
``Registry.status()`` and so on every face that shows sources) and keeps receiving changes.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .state import RegistryChanged

__all__ = ["EventHub", "Subscriber", "SubscriberFailure"]

log = logging.getLogger(__name__)
Subscriber = Callable[[RegistryChanged], Any]


@dataclass(frozen=True, slots=True)
class SubscriberFailure:
    """The last exception a subscriber raised, and how many it has raised."""

    subscriber: str
    error: str
    traceback: str
    count: int
    at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "subscriber": self.subscriber,
            "error": self.error,
            "count": self.count,
            "at": self.at,
        }


class _Subscription:
    """One subscriber's queue and the one drain that may run for it at a time."""

    __slots__ = (
        "_draining",
        "_lock",
        "_queue",
        "active",
        "callback",
        "drainer",
        "hub",
        "loop",
        "name",
    )

    def __init__(
        self, hub: EventHub, callback: Subscriber, loop: asyncio.AbstractEventLoop | None
    ) -> None:
        self.hub = hub
        self.callback = callback
        self.loop = loop
        self.name = _describe(callback)
        self.active = True
        self._queue: deque[RegistryChanged] = deque()
        self._lock = threading.Lock()
        self._draining = False
        self.drainer: int | None = None  # the thread draining now (to tell it from waiters)

    def push(self, change: RegistryChanged) -> None:
        with self._lock:
            self._queue.append(change)
            if self._draining:
                return
            self._draining = True
        if self.loop is not None:
            try:
                self.loop.call_soon_threadsafe(self._drain)
            except RuntimeError as exc:  # the loop is closed: the subscriber is gone
                self.active = False
                with self._lock:
                    self._queue.clear()
                    self._draining = False
                self.hub._record_failure(self, exc)
            return
        threading.Thread(target=self._drain, name=f"nexus-events:{self.name}", daemon=True).start()

    def _drain(self) -> None:
        self.drainer = threading.get_ident()
        while True:
            with self._lock:
                done = not self._queue or not self.active
                if done:
                    self._queue.clear()
                    self._draining = False
                    self.drainer = None
                else:
                    change = self._queue.popleft()
            if done:
                # outside our own lock: waiters hold the hub's lock while reading ``idle``
                self.hub._settled(self)
                return
            try:
                self.callback(change)
            except Exception as exc:
                self.hub._record_failure(self, exc)

    @property
    def idle(self) -> bool:
        return not self._draining  # one attribute read: no lock, so no lock order to keep


class EventHub:
    """The subscribers of one registry and the queues that feed them."""

    def __init__(self) -> None:
        self._subscriptions: list[_Subscription] = []
        self._lock = threading.Lock()
        self._settled_cond = threading.Condition(self._lock)
        self._failures: dict[str, SubscriberFailure] = {}

    def subscribe(
        self, callback: Subscriber, *, loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        """Deliver every later change to ``callback``; returns the unsubscribe function."""
        subscription = _Subscription(self, callback, loop)
        with self._lock:
            self._subscriptions = [*self._subscriptions, subscription]

        def unsubscribe() -> None:
            subscription.active = False
            with self._lock:
                self._subscriptions = [s for s in self._subscriptions if s is not subscription]

        return unsubscribe

    def publish(self, change: RegistryChanged) -> None:
        """Queue ``change`` for every subscriber. Call in the order changes were made (the
        registry calls this under its write lock, so queues hold changes in snapshot order)."""
        if not change:
            return
        for subscription in self._subscriptions:
            subscription.push(change)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Block until every subscriber has handled every change queued so far (``False``
        after ``timeout``). A subscriber calling this waits for the others, not itself."""
        me = threading.get_ident()
        deadline = time.monotonic() + timeout
        with self._settled_cond:
            while True:
                busy = [
                    s
                    for s in self._subscriptions
                    if not s.idle and s.drainer != me and s.loop is None
                ]
                if not busy:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._settled_cond.wait(min(left, 0.05))

    def failures(self) -> list[SubscriberFailure]:
        """The subscribers that raised, with their last error (oldest first)."""
        with self._lock:
            return sorted(self._failures.values(), key=lambda f: f.at)

    def __len__(self) -> int:
        return len(self._subscriptions)

    # -- called by subscriptions ----------------------------------------------------------

    def _settled(self, subscription: _Subscription) -> None:
        with self._settled_cond:
            self._settled_cond.notify_all()

    def _record_failure(self, subscription: _Subscription, exc: Exception) -> None:
        log.warning("registry subscriber %s failed: %s", subscription.name, exc, exc_info=exc)
        with self._lock:
            before = self._failures.get(subscription.name)
            self._failures[subscription.name] = SubscriberFailure(
                subscriber=subscription.name,
                error=f"{type(exc).__name__}: {exc}",
                traceback="".join(traceback.format_exception(exc)),
                count=(before.count if before else 0) + 1,
                at=time.time(),
            )


def _describe(callback: Subscriber) -> str:
    owner = getattr(callback, "__self__", None)
    name = getattr(callback, "__qualname__", None) or type(callback).__name__
    if owner is not None:
        return f"{type(owner).__name__}.{getattr(callback, '__name__', name)}"
    return str(name)
