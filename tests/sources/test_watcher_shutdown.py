"""A folder watcher whose watch fails as the process ends (no new thread can start then: "can't
register atexit after shutdown") says nothing; while the process runs it says why and retries."""

from __future__ import annotations

import asyncio
import logging
import threading
from pathlib import Path

import pytest

from nexus_jupyter.sources.watcher import FolderWatcher


class _Folder:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.name = "directory"
        self._publisher = None


def _failing_watcher(root: Path) -> FolderWatcher:
    watcher = FolderWatcher(_Folder(root), step_ms=50, debounce_ms=50)

    async def fail() -> None:
        raise RuntimeError("can't register atexit after shutdown")

    watcher._watch = fail  # type: ignore[method-assign]
    return watcher


def _watcher_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "nexus_jupyter.sources.watcher"]


async def test_a_watch_that_fails_as_the_process_ends_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ended = threading.Thread(target=lambda: None)
    ended.start()
    ended.join()
    monkeypatch.setattr(threading, "main_thread", lambda: ended)  # as in interpreter shutdown
    watcher = _failing_watcher(tmp_path)
    with caplog.at_level(logging.WARNING, logger="nexus_jupyter.sources.watcher"):
        watcher.start()
        assert watcher._task is not None
        await asyncio.wait_for(watcher._task, 5)  # it ends instead of retrying
    assert _watcher_records(caplog) == []


async def test_a_watch_that_fails_while_the_process_runs_is_reported(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    watcher = _failing_watcher(tmp_path)
    with caplog.at_level(logging.WARNING, logger="nexus_jupyter.sources.watcher"):
        watcher.start()
        for _ in range(100):
            if _watcher_records(caplog):
                break
            await asyncio.sleep(0.02)
        await watcher.stop()
    # (only the watcher's: a thread left by an earlier test of this worker may log too,
    # as a keyring warning of a credential lookup once did, first)
    assert [r.getMessage() for r in _watcher_records(caplog)][:1] == [
        f"watching {tmp_path} failed: can't register atexit after shutdown"
    ]
