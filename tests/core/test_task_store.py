"""The in-memory task store keeps the TaskStore contract: readable at once, finished tasks
are final, expiry counts from the last update."""

from __future__ import annotations

import asyncio

from nexus_jupyter.core.tasks.store import (
    InMemoryTaskStore,
    TaskChanges,
    TaskListing,
    TaskRecord,
    TaskStore,
)


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


def test_listing_is_per_requestor_and_listeners_hear_every_change() -> None:
    async def scenario() -> None:
        store = InMemoryTaskStore()
        assert isinstance(store, TaskListing) and isinstance(store, TaskChanges)
        heard: list[tuple[str, str]] = []
        store.watch_changes(lambda r: heard.append((r.task_id, r.status)))
        mine = [TaskRecord.new("slow", owner="alice", session="s1") for _ in range(3)]
        for record in mine:
            await store.create(record)
        await store.create(TaskRecord.new("slow", owner="alice", session="s2"))
        await store.create(TaskRecord.new("slow", owner="bob", session="s1"))
        listed = await store.list_tasks("alice", "s1")
        assert [r.task_id for r in listed] == [r.task_id for r in mine]
        await store.transition(mine[0].task_id, status="completed")
        await store.transition(mine[0].task_id, status="cancelled")  # final: no change
        assert heard[:3] == [(r.task_id, "working") for r in mine]
        assert heard[-1] == (mine[0].task_id, "completed") and len(heard) == 6

    asyncio.run(scenario())
