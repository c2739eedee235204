"""Waiting on the registry in tests: re-check after every registry event, with a deadline
(no sleeps). Shared by the directory, export, reliability and MCP tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

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
