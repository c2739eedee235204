"""Task state in Redis: a task started through one replica is polled, and cancelled,
through any other (the tasks extension's :class:`~nexus_jupyter.core.tasks.store.TaskStore`).

    store = RedisTaskStore(ClusterAddress.parse("redis://127.0.0.1:6379/0"))
    await store.create(TaskRecord.new("crunch", ttl_ms=60_000))

Keys: ``P:task:<id>`` holds the record (JSON); once it has finished it expires ``ttl_ms``
after that last change, so Redis forgets it exactly when the contract lets a store forget.
``P:task-index:<owner>:<session>`` lists a requestor's task ids by creation time (what
``tasks/list`` reads; ids whose record is gone are dropped as found). A change is an
optimistic transaction (``WATCH``), so two replicas racing to finish the same task cannot
both win: the first terminal state stays. Every new record and change is also announced on
``P:task-changed`` (the record, JSON): each replica's :meth:`watch_changes` listeners hear it
(status notifications), and a cancel through any replica stops the call where it runs
(:meth:`watch_cancellations`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from ..core.tasks.store import TaskChangeListener, TaskRecord, tell_listeners
from .store import ClusterAddress, ClusterStore, follow_channel, stop_task

__all__ = ["RedisTaskStore"]


class RedisTaskStore:
    """A ``TaskStore`` shared by every replica of a cluster."""

    def __init__(self, address: ClusterAddress, *, outage_level: int = logging.WARNING) -> None:
        self.address = address
        #: The level a Redis outage is logged at (DEBUG when the ``cluster`` source says it).
        self.outage_level = outage_level
        self._store: ClusterStore | None = None
        self._cancel_listeners: list[Callable[[str], None]] = []
        self._change_listeners: list[TaskChangeListener] = []
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

    #: How long a requestor's task index outlives its newest task (its tasks expire sooner).
    INDEX_TTL_S = 7 * 24 * 3600

    async def create(self, record: TaskRecord) -> None:
        self.follow_changes()
        raw = json.dumps(record.to_dict())
        index = self.store.task_index_key(record.owner, record.session)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self._key(record.task_id), raw)
            pipe.zadd(index, {record.task_id: record.created_at})
            pipe.expire(index, self.INDEX_TTL_S)
            pipe.publish(self.store.tasks_changed_channel, raw)
            await pipe.execute()

    async def list_tasks(self, owner: str, session: str) -> list[TaskRecord]:
        index = self.store.task_index_key(owner, session)
        ids = await self.redis.zrange(index, 0, -1)
        if not ids:
            return []
        raws = await self.redis.mget([self._key(i) for i in ids])
        records, gone = [], []
        for task_id, raw in zip(ids, raws, strict=True):
            record = TaskRecord.from_dict(json.loads(raw)) if raw is not None else None
            if record is None or record.expired():
                gone.append(task_id)
            else:
                records.append(record)
        if gone:
            await self.redis.zrem(index, *gone)
        return records

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
                    raw = json.dumps(record.to_dict())
                    pipe.multi()
                    if record.terminal and record.ttl_ms is not None:
                        pipe.set(key, raw, px=max(1, record.ttl_ms))
                    else:
                        pipe.set(key, raw)
                    pipe.publish(self.store.tasks_changed_channel, raw)
                    await pipe.execute()
                    return record
                except WatchError:
                    continue  # another replica changed it meanwhile: look again

    # -- changes made through any replica ------------------------------------------------------

    def watch_cancellations(self, listener: Callable[[str], None]) -> None:
        """Call ``listener(task_id)`` (on this loop) whenever any replica cancels a task."""
        self._cancel_listeners.append(listener)

    def watch_changes(self, listener: TaskChangeListener) -> None:
        """Call ``listener(record)`` (on this loop) for every new task and change, made
        through any replica (once :meth:`follow_changes` runs: at the first task here)."""
        self._change_listeners.append(listener)

    def follow_changes(self) -> None:
        """Start reading the change channel (from the serving loop), if not yet."""
        if self._reader is None and (self._cancel_listeners or self._change_listeners):
            self._reader = asyncio.ensure_future(self._read_forever())

    async def _read_forever(self) -> None:
        await follow_channel(
            self.address, "tasks_changed_channel", self._changed, outage_level=self.outage_level
        )

    async def _changed(self, raw: str) -> None:
        record = TaskRecord.from_dict(json.loads(raw))
        if record.status == "cancelled":
            for listener in list(self._cancel_listeners):
                listener(record.task_id)
        tell_listeners(self._change_listeners, record)

    async def close(self) -> None:
        await stop_task(self._reader)
        self._reader = None
        if self._store is not None:
            await self._store.close()
            self._store = None
