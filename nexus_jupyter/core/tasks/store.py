"""Where the state of tasks lives: the :class:`TaskStore` protocol and :class:`InMemoryTaskStore`.

A task is a tool call that outlives its request (the MCP tasks extension): the client gets a
task id at once and polls for the outcome. Whoever runs the call writes its state here;
whoever answers a poll reads it, possibly another process (a Redis store shares tasks
between replicas)::

    store = InMemoryTaskStore()
    await store.create(TaskRecord.new("slow_compute", ttl_ms=60_000))
    record = await store.transition(task_id, status="completed", result={...})
    await store.get(task_id)            # None once unknown or expired

The contract every store keeps:

- ``create`` makes the task readable before it returns (a poll right after sees it).
- ``get`` returns ``None`` for an unknown task and for a finished one whose TTL has run out
  since it was last updated (a task still running never expires: its result must land); a
  store may forget expired tasks at any time after that.
- ``transition`` changes a task that has not finished yet, atomically, and returns the new
  record; it returns ``None`` (and changes nothing) for an unknown, expired or finished
  task, so a result that arrives after a cancel cannot overwrite it.

Two more methods are optional (:class:`TaskListing`, :class:`TaskChanges`); both stores here
have them. ``list_tasks(owner, session)`` gives the tasks one requestor may see, oldest first
(what ``tasks/list`` of 2025-11-25 answers; a server whose store cannot list does not offer
it). ``watch_changes(listener)`` calls ``listener(record)`` after every ``create`` and
successful ``transition``, from any process sharing the store (task status notifications).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "TERMINAL_STATUSES",
    "InMemoryTaskStore",
    "TaskChanges",
    "TaskListing",
    "TaskRecord",
    "TaskStatus",
    "TaskStore",
]

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task's state, as a poll shows it. Times are Unix seconds.

    ``result`` is the call's result in its wire form (a JSON object) once ``completed``;
    ``error`` a JSON-RPC error object (``code``, ``message``, ``data``) once ``failed``;
    ``input_requests`` the questions waiting for the client while ``input_required``
    (key -> ``{"method", "params"}``). ``owner`` is who may see the task (an
    authenticated subject; empty when the server has no authentication); ``session`` the
    2025-11-25 session that asked for it (empty for 2026-07-28 tasks, which have none).
    """

    task_id: str
    tool: str
    status: TaskStatus = "working"
    created_at: float = 0.0
    updated_at: float = 0.0
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    owner: str = ""
    session: str = ""

    @classmethod
    def new(
        cls,
        tool: str,
        *,
        ttl_ms: int | None = None,
        poll_interval_ms: int | None = None,
        owner: str = "",
        session: str = "",
    ) -> TaskRecord:
        """A fresh ``working`` task with an unguessable id."""
        now = time.time()
        return cls(
            task_id=secrets.token_urlsafe(16),
            tool=tool,
            created_at=now,
            updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms,
            owner=owner,
            session=session,
        )

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def expired(self, now: float | None = None) -> bool:
        """Whether it finished and its TTL has run out since (never, without a TTL)."""
        if self.ttl_ms is None or not self.terminal:
            return False
        return (now if now is not None else time.time()) > self.updated_at + self.ttl_ms / 1000

    def evolve(self, **changes: Any) -> TaskRecord:
        """A copy with ``changes`` and ``updated_at`` set to now."""
        return replace(self, updated_at=time.time(), **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what a shared store keeps)."""
        return {
            "task_id": self.task_id,
            "tool": self.tool,
            "status": self.status,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "ttl_ms": self.ttl_ms,
            "poll_interval_ms": self.poll_interval_ms,
            "status_message": self.status_message,
            "result": self.result,
            "error": self.error,
            "input_requests": self.input_requests,
            "owner": self.owner,
            "session": self.session,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskRecord:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@runtime_checkable
class TaskStore(Protocol):
    """The state of tasks, shared by whoever runs them and whoever polls (contract above)."""

    async def create(self, record: TaskRecord) -> None: ...

    async def get(self, task_id: str) -> TaskRecord | None: ...

    async def transition(self, task_id: str, **changes: Any) -> TaskRecord | None: ...


TaskChangeListener = Callable[[TaskRecord], None]


@runtime_checkable
class TaskListing(Protocol):
    """A store that can enumerate one requestor's tasks."""

    async def list_tasks(self, owner: str, session: str) -> list[TaskRecord]: ...


@runtime_checkable
class TaskChanges(Protocol):
    """A store that tells of every change (listeners are sync and must not raise)."""

    def watch_changes(self, listener: TaskChangeListener) -> None: ...


def tell_listeners(listeners: list[TaskChangeListener], record: TaskRecord) -> None:
    """Call each listener with ``record``; one that raises is logged, the others still hear."""
    for listener in list(listeners):
        try:
            listener(record)
        except Exception:
            logging.getLogger(__name__).exception("task change listener failed")


class InMemoryTaskStore:
    """Tasks of this process, forgotten when it exits; expired ones are dropped as found."""

    def __init__(self) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._lock = threading.Lock()  # never held across an await: any loop may use it
        self._listeners: list[TaskChangeListener] = []

    def watch_changes(self, listener: TaskChangeListener) -> None:
        self._listeners.append(listener)

    async def create(self, record: TaskRecord) -> None:
        with self._lock:
            self._drop_expired()
            self._records[record.task_id] = record
        tell_listeners(self._listeners, record)

    async def list_tasks(self, owner: str, session: str) -> list[TaskRecord]:
        now = time.time()
        with self._lock:
            mine = [
                r
                for r in self._records.values()
                if r.owner == owner and r.session == session and not r.expired(now)
            ]
        return sorted(mine, key=lambda r: (r.created_at, r.task_id))

    async def get(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is None or record.expired():
            return None
        return record

    async def transition(self, task_id: str, **changes: Any) -> TaskRecord | None:
        with self._lock:
            record = self._records.get(task_id)
            if record is None or record.terminal or record.expired():
                return None
            record = record.evolve(**changes)
            self._records[task_id] = record
        tell_listeners(self._listeners, record)
        return record

    def __len__(self) -> int:
        return len(self._records)

    def _drop_expired(self) -> None:
        now = time.time()
        for task_id in [t for t, r in self._records.items() if r.expired(now)]:
            del self._records[task_id]
