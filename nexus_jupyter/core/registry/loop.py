"""The registry's background event loop, on a thread of its own.

Long-lived work (directory watchers, MCP client sessions, an MCP server started from a
kernel) runs here, never on the notebook's loop. It starts on first use and stops cleanly.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["BackgroundLoop"]

T = TypeVar("T")
log = logging.getLogger(__name__)


class BackgroundLoop:
    """An asyncio loop on a daemon thread.

    >>> bg = BackgroundLoop(name="demo")
    >>> async def answer() -> int:
    ...     return 42
    >>> bg.run(answer())
    42
    >>> bg.stop()
    """

    def __init__(self, name: str = "nexus-registry") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started if needed."""
        with self._lock:
            if self._loop is None or not self.running:
                self._start()
            assert self._loop is not None
            return self._loop

    def _start(self) -> None:
        ready = threading.Event()
        loop = asyncio.new_event_loop()
        loop.set_exception_handler(_log_exception)

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(ready.set)
            try:
                loop.run_forever()
            finally:
                _cancel_all(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.run_until_complete(loop.shutdown_default_executor())
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        ready.wait()

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the background loop; returns a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the background loop and wait for its result (blocking).

        Calling this from the background loop's own thread would deadlock, so it raises.
        """
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError(
                "BackgroundLoop.run() was called on the background loop itself; "
                "await the coroutine instead."
            )
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except BaseException:
            future.cancel()
            raise

    def call_soon(self, fn: Any, *args: Any) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel pending tasks, stop the loop and join the thread."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None or not thread.is_alive():
            return
        loop.call_soon_threadsafe(loop.stop)
        if threading.current_thread() is not thread:
            thread.join(timeout)


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


def _log_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    exc = context.get("exception")
    log.error("background loop: %s", context.get("message", "error"), exc_info=exc)
