"""Tool files run in worker processes (``isolation: process`` in nex.yaml).

In-process, a tool file can end its host (``os._exit`` at import), spin at import on every
save, or hold the GIL in a call so the whole server stops answering. With a
:class:`ProcessIsolation`, a folder's files are loaded and their calls run in
:data:`WORKERS` worker processes (:mod:`.worker`, :mod:`.worker_process`); the registry
holds proxy tools with the same specs, which check their arguments against the JSON Schema
and, where it does not say every check (a pydantic model's validator), ask a worker for the
tool's own verdict before a call is approved. A worker that dies, or is killed because a call
timed out or was cancelled, or an import overran its limit, is replaced by a fresh one; a
worker loads the files it needs from the texts kept here.

What a worker sends back is decoded as plain data (:mod:`.worker_protocol`): a tool's value
crosses as its structured result, so a value whose unpickling would run code never reaches
the server.

>>> isolation = ProcessIsolation("directory:demo")     # doctest: +SKIP
>>> result = isolation.load(text, path)                # a LoadResult of proxy tools
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from ..core.errors import FieldError, ToolUnavailable, ToolValidationError
from ..core.registry.running import TIMED_OUT
from ..core.tools.context import ToolContext
from ..core.tools.decorator import ToolMeta
from ..core.tools.offers import PromptDef, ResourceDef
from ..core.tools.summary import schema_defaults
from ..core.tools.tool import Tool
from .loader import LoadResult, content_hash
from .worker_calls import CallEvents, WorkerSummaries
from .worker_process import EventHandler, Ticket, WorkerProcess, WorkerSet, no_caller
from .worker_protocol import SUMMARY_IN_WORKER, VERSIONS_KEPT, remote_error

__all__ = ["CANCEL_GRACE_S", "RELOAD_TIMEOUT_S", "WORKERS", "ProcessIsolation"]

#: Worker processes per source (each runs one request at a time).
WORKERS = 2
#: How long a cancelled call may take to stop by itself (an async tool's ``except
#: CancelledError`` cleanup, a sync tool that checks ``ctx.cancelled``) before its worker is
#: killed. A timed-out call gets no grace: its worker is killed at once.
CANCEL_GRACE_S = 1.0
#: How long a fresh worker may take to load a file again before a call (when the source's
#: own import limit is not known).
RELOAD_TIMEOUT_S = 30.0


class ProcessIsolation:
    """The worker processes of one source: loads files into them, runs calls in them."""

    def __init__(self, source: str, *, workers: int = WORKERS) -> None:
        self.source = source
        self._texts: dict[tuple[str, str], str] = {}  # (path, version) -> text, for restarts
        self._texts_lock = threading.Lock()
        self._loads = itertools.count(1)
        self._load_timeout: float | None = None
        self.workers = WorkerSet(workers)
        self.workers.prestart()

    @property
    def restarts(self) -> int:
        return self.workers.restarts

    def close(self) -> None:
        """Stop every idle worker (busy ones end with their call)."""
        self.workers.close()

    def forget(self, path: str | Path) -> None:
        """``path`` left the folder: its texts are not kept for restarts any more."""
        with self._texts_lock:
            for key in [k for k in self._texts if k[0] == str(path)]:
                del self._texts[key]

    # -- loading --------------------------------------------------------------------------

    def load(
        self, text: str, path: str | Path, *, source: str = "", timeout: float | None = None
    ) -> LoadResult:
        """Load ``text`` (file ``path``) in a worker; a :class:`LoadResult` of proxy tools.
        It never waits for a call: with every worker busy, a new one is started for it. An
        import that overruns ``timeout`` or ends its worker is an error, never a hang."""
        path = Path(path)
        digest = content_hash(text)
        self._load_timeout = timeout
        # Each load is a version of its own: the same text with an edited helper beside it
        # is new code, and the other worker must not run the old one under the same key.
        version = f"{digest}.{next(self._loads)}"
        worker = self.workers.take_for_load()
        counted = worker is not None
        timer: threading.Timer | None = None
        try:
            if worker is None:
                worker = WorkerProcess.start()
            if timeout:
                timer = threading.Timer(timeout, worker.kill)
                timer.daemon = True
                timer.start()
            answer = worker.request(("load", str(path), text, source or self.source, version))
        finally:
            if timer is not None:
                timer.cancel()
            if worker is None:
                self.workers.release(None)
            elif counted:
                self.workers.release(worker)
            else:
                self.workers.adopt(worker)
        if answer[0] == "ended":
            assert worker is not None
            code = worker.proc.poll()
            error = (
                f"importing it did not finish within {timeout:g} s; its worker was stopped"
                if timeout and (code is None or code < 0)
                else f"importing it ended its worker process (exit code {code})"
            )
            return LoadResult(path, text, digest, error=error)
        if answer[0] == "error":
            return LoadResult(path, text, digest, error=f"{answer[1]}: {answer[2]}")
        try:
            _, specs, error, line, names, offers, helpers = answer
            tools = tuple(self._proxy(str(path), version, d, text) for d in specs)
            proxies = tuple(self._offer(str(path), version, kind, f) for kind, f in offers)
        except (TypeError, ValueError, KeyError) as exc:  # not what a worker answers a load
            return LoadResult(path, text, digest, error=f"its worker answered oddly: {exc}")
        self._keep_text(str(path), version, text)
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

    def _keep_text(self, path: str, version: str, text: str) -> None:
        """Keep the last few versions' texts: a restarted worker loads them again."""
        with self._texts_lock:
            for older in [k for k in self._texts if k[0] == path][: -(VERSIONS_KEPT - 1)]:
                del self._texts[older]
            self._texts[(path, version)] = text

    def _proxy(
        self,
        path: str,
        version: str,
        described: tuple[Any, ...],
        text: str,
    ) -> Tool:
        """The registry's stand-in for a tool in the worker: its spec, its ``@tool``
        options (a summary function stays in the worker, which sends each call's line),
        and the file's text as its source code (``%tool export``'s header included)."""
        fields, options, says_all, from_python = described
        fields = dict(fields)
        name = fields.pop("name")
        description = fields.pop("description")
        schema = fields.pop("input_schema")
        fields["isolation"] = "process"
        # what its schema does not say (a model's validator, an email) the worker checks
        elsewhere = None if says_all else partial(self.validate, path, version, name)
        summaries = None
        if options is not None and options.get("summary") == SUMMARY_IN_WORKER:
            summaries = WorkerSummaries()
            options = {**options, "summary": summaries}
        defaults = schema_defaults(schema)

        async def handler(arguments: dict[str, Any], ctx: ToolContext | None = None) -> Any:
            note = None
            if summaries is not None:  # kept under the arguments the registry describes
                note = partial(summaries.note, {**defaults, **arguments})
            return await self.call(path, version, name, arguments, ctx, on_summary=note)

        return Tool.from_schema(
            name,
            description,
            schema,
            handler,
            meta=ToolMeta(**options) if options is not None else None,
            source_code=text,
            check_elsewhere=elsewhere,
            from_python=from_python,  # the worker's own check of its keys, made here too
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
            events = CallEvents(asyncio.get_running_loop(), ctx)
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
        (see :class:`~.worker_process.Ticket`): a timeout kills the worker at once."""
        events = CallEvents(asyncio.get_running_loop(), ctx, on_summary)
        message = ("call", path, version, name, arguments, events.info())
        return await self._run(message, repr(name), events)

    async def validate(self, path: str, version: str, name: str, arguments: dict[str, Any]) -> None:
        """Have a worker check ``arguments`` of tool ``name`` as the tool itself does (its
        pydantic model), without running it: the registry asks before a call is approved,
        so a refusal comes first and names every wrong place (with the JSON Schema's)."""
        message = ("validate", path, version, name, arguments)
        try:
            found = await self._run(message, repr(name))
        except ToolUnavailable:
            raise
        except Exception as exc:  # the worker could not judge: say so, as a refusal to run
            raise ToolUnavailable(
                f"the arguments of {name!r} could not be checked in its worker process: {exc}"
            ) from None
        if found:
            errors = [FieldError(tuple(loc), str(said), value) for loc, said, value in found]
            raise ToolValidationError(name, errors)

    async def _run(
        self, message: tuple[Any, ...], what: str, events: CallEvents | None = None
    ) -> Any:
        ticket = Ticket()
        on_event = events.handle if events is not None else no_caller
        try:
            answer = await self._answer(message, on_event, ticket)
        finally:
            if events is not None:
                events.stop()  # questions the tool no longer waits for are withdrawn
        kind = answer[0]
        if kind == "ok":
            return answer[1]
        if kind == "error":
            told = answer[3] if len(answer) > 3 else None  # the tool's frames, over there
            raise remote_error(str(answer[1]), str(answer[2]), told)
        raise ToolUnavailable(
            f"the worker process running {what} ended during the call (a crash, os._exit, "
            "or it was stopped); a new one takes the next call"
        )

    async def _checkout(self) -> WorkerProcess:
        """A worker for one request: a free one, a new one in a free slot, or the next one
        to free up (waiting holds no thread; given up on, the claim is withdrawn)."""
        claim = self.workers.acquire()
        if claim.done():  # the common case, a free worker: no hop through the loop's wakeup
            worker = claim.result()
        else:
            try:
                worker = await asyncio.wrap_future(claim)
            except asyncio.CancelledError:
                self.workers.withdraw(claim)
                raise
        if worker is not None:
            return worker
        if self.workers.closed:
            self.workers.release(None)
            raise ToolUnavailable(f"the tools of {self.source} are being stopped")
        starting = asyncio.ensure_future(WorkerProcess.start_on_loop())
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:  # the process still comes: it joins the set
            starting.add_done_callback(self._adopt_started)
            raise
        except BaseException:
            self.workers.release(None)
            raise

    def _adopt_started(self, starting: asyncio.Future[WorkerProcess]) -> None:
        if starting.cancelled() or starting.exception() is not None:
            self.workers.release(None)
        else:
            self.workers.release(starting.result())

    async def _answer(
        self, message: tuple[Any, ...], on_event: EventHandler, ticket: Ticket
    ) -> tuple[Any, ...]:
        """The worker's answer to ``message``, its pipe read by the running loop. A worker
        that has not loaded that version of the file (a fresh one) loads it first."""
        worker = await self._checkout()
        ticket.assign(worker)
        try:
            answer = await worker.request_on_loop(message, on_event)
            if answer == ("missing",):
                answer = await self._reload(worker, message, on_event)
        except asyncio.CancelledError as exc:
            ticket.cancel(0.0 if TIMED_OUT in exc.args else CANCEL_GRACE_S)
            self._drain(worker, ticket)
            raise
        except BaseException:
            ticket.cancel(0.0)
            self._drain(worker, ticket)
            raise
        ticket.finish()
        self.workers.release(worker)
        return answer

    async def _reload(
        self, worker: WorkerProcess, message: tuple[Any, ...], on_event: EventHandler
    ) -> tuple[Any, ...]:
        """Load the file of ``message`` into a fresh ``worker``, then send ``message`` again;
        a load that fails or overruns is the call's error, saying so."""
        path, version = message[1], message[2]
        with self._texts_lock:
            text = self._texts.get((path, version))
        if text is None:
            return ("error", "ToolUnavailable", "this version of the file is gone; save it again")
        limit = self._load_timeout or RELOAD_TIMEOUT_S
        load = worker.request_on_loop(("load", path, text, self.source, version))
        try:
            loaded = await asyncio.wait_for(load, limit)
        except TimeoutError:
            worker.kill()
            return (
                "error",
                "ToolUnavailable",
                f"loading {Path(path).name} again in a new worker process did not finish "
                f"within {limit:g} s; it was stopped",
            )
        if loaded[0] != "loaded" or loaded[2]:
            why = loaded[2] if loaded[0] == "loaded" else f"{loaded[1:]!r}"
            return (
                "error",
                "ToolUnavailable",
                f"loading {Path(path).name} again in a new worker process failed: {why}; fix "
                "the file or its helpers and save it",
            )
        return await worker.request_on_loop(message, on_event)

    def _drain(self, worker: WorkerProcess, ticket: Ticket) -> None:
        """After a cancel: the worker's answer is still to come (it stops the tool, or is
        killed), so the loop takes it before the worker serves anyone else."""
        if not worker.awaiting:
            ticket.finish()
            self.workers.release(worker)
            return
        loop = asyncio.get_running_loop()

        def readable() -> None:
            answer = worker.take_messages(worker.read_some(), no_caller)
            if answer is not None:
                loop.remove_reader(worker.fd)
                ticket.finish()
                self.workers.release(worker)

        loop.add_reader(worker.fd, readable)
