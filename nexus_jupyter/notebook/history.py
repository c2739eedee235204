"""The session's call history: one public object shared by ``%tool call``, the forms and the
Python API, so ``%tool history`` shows every call however it was made. It follows the session
registry (:meth:`CallHistory.follow`): every call that registry finishes is recorded, whether a
magic, a form or ``await reg.call(...)`` / ``reg.call_sync(...)`` in a cell made it. Only the
newest ``limit`` calls (500) are kept.

Recording is cheap, since it happens on the call's return path: a call is appended at once (so
``%tool history`` lists it as soon as the call returns), and the widgets that show the history
are redrawn later, on the loop they were made on (the kernel's), once for a burst of calls: a
cell that calls ``reg.call_sync`` in a loop with a history panel open does not redraw the
panel for every call before the next one starts.

>>> from nexus_jupyter.notebook.history import CallHistory
>>> history = CallHistory()
>>> record = history.record("add", {"a": 1, "b": 2}, value=3, duration=0.001)
>>> [r.tool for r in history.entries()]
['add']
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallHistory", "CallRecord", "session_history"]

log = logging.getLogger(__name__)

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One call: the tool, the arguments sent and what came back (or the error)."""

    tool: str
    arguments: Mapping[str, Any]
    value: Any = None
    error: str | None = None
    error_type: str | None = None
    duration: float = 0.0
    at: float = field(default_factory=time.time)
    id: int = field(default_factory=lambda: next(_ids))
    summary: str = ""  # the call in one readable line ("Calculating: 2 add 3")

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "error": self.error,
            "error_type": self.error_type,
            "duration": self.duration,
            "at": self.at,
            "summary": self.summary,
        }


class CallHistory:
    """A bounded, thread-safe list of :class:`CallRecord` (newest last).

    Calls finish on the registry's background thread while the notebook reads the history on
    the kernel thread, hence the lock. ``subscribe(callback)`` is how widgets refresh (see
    :meth:`subscribe`: later, on the subscriber's loop, when it has one).
    """

    def __init__(self, limit: int = 500) -> None:
        self.limit = limit
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()
        self._subscribers: list[_Subscriber] = []
        # registry -> stop following it (weak: a closed registry that goes away leaves)
        self._followed: weakref.WeakKeyDictionary[Any, Callable[[], None]] = (
            weakref.WeakKeyDictionary()
        )
        # the results a followed registry handed over lately (held, so ``is`` is safe): the
        # face that made one of those calls finds it here and does not record it again
        self._observed: collections.deque[Any] = collections.deque(maxlen=64)

    def follow(self, registry: Any) -> None:
        """Record every call ``registry`` finishes from now on, however it was made (once per
        registry; calling again does nothing)."""
        with self._lock:
            if registry in self._followed:
                return
            self._followed[registry] = registry.observe_calls(self._observed_call)

    def _observed_call(self, arguments: Mapping[str, Any], result: Any) -> None:
        with self._lock:
            self._observed.append(result)
        self.record_result(arguments, result)

    def has(self, result: Any) -> bool:
        """Whether this very ``ToolResult`` is recorded already (its registry is followed),
        so the face that made the call does not record it twice."""
        with self._lock:
            return any(seen is result for seen in self._observed)

    def add_result(self, arguments: Mapping[str, Any] | None, result: Any) -> None:
        """:meth:`record_result` for a face that made a call, unless it is recorded already."""
        if not self.has(result):
            self.record_result(arguments, result)

    def unfollow(self, registry: Any) -> None:
        with self._lock:
            stop = self._followed.pop(registry, None)
        if stop is not None:
            stop()

    def record(
        self,
        tool: str,
        arguments: Mapping[str, Any] | None,
        *,
        value: Any = None,
        error: str | None = None,
        error_type: str | None = None,
        duration: float = 0.0,
        summary: str = "",
    ) -> CallRecord:
        """Append one call and tell the subscribers."""
        entry = CallRecord(
            tool, dict(arguments or {}), value, error, error_type, duration, summary=summary
        )
        with self._lock:
            self._records.append(entry)
            del self._records[: -self.limit]
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            subscriber.tell(entry)
        return entry

    def record_result(self, arguments: Mapping[str, Any] | None, result: Any) -> CallRecord:
        """Append a :class:`~nexus_jupyter.core.tools.result.ToolResult` (secrets masked: the
        history is shown in widgets and views)."""
        result = result.redacted()
        return self.record(
            result.tool,
            arguments,
            value=result.value,
            error=result.error,
            error_type=result.error_type,
            duration=result.duration,
            summary=result.summary,
        )

    def entries(self, tool: str | None = None) -> list[CallRecord]:
        """Every record, oldest first; only those of ``tool`` when given."""
        with self._lock:
            records = list(self._records)
        return [r for r in records if tool is None or r.tool == tool]

    def get(self, record_id: int) -> CallRecord:
        for record in self.entries():
            if record.id == record_id:
                return record
        raise KeyError(f"No call #{record_id} in the history; see `%tool history`.")

    def subscribe(self, callback: Callable[[CallRecord], Any]) -> Callable[[], None]:
        """Call ``callback(record)`` after calls are recorded; returns the function that stops
        it. Subscribed while an event loop runs (a widget made in a kernel's cell), it is
        called on that loop, after the call returned, and once for the calls recorded
        meanwhile (with the newest): what it redraws never slows a call down. Subscribed
        with no loop running (a script), it is called at once, on the recording thread."""
        subscriber = _Subscriber(callback, _running_loop())
        with self._lock:
            self._subscribers.append(subscriber)

        def unsubscribe() -> None:
            subscriber.stopped = True  # a redraw already on its way is dropped
            with self._lock:
                if subscriber in self._subscribers:
                    self._subscribers.remove(subscriber)

        return unsubscribe

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def __len__(self) -> int:
        return len(self._records)


class _Subscriber:
    """One :meth:`CallHistory.subscribe` callback, told on its own loop when it has one."""

    def __init__(
        self, callback: Callable[[CallRecord], Any], loop: asyncio.AbstractEventLoop | None
    ) -> None:
        self.callback = callback
        self.loop = loop
        self.stopped = False
        self._lock = threading.Lock()
        self._newest: CallRecord | None = None  # recorded since the last time it was told

    def tell(self, entry: CallRecord) -> None:
        """Have the callback told of ``entry``: at once without a loop, else on the loop,
        once for every call recorded before it runs."""
        loop = self.loop
        if loop is None or loop.is_closed() or not loop.is_running():
            # no loop to leave it to (stopped: it would wait there until it ran again)
            with self._lock:
                self._newest = None  # a redraw left on the stopped loop has nothing to add
            if not self.stopped:
                self.callback(entry)
            return
        with self._lock:
            waiting = self._newest is not None
            self._newest = entry
        if waiting:
            return  # a redraw is already on its way; it will show this call too
        try:
            loop.call_soon_threadsafe(self._run)
        except RuntimeError:  # the loop closed just now: no one there to redraw
            with self._lock:
                self._newest = None

    def _run(self) -> None:
        with self._lock:
            entry, self._newest = self._newest, None
        if entry is None or self.stopped:
            return
        try:
            self.callback(entry)
        except Exception:  # a widget that fails to redraw: say so, the history stands
            log.exception("nexus_jupyter: refreshing a call history view failed")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


_session = CallHistory()


def session_history() -> CallHistory:
    """The history the magics and widgets of this kernel share."""
    return _session
