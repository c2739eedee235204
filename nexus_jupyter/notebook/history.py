"""The session's call history: one public object shared by ``%tool call``, the forms and the
Python API, so ``%tool history`` shows every call however it was made.

>>> from nexus_jupyter.notebook.history import CallHistory
>>> history = CallHistory()
>>> record = history.record("add", {"a": 1, "b": 2}, value=3, duration=0.001)
>>> [r.tool for r in history.entries()]
['add']
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CallHistory", "CallRecord", "session_history"]

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
    the kernel thread, hence the lock. ``subscribe(callback)`` is how widgets refresh.
    """

    def __init__(self, limit: int = 500) -> None:
        self.limit = limit
        self._records: list[CallRecord] = []
        self._lock = threading.Lock()
        self._subscribers: list[Callable[[CallRecord], Any]] = []

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
        for callback in subscribers:
            callback(entry)
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
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    def __len__(self) -> int:
        return len(self._records)


_session = CallHistory()


def session_history() -> CallHistory:
    """The history the magics and widgets of this kernel share."""
    return _session
