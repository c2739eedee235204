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
