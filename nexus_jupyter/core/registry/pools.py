"""Worker threads for sync tools: one bounded pool per source, so stuck calls cannot starve
the rest of the server.

A thread cannot be killed. When a sync call is cancelled or times out, its thread runs on
until the tool returns -- forever, for a tool that sleeps or loops. With one shared pool,
eight such calls used every worker, and ``read``, ``ls``, ``tool_search`` and every other
sync tool then waited behind them until the process was killed.

Here each source (``builtin``, ``directory:tools/dynamic``, ``mcp:x`` ...) has its own
:class:`WorkerPool`:

- at most ``max_running`` of its calls run at once (the rest queue);
- a call given up on (cancelled, timed out) stops counting against that limit: its thread is
  *stuck*, and a new worker takes the queue, so the source keeps answering;
- once ``max_stuck`` threads of a source are stuck, new calls of that source are refused
  with :class:`ToolUnavailable` saying so, instead of piling up threads without end; they
  are accepted again as soon as stuck threads finish;
- idle workers exit after ``idle_s`` seconds; all threads are daemons, so a stuck one never
  holds the process at exit.

>>> pool = WorkerPool("demo")
>>> pool.submit(sum, [1, 2]).result()
3
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolUnavailable

__all__ = ["MAX_RUNNING", "MAX_STUCK", "WorkerPool", "WorkerPools"]

MAX_RUNNING = 8
MAX_STUCK = 32
IDLE_S = 30.0


@dataclass(eq=False, slots=True)
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    future: Future[Any] = field(default_factory=Future)
    started: bool = False
    finished: bool = False
    abandoned: bool = False


class WorkerPool:
    """Threads for the sync calls of one source (see the module docs)."""

    def __init__(
        self,
        name: str,
        *,
        max_running: int = MAX_RUNNING,
        max_stuck: int = MAX_STUCK,
        idle_s: float = IDLE_S,
    ) -> None:
        self.name = name
        self.max_running = max_running
        self.max_stuck = max_stuck
        self.idle_s = idle_s
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._queued = 0  # submitted, not started
        self._idle = 0  # workers waiting for a job (or starting)
        self._busy = 0  # workers running a job someone still waits for
        self._stuck = 0  # workers running a job that was given up on

    @property
    def stuck(self) -> int:
        return self._stuck

    @property
    def threads(self) -> int:
        return self._idle + self._busy + self._stuck

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Run ``fn(*args)`` on a worker; raises :class:`ToolUnavailable` when too many of
        this source's calls are stuck."""
        return self._submit(fn, args).future

    def run(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """:meth:`submit` as an asyncio future; cancelling it gives the call up (its thread
        no longer counts against ``max_running``)."""
        job = self._submit(fn, args)
        wrapped = asyncio.wrap_future(job.future)
        wrapped.add_done_callback(lambda f: self._abandon(job) if f.cancelled() else None)
        return wrapped

    def _submit(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> _Job:
        job = _Job(fn, args)
        with self._lock:
            if self._stuck >= self.max_stuck:
                raise ToolUnavailable(
                    f"{self._stuck} calls of {self.name} are still running after they were "
                    "cancelled or timed out; new calls of its tools are refused until some "
                    "finish. Fix the tool that hangs (or restart the server)."
                )
            self._queued += 1
            self._jobs.put(job)
            self._spawn_if_needed()
        return job

    def _spawn_if_needed(self) -> None:
        while self._queued > self._idle and self._idle + self._busy < self.max_running:
            self._idle += 1
            threading.Thread(target=self._work, name=f"tool {self.name}", daemon=True).start()

    def _abandon(self, job: _Job) -> None:
        with self._lock:
            if job.started and not job.finished and not job.abandoned:
                job.abandoned = True
                self._busy -= 1
                self._stuck += 1
                self._spawn_if_needed()

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._queued == 0:
                        self._idle -= 1
                        return
                continue
            with self._lock:
                self._queued -= 1
                self._idle -= 1
                self._busy += 1
                job.started = True
            if job.future.set_running_or_notify_cancel():
                try:
                    job.future.set_result(job.fn(*job.args))
                except BaseException as exc:
                    job.future.set_exception(exc)
            with self._lock:
                job.finished = True
                if job.abandoned:
                    self._stuck -= 1
                else:
                    self._busy -= 1
                self._idle += 1

    def __repr__(self) -> str:
        return f"<WorkerPool {self.name} busy={self._busy} stuck={self._stuck} idle={self._idle}>"


class WorkerPools:
    """One :class:`WorkerPool` per source name, made on first use."""

    def __init__(self) -> None:
        self._pools: dict[str, WorkerPool] = {}
        self._lock = threading.Lock()

    def for_source(self, source: str) -> WorkerPool:
        pool = self._pools.get(source)
        if pool is None:
            with self._lock:
                pool = self._pools.setdefault(source, WorkerPool(source))
        return pool

    def describe(self) -> dict[str, dict[str, int]]:
        return {
            name: {"threads": p.threads, "stuck": p.stuck}
            for name, p in sorted(self._pools.items())
        }
