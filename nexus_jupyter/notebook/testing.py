"""Tool tests, stats and evals in the notebook, as plain functions (``%tool test | stats |
eval`` are thin shims over these)::

    from nexus_jupyter.notebook import testing
    testing.save_test("add", {"a": 1, "b": 2}, expect=3)     # -> where it was saved
    testing.run_tests("add")                                 # a report that displays as a table
    testing.call_stats()                                     # calls, errors, p50/p95 per tool
    testing.eval_queries("queries.yaml", mode="hybrid")      # recall, MRR, misses
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import NexusError
from ..core.tooltests.cases import Expectation, TestCase

__all__ = [
    "EvalView",
    "SavedCase",
    "StatsView",
    "TestReportView",
    "call_stats",
    "eval_queries",
    "expectation_from",
    "run_tests",
    "save_test",
]

_NOTHING: Any = object()


def expectation_from(
    *,
    expect: Any = _NOTHING,
    expect_error: str | None = None,
    subset: Any = None,
    check: str | None = None,
) -> Expectation:
    """The one expectation given (none: the call must succeed). Raises when several are."""
    given = {
        "expect": expect is not _NOTHING,
        "expect_error": expect_error is not None,
        "subset": subset is not None,
        "check": check is not None,
    }
    chosen = [k for k, v in given.items() if v]
    if len(chosen) > 1:
        raise NexusError(
            f"Give one expectation, not {' and '.join(chosen)}: --expect VALUE, "
            "--expect-error TEXT, --subset JSON or --check EXPRESSION."
        )
    if given["expect"]:
        return Expectation("equals", expect)
    if given["expect_error"]:
        return Expectation("error", expect_error)
    if given["subset"]:
        return Expectation("subset", subset)
    if given["check"]:
        return Expectation("check", check)
    return Expectation()


class SavedCase(str):
    """Where a case was saved (shown as one line): plain text, and HTML where the command
    that runs it is code."""

    case: TestCase
    command: str = ""  # "%tool test NAME", shown as code in HTML

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        import html

        text = html.escape(str(self))
        if self.command:
            shown = html.escape(self.command)
            text = text.replace(shown, f"<code>{shown}</code>", 1)
        return text


def save_test(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    expect: Any = _NOTHING,
    expect_error: str | None = None,
    subset: Any = None,
    check: str | None = None,
    case_name: str = "",
    timeout: float | None = None,
    registry: Any = None,
) -> SavedCase:
    """Save a call of tool ``name`` as a test case with one expectation, where the tool's
    cases live (beside its file, or in this notebook's metadata). Returns where."""
    from .api import current_registry

    reg = current_registry(registry)
    expectation = expectation_from(
        expect=expect, expect_error=expect_error, subset=subset, check=check
    )
    data = TestCase(name, dict(arguments or {}), expectation, case_name, timeout).to_dict()
    case = TestCase.from_dict(data, where="the new case")  # the checks a case file gets
    where = reg.tests.save(name, case)
    command = f"%tool test {name}"
    saved = SavedCase(
        f"Saved a test of {name!r} ({expectation.describe()}) in {where}; "
        f"{command} runs it, and it runs after every change of the tool."
    )
    saved.case, saved.command = case, command
    return saved


class TestReportView:
    """A test run's :class:`~nexus_jupyter.core.tooltests.outcomes.TestReport` as a table."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, report: Any) -> None:
        self.report = report

    @property
    def ok(self) -> bool:
        return bool(self.report.ok)

    def _repr_html_(self) -> str:
        from ..render.tool_tests import report_html

        return report_html(self.report)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        from ..render.tool_tests import report_text

        p.text(report_text(self.report))

    def __repr__(self) -> str:
        return f"<TestReportView {self.report.summary()}>"


def run_tests(
    names: str | Sequence[str] | None = None, *, approved: bool = False, registry: Any = None
) -> TestReportView:
    """Run the cases of ``names`` (every tool's when ``None``) here and now; their statuses
    follow. A notebook tool runs in this cell, on the kernel's thread."""
    from ..core.tools.context import NOTEBOOK_CALLER
    from .api import current_registry

    reg = current_registry(registry)
    wanted = [names] if isinstance(names, str) else (list(names) if names else None)
    report = reg.tests.run(wanted, approved=approved, caller=NOTEBOOK_CALLER)
    if wanted and not report.outcomes and not report.problems:
        raise NexusError(
            f"{', '.join(map(repr, wanted))} has no test cases yet; save one with "
            f"`%tool test save {wanted[0]} {{...}} --expect VALUE` (or the form's Save as test)."
        )
    return TestReportView(report)


class StatsView:
    """Per-tool call figures of this session."""

    def __init__(self, stats: Mapping[str, Any], title: str) -> None:
        self.stats = dict(stats)
        self.title = title

    def _repr_html_(self) -> str:
        from ..render.tool_tests import stats_html

        return stats_html(self.stats, title=self.title)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        from ..render.tool_tests import stats_text

        p.text(stats_text(self.stats, title=self.title))


def call_stats(names: Sequence[str] = (), *, registry: Any = None) -> StatsView:
    """Calls, errors, refusals and p50/p95 latency per tool, since this session started."""
    from .api import current_registry

    reg = current_registry(registry)
    for name in names:
        reg.get(name)  # ToolNotFound with "did you mean"
    stats = reg.stats()
    if names:
        stats = {n: s for n, s in stats.items() if n in names}
    return StatsView(stats, "Calls in this session (p50/p95 over each tool's last 1,000 calls)")


class EvalView:
    """A retrieval eval's report: figures, misses, confusable pairs."""

    def __init__(self, report: Any) -> None:
        self.report = report

    @property
    def metrics(self) -> dict[str, float]:
        return dict(self.report.metrics)

    def _repr_html_(self) -> str:
        from ..render.evals import eval_html

        return eval_html(self.report)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        from ..render.evals import eval_text

        p.text(eval_text(self.report))


def eval_queries(queries: Any, *, mode: str | None = None, registry: Any = None) -> EvalView:
    """How well search finds the right tool for labelled ``queries`` (a JSON or YAML file,
    or a list of ``{query, relevant}``), in ``mode`` or as configured."""
    from ..core.evals.queries import load_queries
    from ..core.evals.retrieval import evaluate
    from .api import current_registry

    if mode not in (None, "keyword", "hybrid"):
        raise NexusError(f"--mode is keyword or hybrid, got {mode!r}.")
    reg = current_registry(registry)
    loaded = load_queries(queries) if isinstance(queries, str) else queries
    return EvalView(evaluate(reg, loaded, mode=mode))
