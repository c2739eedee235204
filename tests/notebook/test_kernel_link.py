"""Sync tools pinned to a home thread (a kernel's main thread): calls from any thread run
there, unless the tool is ``@tool(threadsafe=True)``; a blocking call made on the home
thread itself runs inline instead of waiting for itself."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from nexus_jupyter import Registry, tool
from nexus_jupyter.notebook.kernel_link import MainThreadHome

T = TypeVar("T")


@pytest.fixture
def home() -> Iterator[MainThreadHome]:
    """A thread running its own event loop, standing in for the kernel's main thread."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="kernel-main", daemon=True)
    thread.start()
    yield MainThreadHome(loop, thread)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def _on(home: MainThreadHome, fn: Callable[[], T]) -> T:
    """Run ``fn()`` on the home thread and return its value."""

    async def run() -> T:
        return fn()

    return asyncio.run_coroutine_threadsafe(run(), home.loop).result(10)


def test_sync_tools_run_on_their_home_thread(home: MainThreadHome) -> None:
    # made on the home thread: sqlite refuses to be used from any other
    conn = _on(home, lambda: sqlite3.connect(":memory:"))

    @tool
    def one() -> int:
        """Ask the connection."""
        return int(conn.execute("select 1").fetchone()[0])

    @tool(threadsafe=True)
    def where() -> str:
        """The thread it ran on."""
        return threading.current_thread().name

    with Registry(search="keyword") as reg:
        reg.add(one)
        reg.add(where)
        reg.set_home_thread("notebook", home)
        assert reg.call_sync("one", {}).value == 1  # from this (test) thread
        assert reg.loop.run(reg.call("one", {}, timeout=5)).value == 1  # from the loop
        assert reg.call_sync("where", {}, timeout=5).value != "kernel-main"
        # a blocking call with a deadline, made on the home thread, runs right there
        assert _on(home, lambda: reg.call_sync("one", {}, timeout=5).value) == 1
        reg.set_home_thread("notebook", None)
        result = reg.call_sync("one", {}, timeout=5)  # on a worker now: sqlite refuses
        assert result.is_error
        assert "thread" in (result.error or "")
    _on(home, conn.close)


def test_a_call_given_up_before_the_home_is_free_never_runs(home: MainThreadHome) -> None:
    ran: list[str] = []
    gate = threading.Event()
    home.loop.call_soon_threadsafe(gate.wait, 10)  # the "kernel" is busy running a cell

    async def give_up() -> None:
        future = home.run(ran.append, "late")
        future.cancel()

    asyncio.run(give_up())
    gate.set()
    _on(home, lambda: None)  # the home thread has processed everything queued before
    assert ran == []


def test_the_search_warm_up_waits_for_the_kernel_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel starts its link (MCP SDK import, endpoint) and the session registry at once;
    embedding every tool for search would share the CPU with the link, so the session
    registry's warm-up starts only once the link is up (or gave up)."""
    from nexus_jupyter.session import (
        defer_search_warm_up,
        reset_session_registry,
        session_registry,
    )

    monkeypatch.chdir(tmp_path)
    warmed = threading.Event()
    monkeypatch.setattr(Registry, "warm_search", lambda self: warmed.set())
    reset_session_registry(None)
    release = defer_search_warm_up()
    try:
        session_registry()  # a cell made the registry before the link was up
        assert not warmed.is_set()
        release()
        assert warmed.is_set()
        release()  # a second release changes nothing
    finally:
        reset_session_registry(None)
    warmed.clear()
    session_registry()  # no link waiting: warms at once
    assert warmed.is_set()
    reset_session_registry(None)
