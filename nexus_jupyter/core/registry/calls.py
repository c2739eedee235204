"""How a call runs: look up, police, check credentials, validate, execute, audit.

Problems found before the tool runs raise (nothing ran); failures of the tool itself come
back as a :class:`ToolResult` with ``error`` set. Sync tools run in a worker thread on the
async path. The one exception is a local caller's own loop (a script, a cell): there a tool
that has proven faster than a thread hop (see :data:`~nexus_jupyter.core.tools.tool.INLINE_BUDGET_S`)
runs inline, and a slow call resets that. Server faces (MCP, REST) and the registry's
background loop always use a worker thread, because their loop serves other clients too.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import (
    ApprovalRequired,
    PermissionDenied,
    ToolNotFound,
    ToolUnavailable,
    ToolValidationError,
)
from ..policy.policy import how_to_allow
from ..tools.context import CancellationToken, ProgressCallback, RequestInfo, ToolContext
from ..tools.result import ToolResult
from .pools import WorkerPool, WorkerPools

if TYPE_CHECKING:
    from ..tools.tool import Tool
    from .loop import BackgroundLoop
    from .state import Snapshot, ToolEntry

__all__ = ["CallRunner"]

log = logging.getLogger(__name__)
_LOCAL = RequestInfo(request_id="local", client="python")
#: MCP calls run a sync tool inline only after a longer fast streak
#: (:attr:`Tool.runs_inline_on_server`): the server's loop serves other sessions too.
_SERVER_CLIENTS = frozenset({"mcp"})
#: REST calls never do: that loop is the Jupyter server's, and a stall there freezes every
#: open notebook; the sidebar's calls are not throughput-bound.
_NEVER_INLINE_CLIENTS = frozenset({"rest"})
_perf = time.perf_counter


class CallRunner:
    """The call half of :class:`~nexus_jupyter.core.registry.registry.Registry` (a mixin)."""

    _snapshot: Snapshot
    policy: Any
    credentials: Any
    audit: Any
    approver: Any

    @property
    def loop(self) -> BackgroundLoop:  # pragma: no cover - overridden by Registry
        raise NotImplementedError

    def suggest(self, text: str, limit: int = 3) -> list[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    def _with_live_status(self, entry: ToolEntry) -> ToolEntry:  # pragma: no cover
        raise NotImplementedError

    # -- public entry points --------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        request: RequestInfo | None = None,
        principal: str | None = None,
        timeout: float | None = None,
        approved: bool = False,
        progress: ProgressCallback | None = None,
        cancellation: CancellationToken | None = None,
    ) -> ToolResult:
        """Call tool ``name`` with ``arguments`` (a dict) and return its :class:`ToolResult`.

        Raises :class:`ToolNotFound`, :class:`ToolValidationError`, :class:`PermissionDenied`,
        :class:`ApprovalRequired`, :class:`MissingCredential` or :class:`ToolUnavailable`
        before the tool runs; a tool that fails, times out or is cancelled gives a result
        with ``error`` set. ``approved=True`` means a person approved this call in a UI.
        """
        start = _perf()
        if request is None:
            request = RequestInfo(principal=principal) if principal else _LOCAL
        tool, kwargs = await self._prepare(name, arguments, request, approved)
        ctx = None
        if tool.wants_context or cancellation is not None or progress is not None:
            ctx = ToolContext(
                tool_name=tool.spec.name,
                credentials=self._credentials_view(),
                request=request,
                cancellation=cancellation,
                progress=progress,
            )
        limit = timeout if timeout is not None else tool.spec.timeout
        if tool.is_async:
            result = await self._run_async(tool, kwargs, ctx, limit)
        elif (
            limit is None
            and cancellation is None
            and request.client not in _NEVER_INLINE_CLIENTS
            and (
                tool.runs_inline_on_server
                if request.client in _SERVER_CLIENTS
                else tool.runs_inline
            )
            and not self._on_background_loop()
        ):
            result = self._run_inline(tool, kwargs, ctx)
        else:
            result = await self._run_threaded(tool, kwargs, ctx, limit)
        result.duration = _perf() - start
        if self.credentials is not None:
            result.masker = self.credentials.mask  # see ToolResult.redacted
        if request is not _LOCAL:
            result.request_id = request.request_id
        if self.audit is not None:
            self._audit(tool, request, "allow", result.duration, result.error)
        return result

    def call_sync(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> ToolResult:
        """:meth:`call` for code without ``await``: scripts, the CLI, a notebook cell or a
        widget callback (even while an event loop runs in this thread).

        A sync tool with no timeout runs right here; anything else runs on the registry's
        background loop while this thread waits, so no running loop is ever re-entered.
        """
        entry = self._snapshot.entries.get(name)
        if (
            entry is not None
            and not entry.tool.is_async
            and options.get("timeout") is None
            and entry.tool.spec.timeout is None
            and options.get("cancellation") is None
            and (self.policy is None or self.approver is None)
        ):
            return self._call_here(name, arguments, **options)
        return self.loop.run(self.call(name, arguments, **options))

    # -- steps ----------------------------------------------------------------------------

    def _lookup(self, name: str) -> Tool:
        entry = self._snapshot.entries.get(name)
        if entry is None:
            raise ToolNotFound(name, self.suggest(name))
        if entry.status != "ok" or (
            self.credentials is not None and entry.spec.requires_credentials
        ):
            live = self._with_live_status(entry)
            if live.status != "ok":
                self._deny_audit(entry.tool, None, "unavailable", live.reason)
                raise ToolUnavailable(f"Tool {name!r} cannot run now: {live.reason}.")
        return entry.tool

    def _check_policy(
        self, tool: Tool, arguments: Any, request: RequestInfo, approved: bool
    ) -> str:
        """``"allow"`` or ``"ask"``; raises :class:`PermissionDenied` for ``deny``."""
        if self.policy is None:
            return "allow"
        decision = self.policy.check(tool.spec, arguments or {}, request)
        if decision.action == "deny":
            self._deny_audit(tool, request, "deny", decision.reason)
            raise PermissionDenied(decision.reason)
        if decision.action == "ask" and not approved:
            return "ask"
        return "allow"

    async def _ask(self, tool: Tool, arguments: Any, request: RequestInfo) -> None:
        reason = f"Tool {tool.spec.name!r} needs approval ({tool.spec.permission})"
        if self.approver is None or request.client in ("rest", "mcp", "cli"):
            self._deny_audit(tool, request, "ask-denied", "no one to approve")
            raise ApprovalRequired(
                f"{reason} and no one can approve it here. "
                + how_to_allow(
                    request,
                    f"Pre-approve it in nex.yaml (approvals: {{{tool.spec.name}: pre_approved}}) "
                    "or approve it in the notebook.",
                ),
                tool=tool.spec.name,
                arguments=arguments,
            )
        answer = self.approver(tool, arguments, request)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer == "always" and hasattr(self.policy, "remember"):
            self.policy.remember(tool.spec, request)
        elif not answer:
            self._deny_audit(tool, request, "ask-denied", "denied by the user")
            raise PermissionDenied(f"{reason}; the call was denied.")

    def _check_credentials(self, tool: Tool) -> None:
        if not tool.spec.requires_credentials or self.credentials is None:
            return
        self.credentials.require(tool.spec)

    async def _prepare(
        self, name: str, arguments: Any, request: RequestInfo, approved: bool
    ) -> tuple[Tool, dict[str, Any]]:
        tool = self._lookup(name)
        if self._check_policy(tool, arguments, request, approved) == "ask":
            await self._ask(tool, arguments, request)
        self._check_credentials(tool)
        try:
            kwargs = tool.validate(arguments)
        except Exception as exc:
            self._deny_audit(tool, request, "invalid", str(exc))
            self._raise_masked(exc)
            raise
        return tool, kwargs

    def _call_here(
        self,
        name: str,
        arguments: Any,
        *,
        request: RequestInfo | None = None,
        principal: str | None = None,
        approved: bool = False,
        progress: ProgressCallback | None = None,
        **_: Any,
    ) -> ToolResult:
        start = _perf()
        if request is None:
            request = RequestInfo(principal=principal) if principal else _LOCAL
        tool = self._lookup(name)
        if self._check_policy(tool, arguments, request, approved) == "ask":
            # no approver here (checked by the caller): the async path raises the clear error
            return self.loop.run(self.call(name, arguments, request=request, progress=progress))
        self._check_credentials(tool)
        try:
            kwargs = tool.validate(arguments)
        except Exception as exc:
            self._deny_audit(tool, request, "invalid", str(exc))
            self._raise_masked(exc)
            raise
        ctx = None
        if tool.wants_context or progress is not None:
            ctx = ToolContext(
                tool_name=tool.spec.name,
                credentials=self._credentials_view(),
                request=request,
                progress=progress,
            )
        result = self._run_inline(tool, kwargs, ctx)
        result.duration = _perf() - start
        if self.credentials is not None:
            result.masker = self.credentials.mask
        if self.audit is not None:
            self._audit(tool, request, "allow", result.duration, result.error)
        return result

    # -- execution ------------------------------------------------------------------------

    def _run_inline(
        self, tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None
    ) -> ToolResult:
        start = _perf()
        try:
            value = tool.invoke(kwargs, ctx)
        except (Exception, SystemExit) as exc:
            return self._failure(tool, exc)
        finally:
            tool.record_duration(_perf() - start)
        return value if isinstance(value, ToolResult) else ToolResult(tool.spec.name, value)

    async def _run_threaded(
        self, tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None, limit: float | None
    ) -> ToolResult:
        # each source has its own pool: stuck calls of one cannot starve the others
        future = self._worker_pool(tool).run(self._run_inline, tool, kwargs, ctx)
        try:
            if limit is None and ctx is None:
                return await future
            return await self._supervise(asyncio.ensure_future(future), tool, ctx, limit)
        except asyncio.CancelledError:
            if ctx is not None:
                ctx.cancellation.cancel()  # ask the thread to stop; it cannot be killed
            raise

    async def _run_async(
        self, tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None, limit: float | None
    ) -> ToolResult:
        if limit is None and ctx is None:
            try:
                value = await tool.invoke(kwargs, ctx)
            except (Exception, SystemExit) as exc:
                return self._failure(tool, exc)
            return value if isinstance(value, ToolResult) else ToolResult(tool.spec.name, value)
        task = asyncio.ensure_future(self._invoke_async(tool, kwargs, ctx))
        return await self._supervise(task, tool, ctx, limit)

    async def _invoke_async(
        self, tool: Tool, kwargs: dict[str, Any], ctx: ToolContext | None
    ) -> ToolResult:
        try:
            value = await tool.invoke(kwargs, ctx)
        except (Exception, SystemExit) as exc:
            return self._failure(tool, exc)
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
        if task in done:
            return task.result()
        task.cancel()
        if cancelled in done:
            message, kind = "the call was cancelled", "CancelledError"
        else:
            if ctx is not None:
                ctx.cancellation.cancel()
            message, kind = f"the call timed out after {limit:g} s", "TimeoutError"
        return ToolResult.failure(tool.spec.name, message, kind)

    def _failure(self, tool: Tool, exc: BaseException) -> ToolResult:
        message = str(exc) or type(exc).__name__
        if isinstance(exc, SystemExit):
            message = f"the tool called exit({exc.code!r})"
        log.debug("tool %s failed", tool.spec.name, exc_info=exc)
        masker = getattr(self.credentials, "mask", None)
        if masker is not None:
            message = masker(message)
        return ToolResult.failure(tool.spec.name, message, type(exc).__name__)

    # -- helpers --------------------------------------------------------------------------

    def _raise_masked(self, exc: Exception) -> None:
        """Re-raise a validation error with stored secrets masked (it quotes the values)."""
        if isinstance(exc, ToolValidationError) and self.credentials is not None:
            masked = exc.masked(self.credentials.mask)
            if masked is not exc:
                raise masked from None

    def _worker_pool(self, tool: Tool) -> WorkerPool:
        pools = self.__dict__.get("_worker_pools")
        if pools is None:  # made on first use: Registry.__init__ stays as it is
            pools = self.__dict__.setdefault("_worker_pools", WorkerPools())
        return pools.for_source(tool.spec.source or "builtin")

    def _on_background_loop(self) -> bool:
        """Whether this call runs on the registry's own loop (watchers, MCP sessions, REST
        calls and widget calls share it, so a sync tool must not block it)."""
        bg = getattr(self, "_bg", None)
        return bg is not None and bg.in_loop_thread()

    def _credentials_view(self) -> Any:
        return self.credentials.view() if self.credentials is not None else None

    def _audit(
        self, tool: Tool, request: RequestInfo, decision: str, duration: float, error: str | None
    ) -> None:
        try:
            self.audit.record(
                tool=tool.spec.name,
                principal=request.principal,
                request_id=request.request_id,
                client=request.client,
                decision=decision,
                duration=duration,
                error=error,
            )
        except Exception:
            log.exception("audit log write failed")

    def _deny_audit(
        self, tool: Tool, request: RequestInfo | None, decision: str, reason: str | None
    ) -> None:
        if self.audit is not None:
            self._audit(tool, request or _LOCAL, decision, 0.0, reason)
