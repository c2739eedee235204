"""The in-memory task store keeps the TaskStore contract: readable at once, finished tasks
are final, expiry counts from the last update."""

from __future__ import annotations

import asyncio

from nexus_jupyter.core.tasks.store import InMemoryTaskStore, TaskRecord, TaskStore


def test_store_contract() -> None:
    async def scenario() -> None:
        store = InMemoryTaskStore()
        assert isinstance(store, TaskStore)
        record = TaskRecord.new("slow", ttl_ms=60_000, poll_interval_ms=500)
        await store.create(record)
        assert await store.get(record.task_id) == record
        assert await store.get("nope") is None
        asked = await store.transition(
            record.task_id,
            status="input_required",
            input_requests={"k": {"method": "elicitation/create"}},
        )
        assert asked is not None and asked.status == "input_required"
        done = await store.transition(record.task_id, status="completed", result={"content": []})
        assert done is not None and done.terminal and done.updated_at >= record.updated_at
        # a finished task is final: a late cancel or result changes nothing
        assert await store.transition(record.task_id, status="cancelled") is None
        again = await store.get(record.task_id)
        assert again is not None and again.status == "completed"
        assert TaskRecord.from_dict(again.to_dict()) == again

    asyncio.run(scenario())


def test_expired_tasks_are_gone() -> None:
    async def scenario() -> None:
        store = InMemoryTaskStore()
        record = TaskRecord.new("slow", ttl_ms=50)
        await store.create(record)
        await asyncio.sleep(0.08)
        assert await store.get(record.task_id) is not None  # still running: kept
        assert await store.transition(record.task_id, status="completed") is not None
        await asyncio.sleep(0.08)
        assert await store.get(record.task_id) is None  # finished, and its TTL ran out
        await store.create(TaskRecord.new("other"))  # creating drops what has expired
        assert len(store) == 1

    asyncio.run(scenario())
