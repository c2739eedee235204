"""Run test cases through the registry's public call path and judge what comes back.

>>> outcome = run_case_sync(registry, TestCase("add", {"a": 1, "b": 2}, Expectation("equals", 3)))
... # doctest: +SKIP
>>> outcome.state, outcome.message                                   # doctest: +SKIP
('passed', '')

A case is called exactly as any face calls a tool (``registry.call`` / ``call_sync``), with a
request of its own (:data:`TEST_REQUEST`: local, nobody to approve, client ``test``, so the
audit log tells test calls apart). Before the call the runner asks what the call pipeline
would: a case whose tool cannot run now (a missing credential, a server that is down), that
policy blocks, or that needs an approval nobody gave (``approved=True`` gives it: ``nexus-tools
test NAME --yes``, ``%tool test NAME --yes``; such an outcome has ``needs_approval`` set, and
each face words how) is **skipped** with that reason rather than run. A malformed case (its
``problem``) and a case whose tool does not exist are **errors** that say what is wrong.

The value a case is held against is the result's structured value, else its text content (an
MCP tool that answers with text), else ``None``. Messages have stored secrets masked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import (
    ApprovalRequired,
    MissingCredential,
    NexusError,
    PermissionDenied,
    ToolNotFound,
    ToolUnavailable,
    ToolValidationError,
)
from ..tools.context import TEST_CLIENT, Caller, RequestInfo
from .cases import TestCase
from .compare import first_difference, show, subset_difference
from .outcomes import CaseOutcome, CaseState
from .predicate import evaluate_check

if TYPE_CHECKING:
    from ..registry.registry import Registry
    from ..tools.result import ToolResult

__all__ = [
    "TEST_CALLER",
    "group_by_tool",
    "judge",
    "request_for_tests",
    "result_value",
    "run_case",
    "run_case_sync",
    "run_cases",
    "run_cases_sync",
]

#: Who calls in a test run: local code, with nobody there to answer an approval prompt, never
#: on the caller's event loop (a test run must not stall a notebook or a server).
TEST_CALLER = Caller("python", remote=False, grant="default", can_approve=False, inline="never")
#: Errors of a call that did not finish: the case cannot be judged (an error, not a failure).
_UNFINISHED = frozenset({"TimeoutError", "CancelledError", "ToolUnavailable"})


def request_for_tests(caller: Caller = TEST_CALLER, principal: str | None = None) -> RequestInfo:
    """A request for one test call (client ``test`` in the audit log), on behalf of
    ``principal`` when a person asked for the run (the sidebar's user)."""
    return RequestInfo(client=TEST_CLIENT, caller=caller, principal=principal)


def result_value(result: ToolResult) -> Any:
    """What a case compares: the structured value, else the text content, else ``None``."""
    if result.is_error:
        return None
    value = result.structured
    if value is not None:
        return value
    text = result.text
    return text if text else None


def _masker(registry: Registry) -> Callable[[str], str]:
    credentials = registry.credentials
    mask = getattr(credentials, "mask", None) if credentials is not None else None
    return mask if callable(mask) else (lambda text: text)


def _skip_reason(
    registry: Registry, case: TestCase, request: RequestInfo, approved: bool
) -> tuple[CaseState, str] | None:
    """Why the case is not run (``("skipped" | "error", reason)``), or ``None`` to run it."""
    if case.problem:  # a malformed case: say what is wrong with it, never call anything
        return "error", case.problem
    try:
        entry = registry.entry(case.tool)  # the live status: a credential may be missing
    except ToolNotFound as exc:
        return "error", _no_such_tool(exc)
    if entry.status != "ok":
        return "skipped", f"the tool cannot run now: {entry.reason or entry.status}"
    policy = registry.policy
    if policy is None:
        return None
    decision = policy.check(entry.spec, dict(case.arguments), request)
    if decision.action == "deny":
        return "skipped", f"blocked by policy: {decision.reason}"
    if decision.action == "ask" and not approved:
        # how to give it is the face's to say (CaseOutcome.needs_approval)
        return "skipped", _NEEDS_APPROVAL.format(permission=entry.spec.permission)
    return None


#: Why a case whose call needs an approval is skipped (the faces add how to approve it).
_NEEDS_APPROVAL = "needs approval ({permission}), which a test run does not give"


def _needs_approval(registry: Registry, case: TestCase) -> str | None:
    entry = registry.snapshot.entries.get(case.tool)
    return _NEEDS_APPROVAL.format(permission=entry.spec.permission) if entry else None


def _no_such_tool(exc: ToolNotFound) -> str:
    """The message of a case whose tool does not exist, with what to do about it."""
    fix = "Correct the case's `tool:`, or delete the case if the tool is gone."
    text = exc.worded_for(fix)
    if exc.cause or text.endswith(fix):  # its file failed to load: that message says the fix
        return text
    return f"{text} {fix}"


def judge(
    case: TestCase, result: ToolResult | None, error: str | None, error_type: str | None
) -> tuple[CaseState, str]:
    """The state of ``case`` and what differed, given the call's ``result`` or the
    ``error`` raised before the tool ran (an invalid argument)."""
    expectation = case.expectation
    if result is not None and result.is_error:
        error, error_type = result.error or "failed", result.error_type
    if expectation.kind == "error":
        if error is None:
            got = show(result_value(result)) if result is not None else "nothing"
            return (
                "failed",
                f"expected an error containing {expectation.value!r}, but it succeeded: {got}",
            )
        if str(expectation.value).casefold() in error.casefold():
            return "passed", ""
        return "failed", (
            f"expected an error containing {expectation.value!r}, got "
            f"{error_type + ': ' if error_type else ''}{_one_line(error)}"
        )
    if error is not None:
        state: CaseState = "error" if error_type in _UNFINISHED else "failed"
        return (
            state,
            f"the call failed: {error_type + ': ' if error_type else ''}{_one_line(error)}",
        )
    assert result is not None
    value = result_value(result)
    if expectation.kind == "equals":
        diff = first_difference(expectation.value, value)
        return ("failed", diff) if diff else ("passed", "")
    if expectation.kind == "subset":
        diff = subset_difference(expectation.value, value)
        return ("failed", diff) if diff else ("passed", "")
    if expectation.kind == "check":
        return _judge_check(case, result, value)
    return "passed", ""


def _judge_check(case: TestCase, result: ToolResult, value: Any) -> tuple[CaseState, str]:
    source = str(case.expectation.value)
    names = {
        "result": value,
        "text": result.text,
        "content": result.content,
        "error": None,
        "error_type": None,
        "arguments": dict(case.arguments),
    }
    try:
        holds = evaluate_check(source, names)
    except Exception as exc:
        return (
            "error",
            f"check `{source}` raised {type(exc).__name__}: {exc} (result = {show(value)})",
        )
    if holds:
        return "passed", ""
    return "failed", f"check `{source}` is false (result = {show(value)})"


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 300 else line[:297] + "..."


def _outcome(
    registry: Registry,
    case: TestCase,
    state: CaseState,
    message: str,
    started: float,
) -> CaseOutcome:
    entry = registry.snapshot.entries.get(case.tool)
    version = entry.spec.version if entry is not None else ""
    return CaseOutcome(
        case, state, _masker(registry)(message), time.perf_counter() - started, version
    )


def _prepare(
    registry: Registry, case: TestCase, request: RequestInfo | None, approved: bool
) -> tuple[float, RequestInfo, CaseOutcome | None]:
    """The start time, the request, and the outcome when the case is not run at all."""
    started = time.perf_counter()
    request = request or request_for_tests()
    skip = _skip_reason(registry, case, request, approved)
    early = _outcome(registry, case, *skip, started) if skip is not None else None
    if early is not None and early.message == _needs_approval(registry, case):
        early = replace(early, needs_approval=True)
    return started, request, early


def _raised(registry: Registry, case: TestCase, exc: NexusError, started: float) -> CaseOutcome:
    """The outcome of a call that raised before the tool ran: invalid arguments are judged
    (a case may expect them); a refusal the pre-check could not foresee (an argument rule)
    is skipped with why; anything else is an error."""
    if isinstance(exc, ToolValidationError):
        return _outcome(registry, case, *judge(case, None, str(exc), type(exc).__name__), started)
    if isinstance(exc, ApprovalRequired | PermissionDenied | MissingCredential | ToolUnavailable):
        return _outcome(registry, case, "skipped", str(exc), started)
    text = _no_such_tool(exc) if isinstance(exc, ToolNotFound) else f"{type(exc).__name__}: {exc}"
    return _outcome(registry, case, "error", text, started)


async def run_case(
    registry: Registry,
    case: TestCase,
    *,
    approved: bool = False,
    request: RequestInfo | None = None,
) -> CaseOutcome:
    """Run one case with ``await registry.call`` (see the module docstring)."""
    started, request, early = _prepare(registry, case, request, approved)
    if early is not None:
        return early
    try:
        result = await registry.call(
            case.tool, dict(case.arguments), request=request, approved=approved, timeout=case.limit
        )
    except NexusError as exc:
        return _raised(registry, case, exc, started)
    return _outcome(registry, case, *judge(case, result, None, None), started)


def run_case_sync(
    registry: Registry,
    case: TestCase,
    *,
    approved: bool = False,
    request: RequestInfo | None = None,
) -> CaseOutcome:
    """Run one case with ``registry.call_sync``: from a script, the CLI, pytest or a notebook
    cell (a notebook tool then runs right there, on the kernel's thread)."""
    started, request, early = _prepare(registry, case, request, approved)
    if early is not None:
        return early
    try:
        result = registry.call_sync(
            case.tool, dict(case.arguments), request=request, approved=approved, timeout=case.limit
        )
    except NexusError as exc:
        return _raised(registry, case, exc, started)
    return _outcome(registry, case, *judge(case, result, None, None), started)


async def run_cases(
    registry: Registry, cases: Iterable[TestCase], **options: Any
) -> list[CaseOutcome]:
    """Run ``cases`` one after the other (a tool's cases may depend on their order)."""
    return [await run_case(registry, case, **options) for case in cases]


def run_cases_sync(
    registry: Registry, cases: Iterable[TestCase], **options: Any
) -> list[CaseOutcome]:
    return [run_case_sync(registry, case, **options) for case in cases]


def group_by_tool(cases: Iterable[TestCase]) -> dict[str, list[TestCase]]:
    out: dict[str, list[TestCase]] = {}
    for case in cases:
        out.setdefault(case.tool, []).append(case)
    return out
