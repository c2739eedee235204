"""How an admitted call runs: inline, in a worker thread or as a task, under a deadline and
the cancel signal. Failures of the tool become a :class:`ToolResult` with ``error`` set
(masked with the registry's credentials), never an exception; except the refusal of the
arguments by whatever runs the tool (a :class:`ToolValidationError` raised ``where_it_runs``:
a kernel's validator), which is raised on, so the call is refused as this registry's own
check would refuse it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ToolValidationError
from ..tools.context import ToolContext
from ..tools.result import ToolResult
from ..tools.tool_traceback import format_tool_traceback
from .pools import WorkerPools

if TYPE_CHECKING:
    from ..policy.protocols import Credentials
    from ..tools.tool import Tool

__all__ = ["TIMED_OUT", "HomeThread", "ToolRunner"]

log = logging.getLogger(__name__)

#: The message of the cancellation a timed-out call gets (``task.cancel(TIMED_OUT)``), so
#: code below can tell a timeout from a cancel: a tool in a worker process is then stopped
#: at once, where a cancel first gives it a moment to stop by itself.
TIMED_OUT = "nexus: the call timed out"
_perf = time.perf_counter


class HasCredentials(Protocol):
    """The registry, as the runner sees it: its credentials mask the errors it makes."""

    credentials: Credentials | None


class HomeThread(Protocol):
    """Where the sync tools of one source must run instead of a worker (the kernel's main
    thread for notebook tools): ``run(fn, *args)`` returns an asyncio future of its result."""

    def run(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]: ...

    def is_current(self) -> bool:
        """Whether the calling thread is this home (a call made here runs inline)."""
        ...


class ToolRunner:
    """Runs tools for ``host`` (the registry)."""

    __slots__ = ("homes", "host", "pools")

    def __init__(self, host: HasCredentials) -> None:
        self.host = host
        #: One bounded pool of threads per source: stuck calls of one cannot starve the rest.
        self.pools = WorkerPools()
        #: Source name -> the thread its sync tools run on (see :class:`HomeThread`).
        self.homes: dict[str, HomeThread] = {}

    def _home(self, tool: Tool) -> HomeThread | None:
        home = self.homes.get(tool.spec.source) if self.homes else None
        if home is None or tool.is_async or (tool.meta is not None and tool.meta.threadsafe):
            return None
        return home

    def away_from_home(self, tool: Tool) -> bool:
        """Whether a sync ``tool`` must not run on the calling thread: its source has a home
        thread, this is not it, and the tool did not declare itself thread-safe."""
        home = self._home(tool)
        return home is not None and not home.is_current()

    def at_home(self, tool: Tool) -> bool:
        """Whether the calling thread is the home ``tool`` must run on (a blocking call made
        here runs the tool inline: waiting for the home to be free would wait forever)."""
        home = self._home(tool)
        return home is not None and home.is_current()

    def inline(self, tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None) -> ToolResult:
        """Run a sync tool right here, timing it (its timings pick the inline path later)."""
        start = _perf()
        try:
            value = tool.invoke(kwargs, ctx)
        except (Exception, SystemExit) as exc:
            if _refused_where_it_runs(exc):
                raise
            return self.failure(tool, exc)
        finally:
            tool.record_duration(_perf() - start)
        return value if isinstance(value, ToolResult) else ToolResult(tool.spec.name, value)

    async def threaded(
        self, tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None, limit: float | None
    ) -> ToolResult:
        """Run a sync tool in a worker thread of its source's pool, so the event loop stays
        free (see :mod:`.pools`), or on its source's home thread when it has one."""
        home = self._home(tool)
        if home is not None:
            future = home.run(self.inline, tool, kwargs, ctx)  # may run inline when at home
        else:
            pool = self.pools.for_source(tool.spec.source or "builtin")
            future = pool.run(self.inline, tool, kwargs, ctx)
        try:
            if limit is None and ctx is None:
                return await future
            return await self._supervise(asyncio.ensure_future(future), tool, ctx, limit)
        except asyncio.CancelledError:
            if ctx is not None:
                ctx.cancellation.cancel()  # ask the thread to stop; it cannot be killed
            raise

    async def awaited(
        self, tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None, limit: float | None
    ) -> ToolResult:
        """Run an async tool: awaited directly, or as a supervised task when it has a
        deadline or a context to cancel."""
        if limit is None and ctx is None:
            return await self._invoke_async(tool, kwargs, ctx)
        task = asyncio.ensure_future(self._invoke_async(tool, kwargs, ctx))
        return await self._supervise(task, tool, ctx, limit)

    async def _invoke_async(
        self, tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None
    ) -> ToolResult:
        try:
            value = await tool.invoke(kwargs, ctx)
        except (Exception, SystemExit) as exc:
            if _refused_where_it_runs(exc):
                raise
            return self.failure(tool, exc)
        return value if isinstance(value, ToolResult) else ToolResult(tool.spec.name, value)

    async def _supervise(
        self,
        task: asyncio.Future[ToolResult],
        tool: Tool,
        ctx: ToolContext | None,
        limit: float | None,
    ) -> ToolResult:
        """Wait for ``task`` with a deadline and the cancel signal."""
        loop = asyncio.get_running_loop()
        cancelled: asyncio.Future[None] = loop.create_future()

        def _mark_cancelled() -> None:
            if not cancelled.done():
                cancelled.set_result(None)

        if ctx is not None:
            ctx.cancellation.on_cancel(lambda: loop.call_soon_threadsafe(_mark_cancelled))
        try:
            waiting: set[asyncio.Future[Any]] = {task, cancelled}
            done, _ = await asyncio.wait(
                waiting, timeout=limit, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            task.cancel()
            if ctx is not None:
                ctx.cancellation.cancel()
            raise
        finally:
            cancelled.cancel()
        if cancelled in done or (ctx is not None and ctx.cancellation.cancelled):
            # A tool that saw the signal and returned may finish first: still cancelled.
            task.cancel()
            return cancelled_result(tool)
        if task in done:
            return task.result()
        task.cancel(TIMED_OUT)  # the message tells a worker process to stop at once
        if ctx is not None:
            ctx.cancellation.cancel()
        return ToolResult.failure(
            tool.spec.name, f"the call timed out after {limit:g} s{_stopped(tool)}", "TimeoutError"
        )

    def failure(self, tool: Tool, exc: BaseException) -> ToolResult:
        message = str(exc) or type(exc).__name__
        if isinstance(exc, SystemExit):
            message = f"the tool called exit({exc.code!r})"
        log.debug("tool %s failed", tool.spec.name, exc_info=exc)
        credentials = self.host.credentials
        if credentials is not None:
            message = credentials.mask(message)
        result = ToolResult.failure(tool.spec.name, message, type(exc).__name__)
        result.traceback = format_tool_traceback(exc)  # masked with the result (redacted)
        result.exception = exc
        return result


def _refused_where_it_runs(exc: BaseException) -> bool:
    """Whether ``exc`` is the refusal of the call's arguments by whatever runs the tool (see
    :class:`ToolValidationError`), not a failure of the tool."""
    return isinstance(exc, ToolValidationError) and exc.where_it_runs


def cancelled_result(tool: Tool, *, started: bool = True) -> ToolResult:
    """The result of a call cancelled before it finished (or, ``started=False``, before it
    started)."""
    note = ""
    if started and tool.spec.isolation == "process":
        note = "; its worker process stops it (and is killed if it goes on)"
    return ToolResult.failure(tool.spec.name, f"the call was cancelled{note}", "CancelledError")


def _stopped(tool: Tool) -> str:
    """What a timeout did, for the result and the audit log: a call in a worker process is
    really stopped (its worker is killed); a thread can only be asked to stop."""
    if tool.spec.isolation == "process":
        return "; its worker process was killed"
    return ""
