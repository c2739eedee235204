"""How ``nexus-tools serve`` stops on SIGTERM (what service managers, test harnesses and
MCP clients send) or Ctrl-C: the same clean way as when the client goes away.

- while starting: the start is abandoned (``KeyboardInterrupt`` out of whatever was
  running), then serve cleans up and exits 0;
- while serving: the serving task is cancelled (no exception in the middle of anything),
  sessions close, serve cleans up and exits 0;
- while cleaning up (closing the registry, stopping MCP servers): nothing is cut short.

If the clean stop takes longer than :data:`FORCED_EXIT_S` after the signal, or a second
signal comes, the child processes are ended and the process exits with code 1.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from .child_processes import child_pids, end_children

__all__ = ["FORCED_EXIT_S", "ServeStop"]

T = TypeVar("T")

#: After the signal, how long a clean stop may take before the process is ended regardless
#: (a tool file's import stuck in a loop, a thread that never returns).
FORCED_EXIT_S = 3.5


class ServeStop:
    """The signal handling of one ``serve`` run (main thread only; elsewhere it is inert)."""

    def __init__(self) -> None:
        self.signalled = threading.Event()
        self._phase = "starting"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Future[Any] | None = None
        self._signal_name = "SIGTERM"
        self._before: dict[int, Any] = {}
        #: The child processes that were there before serve began (never ended by it).
        self.spare: frozenset[int] = frozenset(child_pids())

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._before[signum] = signal.signal(signum, self._handle)

    def uninstall(self) -> None:
        """Put back the handlers :meth:`install` replaced (serve run in process returns)."""
        for signum, handler in self._before.items():
            signal.signal(signum, handler)
        self._before.clear()

    async def serving(self, coro: Coroutine[Any, Any, T]) -> T | None:
        """Run ``coro`` (the server) as the task a signal cancels; ``None`` if cancelled so."""
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(coro)
        self._phase = "serving"
        if self.signalled.is_set():  # the signal came before serving began (or just now)
            self._task.cancel()
        try:
            return await self._task
        except asyncio.CancelledError:
            if not self.signalled.is_set():
                raise
            return None
        finally:
            self._phase = "cleaning"

    def ready(self) -> None:
        """Starting is done: a signal from now on makes :meth:`serving` return at once."""
        self._phase = "ready"

    def cleaning(self) -> None:
        """From now on a signal cuts nothing short (only the timer or a second signal)."""
        self._phase = "cleaning"

    def _handle(self, signum: int, frame: Any) -> None:
        if self.signalled.is_set():  # a second signal: stop now
            self._force_exit()
        self.signalled.set()
        self._signal_name = signal.Signals(signum).name
        timer = threading.Timer(FORCED_EXIT_S, self._force_exit)
        timer.daemon = True
        timer.start()
        if self._phase == "starting":
            raise KeyboardInterrupt
        if self._phase == "serving" and self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)

    def _force_exit(self) -> None:
        print(
            f"nexus-tools serve: did not stop within {FORCED_EXIT_S:g} s of "
            f"{self._signal_name}; ending now",
            file=sys.stderr,
            flush=True,
        )
        try:
            end_children(grace=0.2, spare=self.spare)
        finally:
            os._exit(1)
