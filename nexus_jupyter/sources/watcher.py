"""The watch loop of a :class:`~.directory.DirectorySource`, on the registry's loop.

``watchfiles.awatch`` yields a batch once ``step_ms`` pass with no new change (and at the
latest after ``debounce_ms`` of continuous changes); each batch goes to
``DirectorySource.apply_changes`` on a worker thread, so a slow tool file never stalls the
registry's loop (MCP sessions live there too). Files that look like a save in progress
(:mod:`.settle`) are retried every ``SETTLE_MS`` by a second task until they settle.

A folder that does not exist yet is waited for (checked twice a second) and watched once
it appears; a folder that disappears is waited for again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from typing import Any

__all__ = ["FolderWatcher"]

log = logging.getLogger(__name__)
_MISSING_POLL_S = 0.5


class FolderWatcher:
    """Watches ``source.root`` until :meth:`stop`. ``ready`` is set while watching."""

    def __init__(self, source: Any, *, step_ms: int, debounce_ms: int) -> None:
        self.source = source
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self.ready = threading.Event()
        self.batches = 0
        self._task: asyncio.Task[None] | None = None
        self._settler: asyncio.Task[None] | None = None
        self._unsettled: dict[Any, float] = {}  # path -> when it was first found mid-save
        self._stop: Any = None

    def start(self) -> None:
        import anyio

        self._stop = anyio.Event()
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"watch {self.source.name}"
        )

    async def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()
        for task in (self._task, self._settler):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._task = self._settler = None
        self.ready.clear()

    async def _run(self) -> None:
        root = self.source.root
        while not self._stop.is_set():
            if not root.is_dir():
                self.ready.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), _MISSING_POLL_S)
                continue
            try:
                await self._watch()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the folder vanished, inotify limits, ...: say so, retry
                if not threading.main_thread().is_alive():
                    return  # the process is ending (no new thread can start): nobody to tell
                log.warning("watching %s failed: %s", root, exc)
                self._status(f"watching failed: {type(exc).__name__}: {exc}")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), _MISSING_POLL_S)
            finally:
                self.ready.clear()

    async def _watch(self) -> None:
        from watchfiles import awatch

        root = self.source.root
        changes_iter = awatch(
            root,
            step=self.step_ms,
            debounce=self.debounce_ms,
            stop_event=self._stop,
            # always below too: a helper package (``_shared/``) beside the tool files is not
            # itself loaded, but an edit to it reloads the files that import it
            recursive=True,
            watch_filter=None,
        )
        pending = asyncio.ensure_future(changes_iter.__anext__())
        try:
            # The first step of awatch creates the OS watch synchronously; once it has run,
            # nothing written from now on can be missed. Rescan for what changed before.
            for _ in range(3):
                await asyncio.sleep(0)
            await asyncio.to_thread(self.source.rescan)
            self.ready.set()
            self.source.publish()
            while True:
                try:
                    changes = await pending
                except StopAsyncIteration:
                    return
                pending = asyncio.ensure_future(changes_iter.__anext__())
                self.batches += 1
                paths: set[Any] = {path for _, path in changes}
                try:
                    await self._apply(paths)
                except RuntimeError as exc:
                    if "shutdown" in str(exc):  # the interpreter is exiting: stop quietly
                        return
                    log.exception("reloading %s failed", root)
                    self._status(f"reloading failed: {type(exc).__name__}: {exc}")
                except Exception as exc:  # a bug in reloading must not end the watch
                    log.exception("reloading %s failed", root)
                    self._status(f"reloading failed: {type(exc).__name__}: {exc}")
                if not root.is_dir():
                    return
        finally:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
            with contextlib.suppress(BaseException):
                await changes_iter.aclose()

    async def _apply(self, paths: set[Any]) -> None:
        """Reload ``paths``; files that look mid-save (see :mod:`.settle`) are retried by
        :meth:`_settle` once they settle, without holding up the next batches."""
        deferred: set[Any] = set()
        await asyncio.to_thread(self.source.apply_changes, paths, deferred)
        if not deferred:
            return
        now = time.monotonic()
        for path in deferred:
            self._unsettled.setdefault(path, now)  # the first wait counts toward the limit
        if self._settler is None or self._settler.done():
            self._settler = asyncio.get_running_loop().create_task(self._settle())

    async def _settle(self) -> None:
        from .settle import MAX_SETTLE_S, SETTLE_MS

        while self._unsettled:
            await asyncio.sleep(SETTLE_MS / 1000)
            now = time.monotonic()
            tried = set(self._unsettled)  # _apply may add more while this retry runs
            overdue = {p for p in tried if now - self._unsettled[p] > MAX_SETTLE_S}
            deferred: set[Any] = set()
            try:
                await asyncio.to_thread(self.source.apply_changes, tried - overdue, deferred)
                if overdue:  # still unsettled after the limit: load it as it is
                    await asyncio.to_thread(self.source.apply_changes, overdue)
            except Exception as exc:  # a bug in reloading must not end the retries
                log.exception("reloading %s failed", self.source.root)
                self._status(f"reloading failed: {type(exc).__name__}: {exc}")
                deferred = set()
            for settled in tried - deferred:
                self._unsettled.pop(settled, None)

    def _status(self, error: str) -> None:
        publisher = self.source._publisher
        if publisher is not None:
            try:
                publisher.set_status(error=error)
            except Exception:
                log.exception("recording the status of %s failed", self.source.name)
