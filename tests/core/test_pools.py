"""Per-source worker pools: a call given up on frees its slot; too many stuck calls of one
source are refused with a clear error, and accepted again once they finish."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable

import pytest

from nexus_jupyter.core.errors import ToolUnavailable
from nexus_jupyter.core.registry.pools import WorkerPool, WorkerPools


def _eventually(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


async def test_abandoned_calls_free_their_slot_and_are_capped() -> None:
    pool = WorkerPool("demo", max_running=2, max_stuck=2)
    release = threading.Event()
    stuck = [pool.run(release.wait) for _ in range(2)]
    await asyncio.sleep(0.1)
    for future in stuck:
        future.cancel()
    await asyncio.sleep(0)
    assert pool.stuck == 2
    with pytest.raises(ToolUnavailable, match="2 calls of demo are still running"):
        pool.submit(time.sleep, 0)
    release.set()
    assert await asyncio.to_thread(_eventually, lambda: pool.stuck == 0)
    assert await pool.run(sum, [1, 2]) == 3


async def test_a_stuck_call_does_not_hold_up_the_queue() -> None:
    pool = WorkerPool("demo", max_running=1)
    release = threading.Event()
    first = pool.run(release.wait)
    queued = pool.run(sum, [2, 3])  # waits behind the only running slot
    await asyncio.sleep(0.1)
    assert not queued.done()
    first.cancel()  # given up on: a new worker takes the queue
    assert await asyncio.wait_for(queued, 5) == 5
    release.set()


def test_each_source_has_its_own_pool() -> None:
    pools = WorkerPools()
    assert pools.for_source("a") is pools.for_source("a")
    assert pools.for_source("a") is not pools.for_source("builtin")
    assert pools.for_source("a").submit(max, 1, 4).result(5) == 4
    assert pools.describe()["a"]["stuck"] == 0
