"""Tool tests and call statistics for people: text for terminals, HTML for notebooks.

Used by ``%tool test``, ``%tool info``, ``%tool stats``, the catalog widget, ``nexus-tools
test | check | stats``.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from .tables import left_aligned

if TYPE_CHECKING:
    from ..core.telemetry.stats import ToolStats
    from ..core.tooltests.outcomes import CaseOutcome, TestReport, TestStatus

__all__ = [
    "STATE_COLORS",
    "outcome_message",
    "report_html",
    "report_text",
    "stats_html",
    "stats_line",
    "stats_text",
    "test_badge",
    "test_status_html",
    "test_status_text",
]

STATE_COLORS = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "error": "#b71c1c",
    "skipped": "#757575",
    "running": "#1565c0",
    "pending": "#757575",
}
_MARK = {"passed": "ok", "failed": "FAILED", "error": "ERROR", "skipped": "skipped"}


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _badge(text: str, color: str, title: str) -> str:
    return (
        f"<span class='nexus-test-badge' title='{html.escape(title)}' style='background:{color};"
        f"color:#fff;border-radius:3px;padding:0 5px;margin-right:4px;font-size:85%;"
        f"white-space:nowrap;display:inline-block'>"
        f"{html.escape(text)}</span>"
    )


def test_badge(status: TestStatus) -> str:
    """The status as a small badge (``tests 3/3``, ``tests failed``), its summary as the
    tooltip; ``""`` for a tool without cases."""
    if status.state == "none":
        return ""
    counts = status.counts
    label = {
        "passed": f"tests {counts['passed']}/{status.cases}",
        "failed": "tests failed",
        "error": "tests error",
        "skipped": "tests skipped",
        "running": "tests running",
        "pending": "tests pending",
    }.get(status.state, f"tests {status.state}")
    return _badge(label, STATE_COLORS.get(status.state, "#555"), status.summary())


def test_status_text(status: TestStatus) -> str:
    """``tests: failed -- add.tests.yaml case 1 (line 2): add(a=1, b=2): $: expected 3, got
    -1 (it passed before this change)``."""
    if status.state == "none":
        return "tests: none (save one with `%tool test save NAME {args} --expect VALUE`)"
    line = f"tests: {status.summary()}"
    if status.broke is not None:
        line += f"\n  broke by the last change: {status.broke.case.label}: {status.broke.message}"
    return line


def test_status_html(status: TestStatus) -> str:
    if status.state == "none":
        return ""
    text = html.escape(status.summary())
    broke = ""
    if status.broke is not None:
        broke = (
            "<br><b>broke by the last change:</b> "
            f"{html.escape(status.broke.case.label)}: <code>{html.escape(status.broke.message)}</code>"
        )
    return f"<p class='nexus-test-status'>{test_badge(status)}{text}{broke}</p>"


#: How a person gives a test run the approval a case needs, from each face that runs tests.
_APPROVE_FROM = {"notebook": "%tool test {tool} --yes", "cli": "nexus-tools test {tool} --yes"}


def outcome_message(outcome: CaseOutcome, face: Literal["notebook", "cli"] = "notebook") -> str:
    """What differed, or why the case was skipped; a case that needs approval says the
    command of ``face`` that gives it (``run it with %tool test purge --yes``)."""
    if not outcome.needs_approval:
        return outcome.message
    return f"{outcome.message}; run it with {_APPROVE_FROM[face].format(tool=outcome.case.tool)}"


def _message_html(outcome: CaseOutcome) -> str:
    if not outcome.needs_approval:
        return html.escape(outcome.message)
    command = _APPROVE_FROM["notebook"].format(tool=outcome.case.tool)
    return f"{html.escape(outcome.message)}; run it with <code>{html.escape(command)}</code>"


def _outcome_line(outcome: CaseOutcome, face: Literal["notebook", "cli"]) -> str:
    line = f"{_MARK[outcome.state]:<7} {outcome.case.label}  ({_ms(outcome.duration)})"
    message = outcome_message(outcome, face)
    return line + (f"\n        {message}" if message else "")


def report_text(report: TestReport, face: Literal["notebook", "cli"] = "notebook") -> str:
    """The report for a terminal (``face="cli"``: advice names ``nexus-tools``) or a
    notebook's text output."""
    if not report.outcomes and not report.problems:
        return "No test cases. Save one with `%tool test save NAME {args} --expect VALUE`, or write <tool file>.tests.yaml."
    lines = [_outcome_line(o, face) for o in report.outcomes]
    lines += [f"ERROR   {where}: {problem}" for where, problem in report.problems.items()]
    lines.append(report.summary())
    return "\n".join(lines)


def report_html(report: TestReport) -> str:
    if not report.outcomes and not report.problems:
        return f"<p>{html.escape(report_text(report))}</p>"
    esc = html.escape
    rows = "".join(
        f"<tr><td>{_badge(o.state, STATE_COLORS[o.state], o.message or o.state)}</td>"
        f"<td><code>{esc(o.case.tool)}</code></td><td>{esc(o.case.label)}</td>"
        f"<td style='text-align:left'>{_message_html(o)}</td><td>{_ms(o.duration)}</td></tr>"
        for o in report.outcomes
    )
    rows += "".join(
        f"<tr><td>{_badge('error', STATE_COLORS['error'], p)}</td><td></td><td>{esc(w)}</td>"
        f"<td style='text-align:left'>{esc(p)}</td><td></td></tr>"
        for w, p in report.problems.items()
    )
    table = left_aligned(
        "<table><thead><tr><th></th><th>tool</th><th>case</th><th>what differed</th>"
        f"<th>time</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    counts = report.counts
    # green when every case passed; a skip is not a failure, nor a pass: grey
    state = "failed" if not report.ok else "skipped" if counts.get("skipped") else "passed"
    color = STATE_COLORS[state]
    return (
        f"<div class='nexus-test-report'>{table}"
        f"<p style='color:{color}'><b>{esc(report.summary())}</b></p></div>"
    )


def _stats_rows(stats: Mapping[str, ToolStats]) -> list[tuple[str, ...]]:
    return [
        (
            s.tool,
            str(s.calls),
            str(s.errors),
            f"{s.error_rate:.0%}" if s.calls else "-",
            str(s.refused),
            str(s.cancelled),
            _ms(s.p50),
            _ms(s.p95),
            _ms(s.max),
        )
        for s in stats.values()
    ]


_STATS_HEAD = (
    "tool",
    "calls",
    "errors",
    "error rate",
    "refused",
    "cancelled",
    "p50",
    "p95",
    "max",
)


def stats_text(stats: Mapping[str, ToolStats], *, title: str = "") -> str:
    """The figures as a table under ``title`` (a heading without its colon)."""
    if not stats:
        return (title + ": " if title else "") + "no calls yet."
    rows = [_STATS_HEAD, *_stats_rows(stats)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_STATS_HEAD))]
    lines = [title + ":"] if title else []
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


def stats_html(stats: Mapping[str, ToolStats], *, title: str = "") -> str:
    head = f"<p><b>{html.escape(title)}</b></p>" if title else ""
    if not stats:
        return head + "<p><i>no calls yet</i></p>"
    cells = "".join(f"<th>{h}</th>" for h in _STATS_HEAD)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
        for row in _stats_rows(stats)
    )
    return head + left_aligned(
        f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"
    )


def stats_line(stats: ToolStats | None) -> str:
    """One line for a tool's card: ``12 calls, 1 failed (8%), p50 2.1 ms, p95 9.8 ms``."""
    if stats is None or not (stats.calls or stats.refused):
        return "calls: none yet in this session"
    line = f"calls: {stats.calls}, {stats.errors} failed ({stats.error_rate:.0%})"
    if stats.refused:
        line += f", {stats.refused} refused"
    if stats.cancelled:
        line += f", {stats.cancelled} cancelled"
    return line + f", p50 {_ms(stats.p50)}, p95 {_ms(stats.p95)}"
