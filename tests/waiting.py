"""Waiting on the registry in tests: re-check after every registry event, with a deadline
(no sleeps). Shared by the directory, export, reliability and MCP tests. And, for a test on
an event loop (where what it waits for happens on other threads or on the same loop),
:func:`until`: re-check every few milliseconds while the loop runs, with a deadline."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from nexus_jupyter import Registry


def wait_until(reg: Registry, check: Callable[[], object], timeout: float = 30.0) -> None:
    """Return once ``check()`` holds; fail with the registry's status after ``timeout`` s."""
    changed = threading.Event()
    unsubscribe = reg.subscribe(lambda _change: changed.set())
    deadline = time.monotonic() + timeout
    try:
        while not check():
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"condition not met within {timeout} s; status={reg.status()}")
            changed.wait(left)
            changed.clear()
    finally:
        unsubscribe()


def wait_for_test_state(reg: Registry, name: str, states: set[str] | str, deadline: float) -> str:
    """Wait on registry events (no sleeps) until tool ``name``'s test state is in ``states``;
    returns it. ``deadline`` is a ``time.monotonic()`` value."""
    wanted = {states} if isinstance(states, str) else set(states)
    changed = threading.Event()
    unsubscribe = reg.subscribe(lambda _change: changed.set())
    try:
        while True:
            state = reg.test_status(name).state
            if state in wanted:
                return state
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{name}: {reg.test_status(name)} not in {wanted} in time")
            changed.wait(left)
            changed.clear()
    finally:
        unsubscribe()


async def until(check: Callable[[], Any], what: str, deadline: float = 20.0) -> Any:
    """``check()``'s first truthy value, re-checked while the running loop goes on; fails
    saying it waited for ``what`` after ``deadline`` seconds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while not (value := check()):
        assert loop.time() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)
    return value
