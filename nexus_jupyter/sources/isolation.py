"""Tool files run in worker processes (``isolation: process`` in nex.yaml).

In-process, a tool file can end its host (``os._exit`` at import), spin at import on every
save, or hold the GIL in a call so the whole server stops answering. With a
:class:`ProcessIsolation`, a folder's files are loaded and their calls run in
:data:`WORKERS` worker processes (:mod:`.worker`); the registry holds proxy tools with the
same specs. A worker that dies, or is killed because a call timed out or was cancelled, or
an import overran its limit, is replaced by a fresh one on the next request; the worker
reloads the files it needs from the texts kept here.

>>> isolation = ProcessIsolation("directory:demo")     # doctest: +SKIP
>>> result = isolation.load(text, path)                # a LoadResult of proxy tools
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ..core.errors import ToolUnavailable
from ..core.registry.pools import WorkerPool
from ..core.registry.running import TIMED_OUT
from ..core.tools.context import ToolContext
from ..core.tools.decorator import ToolMeta
from ..core.tools.offers import PromptDef, ResourceDef
from ..core.tools.tool import Tool
from .loader import LoadResult, content_hash
from .worker import (
    SUMMARY_IN_WORKER,
    VERSIONS_KEPT,
    CallInfo,
    read_message,
    remote_error,
    write_message,
)

__all__ = ["CANCEL_GRACE_S", "WORKERS", "ProcessIsolation"]

#: Worker processes per source (each runs one request at a time).
WORKERS = 2
#: How long a cancelled call may take to stop by itself (an async tool's ``except
#: CancelledError`` cleanup, a sync tool that checks ``ctx.cancelled``) before its worker is
#: killed. A timed-out call gets no grace: its worker is killed at once.
CANCEL_GRACE_S = 1.0
#: Messages a worker sends while a request runs, before its answer (see :mod:`.worker`).
_EVENTS = frozenset({"progress", "log", "ask", "summary"})
#: What a worker may ask the calling client: the :class:`ClientChannel` methods (and a
#: task's start), no others.
_ASKABLE = frozenset({"elicit", "sample", "list_roots", "start_task"})
#: Sends a reply to the worker (from any thread, whenever the client has answered).
Respond = Callable[[tuple[Any, ...]], None]
EventHandler = Callable[[tuple[Any, ...], Respond], None]


def _no_caller(event: tuple[Any, ...], respond: Respond) -> None:
    """Events of a request that has no caller to relay to (a load, a resource read)."""
    if event[0] == "ask":
        respond(
            (
                "reply",
                event[1],
                False,
                "CallerUnavailable",
                "this call has no client that can answer",
            )
        )


#: Starts every worker process, from one thread that lives as long as this process: a
#: worker asks the kernel to kill it when the thread that started it ends (Linux's parent
#: death signal, see :mod:`.worker`), so workers never outlive their server, even one
#: stuck in a C call, and a pool thread that ends must not take its workers with it.
_SPAWNER = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="nexus-worker-spawner")


def _start_worker() -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "nexus_jupyter.sources.worker", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,  # what tools print and log shows with the server's own stderr
    )


class _Worker:
    """One worker process and its pipes; used by one thread at a time."""

    def __init__(self) -> None:
        self.proc = _SPAWNER.submit(_start_worker).result()
        self.broken = False  # its channel failed: never reused
        self._write = threading.Lock()  # requests and (from other threads) replies

    @property
    def alive(self) -> bool:
        return not self.broken and self.proc.poll() is None

    def send(self, message: tuple[Any, ...]) -> None:
        """Write ``message`` to the worker; a worker that has ended is just marked broken."""
        assert self.proc.stdin is not None
        try:
            with self._write:
                write_message(self.proc.stdin, message)
        except (BrokenPipeError, OSError, ValueError):  # ValueError: the pipe was closed
            self.broken = True

    def request(self, message: Any, on_event: EventHandler = _no_caller) -> Any:
        """Send ``message`` and wait for the answer, handing the events that come first to
        ``on_event`` with a function that sends a reply; ``None`` when the worker ended."""
        assert self.proc.stdout is not None
        self.send(message)
        answer = None
        try:
            while not self.broken and (answer := read_message(self.proc.stdout)) is not None:
                if answer[0] not in _EVENTS:
                    break
                on_event(answer, self.send)
                answer = None
        except (OSError, ValueError):  # ValueError: the pipe was closed
            answer = None
        if answer is None:
            self.broken = True
        return answer

    def kill(self) -> None:
        self.broken = True
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class _CallEvents:
    """Relays the events of one call in a worker to its caller: progress to the call's
    progress callback, log lines and questions (elicitation, sampling, roots) to the
    calling client's channel. Runs in the thread that waits for the worker; everything
    that touches the caller runs on the caller's loop."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        ctx: ToolContext | None,
        on_summary: Callable[[str], None] | None = None,
    ) -> None:
        self.loop = loop
        self.ctx = ctx
        self.on_summary = on_summary
        self._asking: set[concurrent.futures.Future[Any]] = set()
        self._reports: set[asyncio.Future[Any]] = set()

    def info(self) -> CallInfo:
        ctx = self.ctx
        if ctx is None:
            return CallInfo()
        r = ctx.request
        return CallInfo(
            request=(r.request_id, r.principal, r.session_id, r.client, r.caller),
            channel=ctx.channel is not None,
            progress=ctx.reports_progress,
        )

    def handle(self, event: tuple[Any, ...], respond: Respond) -> None:
        ctx = self.ctx
        kind = event[0]
        if kind == "summary":
            if self.on_summary is not None:
                self.on_summary(event[1])
            return
        if kind == "progress":
            if ctx is not None:
                self.loop.call_soon_threadsafe(self._report, *event[1:4])
            return
        channel = ctx.channel if ctx is not None else None
        if kind == "log":
            if channel is not None:
                channel.log(*event[1:4])
            return
        key, method, kwargs = event[1], event[2], event[3]
        if channel is None or method not in _ASKABLE:
            _no_caller(event, respond)
            return
        if method == "start_task" and not hasattr(channel, "start_task"):
            respond(("reply", key, True, None))  # not run as a task: nothing to start
            return
        # Not waited for here: the worker may ask more before this is answered (a task
        # waiting for several answers at once), and this thread must read its messages.
        asking = asyncio.run_coroutine_threadsafe(getattr(channel, method)(**kwargs), self.loop)
        self._asking.add(asking)

        def answered(done: concurrent.futures.Future[Any]) -> None:
            self._asking.discard(done)
            if done.cancelled():
                return  # the call was cancelled: its worker is told to stop instead
            error = done.exception()
            if error is None:
                respond(("reply", key, True, done.result()))
            else:  # the tool sees the caller's refusal as its own error
                respond(("reply", key, False, type(error).__name__, str(error)))

        asking.add_done_callback(answered)

    def _report(self, current: float, total: float | None, message: str | None) -> None:
        assert self.ctx is not None
        report = asyncio.ensure_future(_settle(self.ctx.progress(current, total, message)))
        self._reports.add(report)  # kept until done: the loop holds tasks only weakly
        report.add_done_callback(self._reports.discard)

    def stop(self) -> None:
        """The call was cancelled: stop waiting for the client's answers."""
        for asking in list(self._asking):
            asking.cancel()


class _Ticket:
    """One request's claim on a worker. A request cancelled while it still waits for a free
    worker never runs. One cancelled while running is asked to stop (SIGINT, see
    :mod:`.worker`) and its worker is killed if it has not answered within ``grace``
    seconds (at once for a timeout); a killed worker's pipe closes, so the waiting thread
    returns at once. Either way the work really stops."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self._cancelled = False
        self._finished = False
        self._deadline: threading.Timer | None = None

    def assign(self, worker: _Worker) -> bool:
        """Record ``worker`` as this request's; ``False`` if the request was cancelled."""
        with self._lock:
            if self._cancelled:
                return False
            self._worker = worker
            return True

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
            self._cancelled = True
            worker = self._worker
            if worker is None or self._finished:
                return
            if grace > 0:
                self._deadline = threading.Timer(grace, self._kill_unless_finished)
                self._deadline.daemon = True
                self._deadline.start()
        if grace <= 0:
            worker.kill()
            return
        try:
            worker.proc.send_signal(signal.SIGINT)
        except OSError:  # it has just ended
            pass

    def _kill_unless_finished(self) -> None:
        with self._lock:
            worker = None if self._finished else self._worker
        if worker is not None:
            worker.kill()


async def _settle(awaitable: Any) -> None:
    await awaitable


class _WorkerSummaries:
    """The summary function of a tool in a worker, as the registry sees it: the lines the
    worker sent for recent calls, looked up by their arguments. A call refused before it
    ran has none, and gets the default line (a summary function that raises does too)."""

    _KEPT = 64

    def __init__(self) -> None:
        self._lines: dict[str, str] = {}

    @staticmethod
    def _key(arguments: Any) -> str:
        return json.dumps(arguments, sort_keys=True, default=repr)

    def note(self, arguments: Any, line: str) -> None:
        lines = self._lines
        lines[self._key(arguments)] = line
        while len(lines) > self._KEPT:
            del lines[next(iter(lines))]

    def __call__(self, **arguments: Any) -> str:
        return self._lines[self._key(arguments)]


class ProcessIsolation:
    """The worker processes of one source: loads files into them, runs calls in them."""

    def __init__(self, source: str, *, workers: int = WORKERS) -> None:
        self.source = source
        self._idle: list[_Worker] = []
        self._slots = threading.BoundedSemaphore(workers)
        self._lock = threading.Lock()
        self._texts: dict[tuple[str, str], str] = {}  # (path, hash) -> text, for restarts
        self._pool = WorkerPool(f"{source} (process workers)", max_running=workers * 4)
        self.restarts = 0
        self._closed = False
        self._workers = workers
        self._loads = itertools.count(1)
        # Started now, so the first file or call does not wait for a Python to start and
        # import the loader (a second or more on a loaded machine).
        self._idle = [_Worker() for _ in range(workers)]

    # -- workers --------------------------------------------------------------------------

    def _take(self) -> _Worker:
        self._slots.acquire()
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                worker.kill()
        try:
            return _Worker()
        except BaseException:
            self._slots.release()
            raise

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if worker.alive and not self._closed and len(self._idle) < self._workers:
                self._idle.append(worker)
            else:
                self.restarts += 1
                worker.kill()
        self._slots.release()

    def close(self) -> None:
        """Stop every idle worker (busy ones end with their call)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()

    # -- loading --------------------------------------------------------------------------

    def load(
        self, text: str, path: str | Path, *, source: str = "", timeout: float | None = None
    ) -> LoadResult:
        """Load ``text`` (file ``path``) in a worker; a :class:`LoadResult` of proxy tools.
        An import that overruns ``timeout`` or ends the worker is an error, never a hang."""
        path = Path(path)
        digest = content_hash(text)
        # Each load is a version of its own: the same text with an edited helper beside it
        # is new code, and the other worker must not run the old one under the same key.
        version = f"{digest}.{next(self._loads)}"
        worker = self._take()
        timer = threading.Timer(timeout, worker.kill) if timeout else None
        try:
            if timer is not None:
                timer.daemon = True
                timer.start()
            answer = worker.request(("load", str(path), text, source or self.source, version))
        finally:
            if timer is not None:
                timer.cancel()
            self._give_back(worker)
        if answer is None:
            code = worker.proc.returncode
            error = (
                f"importing it did not finish within {timeout:g} s; its worker was stopped"
                if code is not None and code < 0 and timeout
                else f"importing it ended its worker process (exit code {code})"
            )
            return LoadResult(path, text, digest, error=error)
        if answer[0] == "error":
            return LoadResult(path, text, digest, error=f"{answer[1]}: {answer[2]}")
        _, specs, error, line, names, offers, helpers = answer
        key = (str(path), version)
        for older in [k for k in self._texts if k[0] == key[0]][: -(VERSIONS_KEPT - 1)]:
            del self._texts[older]  # the last few versions stay callable (see .worker)
        self._texts[key] = text
        tools = tuple(self._proxy(str(path), version, described, text) for described in specs)
        proxies = tuple(self._offer(str(path), version, kind, fields) for kind, fields in offers)
        return LoadResult(
            path,
            text,
            digest,
            tools=tools,
            error=error,
            line=line,
            names=names,
            offers=proxies,
            helpers=tuple(Path(h) for h in helpers),  # an edit to one reloads this file
        )

    def _proxy(
        self,
        path: str,
        version: str,
        described: tuple[dict[str, Any], dict[str, Any] | None],
        text: str,
    ) -> Tool:
        """The registry's stand-in for a tool in the worker: its spec, its ``@tool``
        options (a summary function stays in the worker, which sends each call's line),
        and the file's text as its source code (``%tool export``'s header included)."""
        fields, options = described
        name = fields.pop("name")
        description = fields.pop("description")
        schema = fields.pop("input_schema")
        fields["isolation"] = "process"
        summaries = (
            _WorkerSummaries() if options and options["summary"] == SUMMARY_IN_WORKER else None
        )
        if options is not None and summaries is not None:
            options = {**options, "summary": summaries}

        async def handler(arguments: dict[str, Any], ctx: ToolContext | None = None) -> Any:
            note = partial(summaries.note, arguments) if summaries is not None else None
            return await self.call(path, version, name, arguments, ctx, on_summary=note)

        return Tool.from_schema(
            name,
            description,
            schema,
            handler,
            meta=ToolMeta(**options) if options is not None else None,
            source_code=text,
            **fields,
        )

    def _offer(
        self, path: str, version: str, kind: str, fields: dict[str, Any]
    ) -> ResourceDef | PromptDef:
        """A resource or prompt of a file in a worker: reads and renders are forwarded."""

        def in_worker() -> None:  # a new function per load: a reload is a change
            raise ToolUnavailable("this resource or prompt runs in a worker process")

        if kind == "ResourceDef":

            async def read(uri: str) -> list[dict[str, Any]]:
                return await self._run(("read", path, version, uri), f"resource {uri!r}")

            return ResourceDef(fn=in_worker, forward=read, **fields)

        async def render(
            arguments: dict[str, str], ctx: ToolContext | None = None
        ) -> list[dict[str, Any]]:
            events = _CallEvents(asyncio.get_running_loop(), ctx)
            message = ("render", path, version, fields["name"], arguments, events.info())
            return await self._run(message, f"prompt {fields['name']!r}", events)

        return PromptDef(fn=in_worker, forward=render, **fields)

    # -- calling --------------------------------------------------------------------------

    async def call(
        self,
        path: str,
        version: str,
        name: str,
        arguments: dict[str, Any],
        ctx: ToolContext | None = None,
        *,
        on_summary: Callable[[str], None] | None = None,
    ) -> Any:
        """Run tool ``name`` of file ``path`` (its load ``version``) in a worker; its progress,
        log lines and questions to the client reach ``ctx``. Cancelling this stops the work
        (see :class:`_Ticket`): a timeout kills the worker at once."""
        events = _CallEvents(asyncio.get_running_loop(), ctx, on_summary)
        message = ("call", path, version, name, arguments, events.info())
        return await self._run(message, repr(name), events)

    async def _run(
        self, message: tuple[Any, ...], what: str, events: _CallEvents | None = None
    ) -> Any:
        ticket = _Ticket()
        on_event = events.handle if events is not None else _no_caller
        future = self._pool.run(self._request, message, on_event, ticket)
        try:
            answer = await asyncio.shield(future)
        except asyncio.CancelledError as exc:
            if events is not None:
                events.stop()
            ticket.cancel(0.0 if TIMED_OUT in exc.args else CANCEL_GRACE_S)
            raise
        if events is not None:
            events.stop()  # a question the tool stopped waiting for is withdrawn
        kind = answer[0]
        if kind == "ok":
            return answer[1]
        if kind == "error":
            raise remote_error(answer[1], answer[2])
        raise ToolUnavailable(
            f"the worker process running {what} ended during the call (a crash, os._exit, "
            "or it was stopped); a new one takes the next call"
        )

    def _request(self, message: tuple[Any, ...], on_event: EventHandler, ticket: _Ticket) -> Any:
        path, version = message[1], message[2]
        worker = self._take()
        if not ticket.assign(worker):  # given up on while it waited for a worker
            self._give_back(worker)
            return ("ended",)
        try:
            answer = worker.request(message, on_event)
            if answer == ("missing",):  # a fresh worker: give it the file first
                text = self._texts.get((path, version))
                if text is None:
                    return ("error", "ToolUnavailable", "this version of the file is gone")
                worker.request(("load", path, text, self.source, version))
                answer = worker.request(message, on_event)
            return answer if answer is not None else ("ended",)
        finally:
            ticket.finish()
            self._give_back(worker)
