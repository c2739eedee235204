"""What a call in a worker process sends before its answer, relayed to its caller
(:class:`CallEvents`), and a summary function that stays in the worker, as the registry
sees it (:class:`WorkerSummaries`). See :mod:`.worker` for the messages."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable
from typing import Any

from ..core.tools.context import ToolContext
from .worker_process import Respond, no_caller
from .worker_protocol import CallInfo

__all__ = ["ASKABLE", "CallEvents", "WorkerSummaries"]

#: What a worker may ask the calling client: the :class:`ClientChannel` methods (and a
#: task's start), no others.
ASKABLE = frozenset({"elicit", "sample", "list_roots", "start_task"})


class CallEvents:
    """Relays the events of one call in a worker to its caller: progress to the call's
    progress callback, log lines and questions (elicitation, sampling, roots) to the
    calling client's channel. Runs where the worker's pipe is read (the caller's loop, or
    a loading thread); everything that touches the caller runs on the caller's loop. Once
    :meth:`stop` ran (the call was cancelled), new questions are refused."""

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
        self.stopped = False

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
                self.on_summary(str(event[1]))
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
        if channel is None or method not in ASKABLE or self.stopped or not isinstance(kwargs, dict):
            no_caller(event, respond)
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
        """The call ended or was cancelled: withdraw its questions, refuse new ones."""
        self.stopped = True
        for asking in list(self._asking):
            asking.cancel()


async def _settle(awaitable: Any) -> None:
    await awaitable


class WorkerSummaries:
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
