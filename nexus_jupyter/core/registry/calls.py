"""How a call runs: look up, police, check credentials, validate, approve, execute, audit,
mask (a call is put to its approver only once it could run: for a tool in a worker process,
once the worker has checked the arguments too). :class:`CallPipeline` writes
each step once; the async path (:meth:`CallPipeline.call`) and the sync fast path
(:meth:`CallPipeline.call_sync`) are the same steps around a different way of running the
tool, and every face (Python, notebook, CLI, MCP, REST) comes through one of the two.

Problems found before the tool runs raise (nothing ran); failures of the tool itself come
back as a :class:`ToolResult` with ``error`` set. Where a sync tool runs is decided from the
request's :class:`~nexus_jupyter.core.tools.context.Caller`: on the async path it runs in a
worker thread unless the caller's ``inline`` rule lets a tool that has proven faster than a
thread hop (:data:`~nexus_jupyter.core.tools.tool.INLINE_BUDGET_S`) run on the caller's loop;
never on the registry's background loop, which watchers, MCP sessions and widgets share.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import (
    ApprovalDenied,
    ApprovalRequired,
    NexusError,
    PermissionDenied,
    ToolNotFound,
    ToolUnavailable,
    ToolValidationError,
)
from ..policy.approvals import how_to_approve
from ..telemetry import tracing as _tracing
from ..telemetry.stats import CallStats
from ..tools.context import (
    TEST_CLIENT,
    CancellationToken,
    ProgressCallback,
    RequestInfo,
    ToolContext,
)
from ..tools.result import ToolResult
from ..tools.summary import describe_call, schema_defaults
from .reasons import reason_for
from .running import ToolRunner, cancelled_result

if TYPE_CHECKING:
    from ..tools.tool import Tool
    from .registry import Registry
    from .state import ToolEntry

__all__ = ["CallPipeline"]

log = logging.getLogger(__name__)
#: The request of a call that names none: local Python code. Its id is not reported back.
_LOCAL = RequestInfo(request_id="local")
_perf = time.perf_counter


class CallPipeline:
    """The calls of one :class:`~nexus_jupyter.core.registry.registry.Registry`, which holds
    it; it reads the registry's tools and its policy, credentials, audit and approver at
    every call, so replacing one of those on the registry takes effect at once.

    The registry passes every option positionally (the cheapest call in CPython: this is
    the per-call path that ``benchmarks/call_overhead.py`` measures)."""

    __slots__ = ("observers", "registry", "runner", "stats")

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.runner = ToolRunner(registry)
        #: per-tool counts and latencies (``Registry.stats()``)
        self.stats = CallStats()
        #: told of every finished call (``Registry.observe_calls``); replaced, never mutated
        self.observers: tuple[Callable[[Mapping[str, Any], ToolResult], Any], ...] = ()

    # -- entry points ---------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        request: RequestInfo | None,
        principal: str | None,
        timeout: float | None,
        approved: bool,
        progress: ProgressCallback | None,
        cancellation: CancellationToken | None,
        source: str | None = None,
    ) -> ToolResult:
        """See :meth:`Registry.call <nexus_jupyter.core.registry.registry.Registry.call>`."""
        start = _perf()
        if request is None:
            request = RequestInfo(principal=principal) if principal else _LOCAL
        entry = self.registry._snapshot.entries.get(name)
        if source is not None:
            entry = self._of_source(name, entry, source)
        span = token = None
        if _tracing.TRACER is not None:  # the one check a call pays when tracing is off
            span, token = _tracing.start_call(name, entry, request)
        try:
            if entry is not None and self._refresh_due(entry):
                await asyncio.to_thread(self._refresh_credentials, entry)
            installer = self._installer_for(entry)
            if installer is not None and await asyncio.to_thread(
                installer, entry, request, approved
            ):
                entry = self.registry._snapshot.entries.get(name)
            tool, ask = self._admit(name, entry, arguments, request, approved)
            checked = None
            if tool.check_elsewhere is not None:  # a worker process's model: its verdict too
                checked = await self._check_elsewhere(tool, arguments, request)
            kwargs, ctx = self._bind(tool, arguments, request, cancellation, progress, checked)
            if ask:  # asked only now: a call that cannot run is refused without a question
                shown = self._to_approve(tool, kwargs, arguments, request, ask)
                await self._ask(tool, shown, request)
                start = _perf()  # the tool's own time: not the wait for a person's answer
            limit = timeout if timeout is not None else tool.spec.timeout
            try:
                if cancellation is not None and cancellation.cancelled:
                    result = cancelled_result(tool, started=False)
                elif tool.is_async:
                    result = await self.runner.awaited(tool, kwargs, ctx, limit)
                elif (
                    limit is None
                    and cancellation is None
                    and self._inline_on_this_loop(tool, request)
                ):
                    result = self.runner.inline(tool, kwargs, ctx)
                else:
                    result = await self.runner.threaded(tool, kwargs, ctx, limit)
            except ToolValidationError as refused:  # by what runs it (see ToolRunner)
                raise self._invalid(tool, request, refused, arguments) from None
            result = self._finish(result, tool, arguments, request, start)
        except BaseException as exc:
            self._refused(name, entry, exc, request, span, token, start)
            raise
        if span is not None:
            _tracing.end_call(span, token, result)
        return result

    def call_sync(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        request: RequestInfo | None,
        principal: str | None,
        timeout: float | None,
        approved: bool,
        progress: ProgressCallback | None,
        cancellation: CancellationToken | None,
        source: str | None = None,
    ) -> ToolResult:
        """See :meth:`Registry.call_sync <nexus_jupyter.core.registry.registry.Registry.call_sync>`.

        A sync tool with no deadline and no cancel signal runs right here (only an approval
        prompt goes to the background loop); anything else is :meth:`call` on the background
        loop while this thread waits, so no running loop is ever re-entered. A tool pinned
        to this thread (a notebook tool called on the kernel's main thread) runs here too,
        whatever the deadline: sending it away would wait for this very thread.
        """
        registry = self.registry
        entry = registry._snapshot.entries.get(name)
        if source is not None:
            entry = self._of_source(name, entry, source)
        at_home = entry is not None and self.runner.at_home(entry.tool)
        if not at_home and (
            entry is None
            or timeout is not None
            or cancellation is not None
            or entry.tool.is_async
            or entry.tool.check_elsewhere is not None
            or entry.tool.spec.timeout is not None
            or self.runner.away_from_home(entry.tool)
        ):
            coro = self.call(
                name,
                arguments,
                request,
                principal,
                timeout,
                approved,
                progress,
                cancellation,
                source,
            )
            return registry.loop.run(coro)
        assert entry is not None  # a missing tool took the async path above
        start = _perf()
        if request is None:
            request = RequestInfo(principal=principal) if principal else _LOCAL
        span = token = None
        if _tracing.TRACER is not None:
            span, token = _tracing.start_call(name, entry, request)
        try:
            if self._refresh_due(entry):
                self._refresh_credentials(entry)
            installer = self._installer_for(entry)
            if installer is not None and installer(entry, request, approved):
                entry = registry._snapshot.entries.get(name)
            tool, ask = self._admit(name, entry, arguments, request, approved)
            kwargs, ctx = self._bind(tool, arguments, request, cancellation, progress)
            if ask:
                shown = self._to_approve(tool, kwargs, arguments, request, ask)
                registry.loop.run(self._ask(tool, shown, request))
                start = _perf()
            result = self.runner.inline(tool, kwargs, ctx)
            result = self._finish(result, tool, arguments, request, start)
        except BaseException as exc:
            self._refused(name, entry, exc, request, span, token, start)
            raise
        if span is not None:
            _tracing.end_call(span, token, result)
        return result

    # -- steps, in the order they run -----------------------------------------------------

    def _of_source(self, name: str, entry: ToolEntry | None, source: str) -> ToolEntry:
        """The tool ``name`` of ``source`` (a call that names its source: see
        :meth:`ToolEntry.of_source`); raises :class:`ToolNotFound` when it defines none."""
        found = entry.of_source(source) if entry is not None else None
        if found is None:
            if entry is None:
                raise self.registry.not_found(name)
            raise ToolNotFound(name, (), f"the source {source!r} does not define it (now)")
        return found

    def _admit(
        self,
        name: str,
        entry: ToolEntry | None,
        arguments: Any,
        request: RequestInfo,
        approved: bool,
    ) -> tuple[Tool, str | None]:
        """Check the tool ``name`` (its current ``entry``) can run now and ask the policy;
        returns the tool and, when someone must approve the call first, why. Raises when it
        may not run (nothing ran)."""
        registry = self.registry
        if entry is None:
            raise registry.not_found(name)
        if entry.status != "ok" or (
            registry.credentials is not None and entry.spec.requires_credentials
        ):
            live = registry._with_live_status(entry)
            if live.status != "ok":
                self._audit_refusal(entry.tool, request, "unavailable", live.reason)
                if entry.status == "ok" and registry.credentials is not None:
                    registry.credentials.require(entry.spec)  # says how to set it
                why = reason_for(live.reason, request.caller)  # an agent: who can fix it, not how
                raise ToolUnavailable(f"Tool {name!r} cannot run now: {why}.")
        if registry.policy is None:
            return entry.tool, None
        return entry.tool, self._needs_approval(entry.tool, arguments, request, approved)

    def _refresh_due(self, entry: ToolEntry) -> bool:
        """Whether a credential the tool needs is an expired, refreshable OAuth token."""
        store = self.registry.credentials
        if store is None or not entry.spec.requires_credentials:
            return False
        from ..policy.oauth_refresh import refresh_due

        return bool(refresh_due(store, entry.spec))

    def _installer_for(self, entry: ToolEntry | None) -> Callable[..., bool] | None:
        """The registry's ``auto_installer`` when ``entry`` is unavailable (it is set when
        nex.yaml says ``auto_install``; it asks before running anything), else ``None``."""
        if entry is None or entry.status == "ok":
            return None
        return self.registry.auto_installer

    def _refresh_credentials(self, entry: ToolEntry) -> None:
        from ..policy.oauth_refresh import refresh_expired

        refresh_expired(self.registry.credentials, entry.spec)

    def _needs_approval(
        self, tool: Tool, arguments: Any, request: RequestInfo, approved: bool
    ) -> str | None:
        """The policy's decision: ``None`` to run, or why to ask first (once the arguments
        are valid: :meth:`_to_approve`). Raises :class:`PermissionDenied`: a
        denial comes before validation, so a blocked tool's schema is not told through
        its errors."""
        registry = self.registry
        assert registry.policy is not None
        decision = registry.policy.check(tool.spec, arguments or {}, request)
        if decision.action == "deny":
            self._audit_refusal(tool, request, "deny", decision.reason, arguments)
            raise PermissionDenied(decision.reason)
        return (
            decision.reason or "the policy asks"
            if decision.action == "ask" and not approved
            else None
        )

    def _to_approve(
        self,
        tool: Tool,
        kwargs: dict[str, Any],
        arguments: Any,
        request: RequestInfo,
        why: str | None = None,
    ) -> dict[str, Any]:
        """The validated arguments of a call the policy asks about, as JSON values (what
        the approver is shown: the values the tool will get, defaults included). Raises
        :class:`ApprovalRequired` when no one can answer where the call was made (the error
        says how, for that face, and carries these arguments for a face that asks itself)."""
        shown = _as_json(kwargs)
        registry = self.registry
        if registry.approver is None or not request.caller.can_approve:
            self._audit_refusal(tool, request, "ask-denied", "no one to approve", arguments)
            raise ApprovalRequired(
                f"Tool {tool.spec.name!r} needs approval ({tool.spec.permission}). "
                + how_to_approve(request.caller.face, tool.spec.name),
                tool=tool.spec.name,
                arguments=shown,
                why=why,
            )
        return shown

    async def _ask(self, tool: Tool, arguments: Any, request: RequestInfo) -> None:
        """Ask the registry's approver (checked by :meth:`_admit`); raises if denied."""
        registry = self.registry
        assert registry.approver is not None
        answer = registry.approver(tool, arguments, request)
        if inspect.isawaitable(answer):
            answer = await answer
        if answer == "always" and registry.policy is not None:
            registry.policy.remember(tool.spec, request)
        elif not answer:
            self._audit_refusal(tool, request, "ask-denied", "denied by the user", arguments)
            raise ApprovalDenied(
                f"Tool {tool.spec.name!r} needs approval ({tool.spec.permission}); "
                "the call was denied."
            )

    def _bind(
        self,
        tool: Tool,
        arguments: Any,
        request: RequestInfo,
        cancellation: CancellationToken | None,
        progress: ProgressCallback | None,
        checked: dict[str, Any] | None = None,
    ) -> tuple[dict[str, Any], ToolContext | None]:
        """Check the tool's credentials are set and validate ``arguments`` (unless
        :meth:`_check_elsewhere` did: ``checked``); returns the keyword arguments and the
        tool's :class:`ToolContext`, made only when the tool asks for one or the call
        carries a cancel signal or a progress callback (cheaper without)."""
        credentials = self.registry.credentials
        if credentials is not None and tool.spec.requires_credentials:
            credentials.require(tool.spec)
        if checked is not None:
            kwargs = checked
        else:
            try:
                kwargs = tool.validate(arguments)
            except Exception as exc:
                refused = self._invalid(tool, request, exc, arguments)
                if refused is exc:
                    raise
                raise refused from None
        if not (tool.wants_context or cancellation is not None or progress is not None):
            return kwargs, None
        ctx = ToolContext(
            tool_name=tool.spec.name,
            credentials=credentials.view() if credentials is not None else None,
            request=request,
            cancellation=cancellation,
            progress=progress,
        )
        return kwargs, ctx

    async def _check_elsewhere(
        self, tool: Tool, arguments: Any, request: RequestInfo
    ) -> dict[str, Any]:
        """Validate ``arguments`` here and where ``tool`` runs (a worker process's pydantic
        model, with the checks its schema cannot say: a custom validator, an email), before
        anyone is asked to approve the call; returns the keyword arguments. A refusal is
        :meth:`_bind`'s, in this tool's name, with the worker's verdict when it has one: it
        names every wrong place, in the words the schema's check uses, as in-process."""
        assert tool.check_elsewhere is not None
        credentials = self.registry.credentials
        if credentials is not None and tool.spec.requires_credentials:
            credentials.require(tool.spec)  # a missing credential is told first, as in _bind
        try:
            try:
                kwargs = tool.validate(arguments)
            except ToolValidationError as schema_refused:
                try:  # the worker's verdict on the same arguments names the other places too
                    await tool.check_elsewhere(arguments)
                except ToolValidationError:
                    raise
                except Exception:
                    pass  # no verdict from there: the schema's stands
                raise schema_refused from None
            await tool.check_elsewhere(kwargs)
        except ToolValidationError as exc:
            named = (
                exc
                if exc.tool == tool.spec.name
                else ToolValidationError(tool.spec.name, exc.errors)
            )
            raise self._invalid(tool, request, named, arguments) from None
        except ToolUnavailable as exc:  # its worker could not be reached or load the file
            self._audit_refusal(tool, request, "unavailable", str(exc), arguments)
            raise
        return kwargs

    def _invalid(
        self, tool: Tool, request: RequestInfo, exc: Exception, arguments: Any
    ) -> Exception:
        """A refusal of ``arguments``, audited; masked where it quotes a stored secret."""
        self._audit_refusal(tool, request, "invalid", str(exc), arguments)
        credentials = self.registry.credentials
        if isinstance(exc, ToolValidationError) and credentials is not None:
            return exc.masked(credentials.mask)  # it quotes the values it refused
        return exc

    def _inline_on_this_loop(self, tool: Tool, request: RequestInfo) -> bool:
        """Whether a sync tool runs on the running loop rather than in a worker thread."""
        rule = request.caller.inline
        if rule == "never":
            return False
        proven = tool.runs_inline if rule == "after_fast_streak" else tool.runs_inline_on_server
        if not proven or self.runner.away_from_home(tool):
            return False
        background = self.registry._bg
        return background is None or not background.in_loop_thread()

    def _finish(
        self, result: ToolResult, tool: Tool, arguments: Any, request: RequestInfo, start: float
    ) -> ToolResult:
        """Time, mask, label, describe and audit a finished call."""
        registry = self.registry
        result.duration = _perf() - start
        if request.client != TEST_CLIENT:  # a test run is not use (see TEST_CLIENT)
            # CallStats.record, written out: this is the per-call path
            counter = self.stats.counters.get(tool.stats_key) or self.stats.counter(
                tool.stats_key, tool.spec.name, tool.spec.source
            )
            counter.durations.append(result.duration)
            next(counter.calls)
            if result.error is not None:  # a cancel is its caller's doing, not a failure
                cancelled = result.error_type == "CancelledError"
                next(counter.cancelled if cancelled else counter.errors)
            counter.last = start
        result.describer = partial(_describe, tool, arguments)
        credentials = registry.credentials
        if credentials is not None:
            result.masker = credentials.mask  # see ToolResult.redacted
        if request is not _LOCAL:
            result.request_id = request.request_id
        if registry.audit is not None:
            self._audit(
                tool,
                request,
                "allow",
                result.duration,
                result.error,
                result.summary,
                result.error_type,
            )
        if self.observers and request.client != TEST_CLIENT:
            self._tell_observers(arguments, result)
        return result

    def _tell_observers(self, arguments: Any, result: ToolResult) -> None:
        """Hand a finished call to each observer; one that fails is logged, the call stands."""
        sent = arguments if isinstance(arguments, Mapping) else {}
        for observer in self.observers:
            try:
                observer(sent, result)
            except Exception:
                log.exception("a call observer failed")

    def _refused(
        self,
        name: str,
        entry: ToolEntry | None,
        exc: BaseException,
        request: RequestInfo,
        span: Any,
        token: Any,
        start: float,
    ) -> None:
        """A call that raised instead of answering: a refusal before the tool ran (counted
        as refused), or one its caller cancelled (counted as a cancelled call), under the
        definition it was for (``entry``; none for a call by name over a conflict). A name
        that is no tool and never was one gets no row: a client guessing names would grow
        the table without bound, and its caller was told (``ToolNotFound``, with a
        suggestion)."""
        # ("error" is a conflict: no definition was chosen; an unavailable one was)
        source = entry.tool.spec.source if entry is not None and entry.status != "error" else ""
        if request.client == TEST_CLIENT:
            pass  # a test run is not use (see TEST_CLIENT)
        elif isinstance(exc, NexusError):
            if name in self.registry._snapshot.entries or self.stats.has(name):
                self.stats.refuse(name, source)
        elif isinstance(exc, asyncio.CancelledError) and name in self.registry._snapshot.entries:
            took = _perf() - start
            self.stats.record(name, took, False, cancelled=True, source=source)
            if self.registry.audit is not None:  # audited as the answered cancels are
                tool = self.registry._snapshot.entries[name].tool
                said = "the call was cancelled (its caller went away)"
                self._audit(tool, request, "allow", took, said, None, "CancelledError")
        if span is not None:
            _tracing.end_refused(span, token, exc)

    # -- audit ----------------------------------------------------------------------------

    def _audit(
        self,
        tool: Tool,
        request: RequestInfo,
        decision: str,
        duration: float,
        error: str | None,
        summary: str | None = None,
        error_type: str | None = None,
    ) -> None:
        audit = self.registry.audit
        if audit is None:
            return
        entry: dict[str, Any] = {
            "tool": tool.spec.name,
            "principal": request.principal,
            "request_id": request.request_id,
            "client": request.client,
            "decision": decision,
            "duration": duration,
            "error": error,
            "summary": summary,
        }
        if error_type is not None:  # (a sink written before error_type existed takes the rest)
            entry["error_type"] = error_type
        try:
            try:
                audit.record(**entry)
            except TypeError as exc:
                if "error_type" not in entry or "error_type" not in str(exc):
                    raise
                del entry["error_type"]
                audit.record(**entry)
        except Exception:
            log.exception("audit log write failed")

    def _audit_refusal(
        self,
        tool: Tool,
        request: RequestInfo,
        decision: str,
        reason: str | None,
        arguments: Any = None,
    ) -> None:
        if self.registry.audit is None:
            return
        summary = _describe(tool, arguments) if isinstance(arguments, Mapping) else None
        if summary is not None and self.registry.credentials is not None:
            summary = self.registry.credentials.mask(summary)
        self._audit(tool, request, decision, 0.0, reason, summary)


def _as_json(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Validated arguments as JSON values (a date as its ISO text, a path as its text)."""
    from pydantic_core import to_jsonable_python

    return {key: to_jsonable_python(value, fallback=repr) for key, value in kwargs.items()}


def _describe(tool: Tool, arguments: Any) -> str:
    """The call's one-line description (see :mod:`nexus_jupyter.core.tools.summary`)."""
    summary = tool.meta.summary if tool.meta is not None else None
    args = arguments if isinstance(arguments, Mapping) else {}
    if summary is None:
        return describe_call(tool.spec.name, None, args)
    defaults = schema_defaults(tool.spec.input_schema)
    return describe_call(tool.spec.name, summary, args, defaults=defaults)
