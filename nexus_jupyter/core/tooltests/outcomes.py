"""What running cases gave: one :class:`CaseOutcome` per case, a tool's :class:`TestStatus`,
a run's :class:`TestReport`.

A case ``passed``, ``failed`` (the call answered, but not as expected: ``message`` is the first
difference), ``error`` (it could not be judged: the tool is gone, the call timed out, the check
raised) or was ``skipped`` (it needs an approval or a credential that nobody gave: ``message``
says which). A tool's state is the worst of its cases': failed, then error, then passed
(skipped cases do not count against it), then skipped when every case was.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .cases import TestCase

__all__ = ["CaseOutcome", "CaseState", "TestReport", "TestState", "TestStatus", "counted"]

CaseState = Literal["passed", "failed", "error", "skipped"]
#: A tool's state: ``none`` (no cases), ``pending`` (cases not run yet), ``running``, or the
#: result of its last run.
TestState = Literal["none", "pending", "running", "passed", "failed", "error", "skipped"]
_WORST_FIRST: tuple[CaseState, ...] = ("failed", "error", "passed", "skipped")
_STATES = frozenset({"none", "pending", "running", "passed", "failed", "error", "skipped"})


def counted(n: int, state: str) -> str:
    """``"2 passed"``, ``"1 error"``, ``"2 errors"``: how many cases ended in ``state``."""
    return f"{n} {state}s" if state == "error" and n != 1 else f"{n} {state}"


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    """How one case went: its ``state``, what differed (``message``), how long it took and
    the tool version it ran against. ``needs_approval``: skipped because its call needs an
    approval a test run does not give; each face says how to give it (the message does not,
    as it is shown by every face)."""

    case: TestCase
    state: CaseState
    message: str = ""
    duration: float = 0.0
    version: str = ""
    needs_approval: bool = False

    @property
    def ok(self) -> bool:
        return self.state in ("passed", "skipped")

    def describe(self) -> str:
        """``"passed: add.tests.yaml, case 1: add(a=1, b=2)"`` / with the difference."""
        text = f"{self.state}: {self.case.label}"
        return f"{text}: {self.message}" if self.message else text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseOutcome:
        """The outcome :meth:`to_dict` described (a kernel reports its runs this way)."""
        where = str(data.get("where") or "")
        case = TestCase.read(data.get("case") or {}, where=where).located(where)
        state = data.get("state")
        return cls(
            case,
            state if state in _WORST_FIRST else "error",
            str(data.get("message") or ""),
            float(data.get("duration") or 0.0),
            str(data.get("version") or ""),
            bool(data.get("needs_approval")),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "case": self.case.to_dict(),
            "where": self.case.where,
            "label": self.case.label,
            "state": self.state,
            "message": self.message,
            "duration": round(self.duration, 6),
            "version": self.version,
            "needs_approval": self.needs_approval,
        }


def _counts(outcomes: Iterable[CaseOutcome]) -> dict[str, int]:
    counts: dict[str, int] = dict.fromkeys(_WORST_FIRST, 0)
    for outcome in outcomes:
        counts[outcome.state] += 1
    return counts


def overall(outcomes: Sequence[CaseOutcome]) -> TestState:
    """The state of a set of outcomes (see the module docstring)."""
    counts = _counts(outcomes)
    for state in _WORST_FIRST:
        if counts[state]:
            return state
    return "none"


@dataclass(frozen=True, slots=True)
class TestStatus:
    """Where a tool's tests stand (``registry.test_status(name)``).

    ``outcomes`` are those of the last finished run (against ``version``); ``broke`` is the
    first failing case of a run that followed a passing one, so a reload that breaks a good
    tool says which case broke; ``problem`` is why its cases could not be read.
    """

    __test__ = False  # not a pytest test class, whatever its name

    tool: str
    state: TestState = "none"
    cases: int = 0
    outcomes: tuple[CaseOutcome, ...] = ()
    version: str = ""
    finished_at: float | None = None
    broke: CaseOutcome | None = None
    problem: str | None = None

    @property
    def counts(self) -> dict[str, int]:
        return _counts(self.outcomes)

    @property
    def first_problem(self) -> CaseOutcome | None:
        """The first failed case, else the first error."""
        for state in ("failed", "error"):
            found = next((o for o in self.outcomes if o.state == state), None)
            if found is not None:
                return found
        return None

    def summary(self) -> str:
        """One line for badges and listings: ``"3 passed"``, ``"failed: <case>: <diff>"``."""
        if self.problem:
            return f"{self.state}: {self.problem}"
        if self.state == "none":
            return "no tests"
        if self.state == "pending":
            return f"{self.cases} test(s) not run yet"
        if self.state == "running":
            return f"running {self.cases} test(s)"
        counts = self.counts
        parts = [counted(n, state) for state, n in counts.items() if n]
        line = ", ".join(parts) or "no tests"
        first = self.first_problem
        if first is not None:
            line += f"; first: {first.case.label}: {first.message}"
        elif self.state == "skipped" and self.outcomes:
            line += f" ({self.outcomes[0].message})"
        return line

    def with_state(self, state: TestState, cases: int | None = None) -> TestStatus:
        return replace(self, state=state, cases=self.cases if cases is None else cases)

    def row(self) -> dict[str, Any] | None:
        """What a catalog row shows of it (state, summary, counts, the case that broke);
        ``None`` for a tool without cases."""
        if self.state == "none":
            return None
        return {
            "state": self.state,
            "summary": self.summary(),
            "cases": self.cases,
            "counts": self.counts,
            "broke": self.broke.describe() if self.broke is not None else None,
        }

    def to_dict(self) -> dict[str, Any]:
        first = self.first_problem
        return {
            "tool": self.tool,
            "state": self.state,
            "cases": self.cases,
            "counts": self.counts,
            "summary": self.summary(),
            "version": self.version,
            "finished_at": self.finished_at,
            "first_failure": first.to_dict() if first is not None else None,
            "broke": self.broke.to_dict() if self.broke is not None else None,
            "problem": self.problem,
            "outcomes": [o.to_dict() for o in self.outcomes],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestStatus:
        """The status :meth:`to_dict` described (a kernel reports its tools' this way)."""
        state = data.get("state")
        broke = data.get("broke")
        return cls(
            tool=str(data.get("tool") or ""),
            state=state if state in _STATES else "error",
            cases=int(data.get("cases") or 0),
            outcomes=tuple(CaseOutcome.from_dict(o) for o in data.get("outcomes") or ()),
            version=str(data.get("version") or ""),
            finished_at=data.get("finished_at"),
            broke=CaseOutcome.from_dict(broke) if isinstance(broke, Mapping) else None,
            problem=data.get("problem"),
        )

    @classmethod
    def finished(
        cls, tool: str, outcomes: Sequence[CaseOutcome], version: str, before: TestStatus | None
    ) -> TestStatus:
        """The status after a run; ``before`` is the previous status (to tell a break)."""
        state = overall(outcomes)
        # Good before (or broken since it was good): name the case that fails now.
        was_good = before is not None and (before.state == "passed" or before.broke is not None)
        broke = None
        if state in ("failed", "error") and was_good:
            broke = next((o for o in outcomes if not o.ok), None)
        return cls(
            tool=tool,
            state=state,
            cases=len(outcomes),
            outcomes=tuple(outcomes),
            version=version,
            finished_at=time.time(),
            broke=broke,
        )


@dataclass(frozen=True, slots=True)
class TestReport:
    """The outcomes of one run over several tools, in order."""

    __test__ = False  # not a pytest test class, whatever its name

    outcomes: tuple[CaseOutcome, ...] = ()
    #: unreadable cases, each once: case file (or the tools whose cases it holds) -> why
    problems: dict[str, str] = field(default_factory=dict)
    duration: float = 0.0

    @property
    def counts(self) -> dict[str, int]:
        return _counts(self.outcomes)

    @property
    def ok(self) -> bool:
        """Whether nothing failed, errored or was unreadable."""
        return not self.problems and all(o.ok for o in self.outcomes)

    def summary(self) -> str:
        counts = self.counts
        parts = [counted(n, state) for state, n in counts.items() if n]
        if self.problems:
            parts.append(f"{len(self.problems)} unreadable case file(s)")
        return (", ".join(parts) or "no test cases") + f" in {self.duration:.2f} s"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "counts": self.counts,
            "summary": self.summary(),
            "duration": round(self.duration, 6),
            "problems": dict(self.problems),
            "outcomes": [o.to_dict() for o in self.outcomes],
        }
