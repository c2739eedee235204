"""The server's side of one worker process (:class:`WorkerProcess`), the claim of one
request on it (:class:`Ticket`), and a source's set of them (:class:`WorkerSet`).

A worker runs one request at a time. Requests wait for a worker without holding a thread
(a waiter is a future the next free worker is handed to), and a request's pipe is read
either by the event loop that made it (:meth:`WorkerProcess.request_on_loop`) or, for a
file load, by the thread that loads (:meth:`WorkerProcess.request`).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from .worker_protocol import MessageBuffer, UnreadableMessage, write_message

__all__ = ["EventHandler", "Respond", "Ticket", "WorkerProcess", "WorkerSet", "no_caller"]

#: Messages a worker sends while a request runs, before its answer (see :mod:`.worker`).
EVENTS = frozenset({"progress", "log", "ask", "summary"})
#: Sends a reply to the worker (from any thread, whenever the client has answered).
Respond = Callable[[tuple[Any, ...]], None]
EventHandler = Callable[[tuple[Any, ...], Respond], None]


def no_caller(event: tuple[Any, ...], respond: Respond) -> None:
    """Events of a request that has no caller to relay to (a load, a resource read, a call
    that was cancelled): a question gets a refusal, anything else is dropped."""
    if event[0] == "ask":
        refusal = "this call has no client that can answer (or it was cancelled)"
        respond(("reply", event[1], False, "CallerUnavailable", refusal))


#: Starts every worker process, from one thread that lives as long as this process: a
#: worker asks the kernel to kill it when the thread that started it ends (Linux's parent
#: death signal, see :mod:`.worker`), so workers never outlive their server, even one
#: stuck in a C call, and a pool thread that ends must not take its workers with it.
_SPAWNER = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nexus-worker-spawner")


def _start() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "nexus_jupyter.sources.worker", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,  # what tools print and log shows with the server's own stderr
        start_new_session=True,  # its own process group: a kill takes the tool's children
    )


class WorkerProcess:
    """One worker process and its pipes."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.proc = proc
        self.fd = proc.stdout.fileno()
        self._inbox = MessageBuffer(from_worker=True)
        self.broken = False  # its channel failed or it was killed: never reused
        self.awaiting = False  # a request was sent whose answer has not been read yet
        self._write = threading.Lock()  # requests and (from other threads) replies

    @classmethod
    def start(cls) -> WorkerProcess:
        return cls(_SPAWNER.submit(_start).result())

    @classmethod
    async def start_on_loop(cls) -> WorkerProcess:
        """:meth:`start` without blocking the loop; cancelled, the process still comes and
        ``on_cancel`` gets it."""
        return cls(await asyncio.wrap_future(_SPAWNER.submit(_start)))

    @property
    def alive(self) -> bool:
        return not self.broken and self.proc.poll() is None

    def send(self, message: tuple[Any, ...]) -> None:
        """Write ``message``; a worker that has ended is just marked broken."""
        assert self.proc.stdin is not None
        try:
            with self._write:
                write_message(self.proc.stdin, message)
        except (BrokenPipeError, OSError, ValueError):  # ValueError: the pipe was closed
            self.broken = True

    def read_some(self) -> bytes:
        try:
            return os.read(self.fd, 1 << 16)
        except OSError:
            return b""

    def take_messages(self, data: bytes, on_event: EventHandler) -> tuple[Any, ...] | None:
        """Feed ``data`` (empty: end of input) and hand the events it completes to
        ``on_event``; the answer once it has come (``("ended",)`` if the worker ended or
        sent something unreadable, which ends it), else ``None``."""
        if not data:
            self.broken = True
            self.awaiting = False
            return ("ended",)
        self._inbox.feed(data)
        try:
            while (message := self._inbox.pop()) is not None:
                if message[0] not in EVENTS:
                    self.awaiting = False
                    return message
                on_event(message, self.send)
        except (UnreadableMessage, LookupError, TypeError, ValueError) as exc:
            self.kill()
            self.awaiting = False
            return ("error", "ToolUnavailable", f"its worker process sent {exc}; it was stopped")
        return None

    def request(self, message: Any, on_event: EventHandler = no_caller) -> tuple[Any, ...]:
        """Send ``message`` and wait here for the answer, handing the events that come
        first to ``on_event``; ``("ended",)`` when the worker ended."""
        self.awaiting = True
        self.send(message)
        return self.answer(on_event)

    def answer(self, on_event: EventHandler = no_caller) -> tuple[Any, ...]:
        """Wait here for the answer to the request sent last (see :meth:`request`)."""
        answer = None if not self.broken else ("ended",)
        while answer is None:
            answer = self.take_messages(self.read_some(), on_event)
        return answer

    async def request_on_loop(
        self, message: Any, on_event: EventHandler = no_caller
    ) -> tuple[Any, ...]:
        """:meth:`request` without a thread: the running loop watches the pipe. Cancelled,
        the answer is still to come (:attr:`awaiting`; see :meth:`WorkerSet.drain`)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[tuple[Any, ...]] = loop.create_future()
        watching = False

        def readable() -> None:
            nonlocal watching
            answer = self.take_messages(self.read_some(), on_event)
            if answer is not None:
                loop.remove_reader(self.fd)
                watching = False
                if not done.done():
                    done.set_result(answer)

        self.awaiting = True
        self.send(message)
        if self.broken:
            self.awaiting = False
            return ("ended",)
        loop.add_reader(self.fd, readable)
        watching = True
        try:
            return await done
        finally:
            if watching:  # cancelled before the answer
                loop.remove_reader(self.fd)

    def interrupt(self) -> None:
        """Ask the request in progress to stop (SIGINT; see :mod:`.worker`)."""
        try:
            self.proc.send_signal(signal.SIGINT)
        except OSError:  # it has just ended
            pass

    def kill(self) -> None:
        """Kill the worker and every process its tools started. The pipes stay open until
        :meth:`close`, so whoever reads them sees the end of input, never a reused fd."""
        self.broken = True
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                self.proc.kill()

    def close(self) -> None:
        """Kill it (if it runs) and free its pipes and process entry: nobody reads them."""
        self.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


class Ticket:
    """One request's claim on a worker. One cancelled while running is asked to stop
    (SIGINT) and its worker is killed if it has not answered within ``grace`` seconds (at
    once for a timeout), so the work really stops."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._worker: WorkerProcess | None = None
        self._finished = False
        self._deadline: threading.Timer | None = None

    @property
    def started(self) -> bool:
        """Whether the request reached a worker (a cancel before that just withdraws it)."""
        return self._worker is not None

    def assign(self, worker: WorkerProcess) -> None:
        with self._lock:
            self._worker = worker

    def finish(self) -> None:
        """The worker answered (or ended): a cancel after this must not touch it, since it
        may already run the next request."""
        with self._lock:
            self._finished = True
            deadline, self._deadline = self._deadline, None
        if deadline is not None:
            deadline.cancel()

    def cancel(self, grace: float = 0.0) -> None:
        with self._lock:
            worker = self._worker
            if worker is None or self._finished:
                return
            if grace > 0:
                self._deadline = threading.Timer(grace, self._kill_unless_finished)
                self._deadline.daemon = True
                self._deadline.start()
        if grace > 0:
            worker.interrupt()
        else:
            worker.kill()

    def _kill_unless_finished(self) -> None:
        with self._lock:
            worker = None if self._finished else self._worker
        if worker is not None:
            worker.kill()


class WorkerSet:
    """The worker processes of one source: at most ``size`` run calls. A call that finds
    none free waits as a future, holding no thread; a worker that frees up (or the slot of
    one that died) is handed to the first waiter that still waits."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._idle: list[WorkerProcess] = []
        self._busy = 0  # slots in use (a worker, or one being started)
        self._waiters: collections.deque[concurrent.futures.Future[WorkerProcess | None]] = (
            collections.deque()
        )
        self.closed = False
        self.restarts = 0

    def prestart(self) -> None:
        """Start every worker now, so the first file or call does not wait for a Python to
        start and import the loader (a second or more on a loaded machine)."""
        workers = [WorkerProcess.start() for _ in range(self.size)]
        with self._lock:
            self._idle.extend(workers)

    def _pop_idle_locked(self, dead: list[WorkerProcess]) -> WorkerProcess | None:
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
            dead.append(worker)
            self.restarts += 1
        return None

    def acquire(self) -> concurrent.futures.Future[WorkerProcess | None]:
        """A future of a free worker, or of ``None``: a slot is free, start a worker."""
        claim: concurrent.futures.Future[WorkerProcess | None] = concurrent.futures.Future()
        dead: list[WorkerProcess] = []
        with self._lock:
            worker = self._pop_idle_locked(dead)
            if worker is not None or self._busy + len(self._idle) < self.size:
                self._busy += 1
                claim.set_result(worker)
            else:
                self._waiters.append(claim)
        _close_all(dead)
        return claim

    def withdraw(self, claim: concurrent.futures.Future[WorkerProcess | None]) -> None:
        """A request given up on while it waited: what it was handed, if anything, goes
        back (under the lock a hand-over happens, so either it waits or it has it)."""
        with self._lock:
            if claim in self._waiters:
                self._waiters.remove(claim)
                claim.cancel()
                return
        if claim.done() and not claim.cancelled():
            self.release(claim.result())

    def take_for_load(self) -> WorkerProcess | None:
        """An idle worker for a file load, or ``None`` (then a new one is started for it):
        a load never waits for a call, so a hot reload is never held up by a long one."""
        dead: list[WorkerProcess] = []
        with self._lock:
            worker = self._pop_idle_locked(dead)
            if worker is not None:
                self._busy += 1
        _close_all(dead)
        return worker

    def adopt(self, worker: WorkerProcess) -> None:
        """Give back a worker started for a load: it takes a free slot, or it stops."""
        with self._lock:
            keep = worker.alive and not self.closed and self._busy + len(self._idle) < self.size
            if keep:
                self._busy += 1
        if keep:
            self.release(worker)
        else:
            worker.close()

    def release(self, worker: WorkerProcess | None) -> None:
        """A request is done with ``worker`` (``None``: starting one failed)."""
        dead: list[WorkerProcess] = []
        with self._lock:
            self._busy -= 1
            usable = worker is not None and worker.alive and not self.closed
            if worker is not None and not usable:
                dead.append(worker)
                self.restarts += 1
            while self._waiters and not self.closed:
                claim = self._waiters.popleft()
                if claim.set_running_or_notify_cancel():
                    self._busy += 1
                    claim.set_result(worker if usable else None)  # None: start a new one
                    usable = False
                    break
            if usable:
                assert worker is not None
                self._idle.append(worker)
        _close_all(dead)

    def close(self) -> None:
        """Stop every idle worker and refuse what waits (busy ones end with their call)."""
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, []
            waiters, self._waiters = list(self._waiters), collections.deque()
        for claim in waiters:
            if claim.set_running_or_notify_cancel():
                claim.set_result(None)
        _close_all(idle)


def _close_all(workers: list[WorkerProcess]) -> None:
    """Kill now; reap and free the pipes on the spawner thread (a ``wait`` must not run on
    an event loop)."""
    for worker in workers:
        worker.kill()
        _SPAWNER.submit(worker.close)
