"""Task state in Redis: a task started through one replica is polled, and cancelled,
through any other (the tasks extension's :class:`~nexus_jupyter.core.tasks.store.TaskStore`).

    store = RedisTaskStore(ClusterAddress.parse("redis://127.0.0.1:6379/0"))
    await store.create(TaskRecord.new("crunch", ttl_ms=60_000))

Keys: ``P:task:<id>`` holds the record (JSON); once it has finished it expires ``ttl_ms``
after that last change, so Redis forgets it exactly when the contract lets a store forget.
A change is an optimistic transaction (``WATCH``), so two replicas racing to finish the same
task cannot both win: the first terminal state stays. Turning a task ``cancelled`` is also
announced on ``P:task-cancelled``; the replica running the call stops it
(:meth:`watch_cancellations`), so a cancel through any replica really stops the work.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from ..core.tasks.store import TaskRecord
from .store import ClusterAddress, ClusterStore, follow_channel, stop_task

__all__ = ["RedisTaskStore"]


class RedisTaskStore:
    """A ``TaskStore`` shared by every replica of a cluster."""

    def __init__(self, address: ClusterAddress) -> None:
        self.address = address
        self._store: ClusterStore | None = None
        self._cancel_listeners: list[Callable[[str], None]] = []
        self._reader: asyncio.Task[None] | None = None

    @property
    def store(self) -> ClusterStore:
        # Made on first use, on the loop that serves (redis.asyncio binds to a loop).
        if self._store is None:
            self._store = ClusterStore(self.address)
        return self._store

    @property
    def redis(self) -> Any:
        return self.store.redis

    def _key(self, task_id: str) -> str:
        return self.store.task_key(task_id)

    async def create(self, record: TaskRecord) -> None:
        self._start_reader()
        await self.redis.set(self._key(record.task_id), json.dumps(record.to_dict()))

    async def get(self, task_id: str) -> TaskRecord | None:
        raw = await self.redis.get(self._key(task_id))
        if raw is None:
            return None
        record = TaskRecord.from_dict(json.loads(raw))
        return None if record.expired() else record

    async def transition(self, task_id: str, **changes: Any) -> TaskRecord | None:
        from redis.exceptions import WatchError

        key = self._key(task_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        return None
                    record = TaskRecord.from_dict(json.loads(raw))
                    if record.terminal or record.expired():
                        return None
                    record = record.evolve(**changes)
                    pipe.multi()
                    if record.terminal and record.ttl_ms is not None:
                        pipe.set(key, json.dumps(record.to_dict()), px=max(1, record.ttl_ms))
                    else:
                        pipe.set(key, json.dumps(record.to_dict()))
                    if record.status == "cancelled":
                        pipe.publish(self.store.tasks_cancelled_channel, task_id)
                    await pipe.execute()
                    return record
                except WatchError:
                    continue  # another replica changed it meanwhile: look again

    # -- cancellations from other replicas -------------------------------------------------------

    def watch_cancellations(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(task_id)`` (on this loop) whenever any replica cancels a task."""
        self._cancel_listeners.append(listener)

    def _start_reader(self) -> None:
        if self._reader is None and self._cancel_listeners:
            self._reader = asyncio.ensure_future(self._read_forever())

    async def _read_forever(self) -> None:
        await follow_channel(self.address, "tasks_cancelled_channel", self._cancelled)

    async def _cancelled(self, task_id: str) -> None:
        for listener in list(self._cancel_listeners):
            listener(task_id)

    async def close(self) -> None:
        await stop_task(self._reader)
        self._reader = None
        if self._store is not None:
            await self._store.close()
            self._store = None
