"""Per-tool call statistics, kept by the call pipeline at a cost of well under a microsecond
per call: how many calls, how many failed, how many were cancelled (by their caller: not
failures), how many were refused before running, and the latency percentiles of the recent
ones.

>>> stats = CallStats()
>>> stats.record("add", 0.002, False); stats.record("add", 0.004, True)
>>> row = stats.snapshot()["add"]
>>> (row.calls, row.errors, row.error_rate)
(2, 1, 0.5)
>>> stats.counts()
{'add': (2, 0)}

Figures are kept per tool *definition*, a name and the source that defines it, and summed by
name when read (:meth:`CallStats.snapshot`): two notebooks that both define ``add`` are two
rows of :meth:`CallStats.by_source`, one row of the snapshot.

Percentiles are over each definition's last :data:`WINDOW` calls (a ring buffer: however many
calls, a definition holds at most that many durations; the rows grow only with the
definitions ever called, and a name's row merges the windows of all its definitions, those
of sources since gone included); counts are over the whole life of the registry. Durations
are the pipeline's, from admission to result (what a caller waits, the tool's own time
included).
"""

from __future__ import annotations

import itertools
import math
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..tools.context import TEST_CLIENT

__all__ = ["WINDOW", "CallStats", "ToolStats", "parse_time", "stats_from_calls", "stats_key"]

#: Calls per definition (a tool name and its source) whose durations the percentiles are
#: computed over.
WINDOW = 1000


@dataclass(frozen=True, slots=True)
class ToolStats:
    """One tool's figures at the time they were read."""

    tool: str
    calls: int
    errors: int
    refused: int
    p50: float | None
    p95: float | None
    max: float | None
    last_call: float | None  # UNIX time
    cancelled: int = 0  # calls their caller cancelled (counted in calls, not in errors)

    @property
    def error_rate(self) -> float:
        """Failed calls over calls that ran (refusals are not calls that ran; a cancelled
        call ran, but did not fail)."""
        return self.errors / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "calls": self.calls,
            "errors": self.errors,
            "refused": self.refused,
            "cancelled": self.cancelled,
            "error_rate": round(self.error_rate, 4),
            "p50_ms": _ms(self.p50),
            "p95_ms": _ms(self.p95),
            "max_ms": _ms(self.max),
            "last_call": self.last_call,
        }


def stats_key(name: str, source: str) -> str:
    """The key of one definition's figures in :attr:`CallStats.counters`: what
    :attr:`Tool.stats_key <nexus_jupyter.core.tools.tool.Tool.stats_key>` holds (``source``
    empty: a call whose definition is not known, such as one refused over a conflict)."""
    return f"{name}\x1f{source}"


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


class _Counter:
    """One definition's running figures (a tool name and the source that defines it), updated
    without a lock: ``next()`` on an
    ``itertools.count`` and ``append`` on a bounded ``deque`` are each one C call, atomic under
    the GIL (a lock cost four times as much per call)."""

    __slots__ = ("calls", "cancelled", "durations", "errors", "last", "refused", "source", "tool")

    def __init__(self, tool: str, source: str) -> None:
        self.tool = tool
        self.source = source
        self.calls = itertools.count(1)
        self.errors = itertools.count(1)
        self.cancelled = itertools.count(1)
        self.refused = itertools.count(1)
        self.durations: deque[float] = deque(maxlen=WINDOW)
        self.last: float | None = None  # perf_counter() of the last call


def _count(counter: itertools.count[int]) -> int:
    """How many times ``next()`` was called on ``counter`` (read without consuming it)."""
    return int(repr(counter)[6:-1]) - 1  # "count(N)": N is the next value


def _percentile(ordered: list[float], share: float) -> float:
    """Nearest-rank percentile of an ordered, non-empty list."""
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


class CallStats:
    """The figures of every tool a registry has called (see the module docstring)."""

    def __init__(self) -> None:
        #: :func:`stats_key` -> one definition's running figures; the call pipeline updates
        #: them in place (see :meth:`record` for what a call does, written out there to save
        #: a call frame)
        self.counters: dict[str, _Counter] = {}
        self._names: set[str] = set()

    def counter(self, key: str, tool: str, source: str) -> _Counter:
        """The running figures under ``key`` (``stats_key(tool, source)``), made on its
        first call."""
        counter = self.counters.get(key)
        if counter is None:
            counter = self.counters.setdefault(key, _Counter(tool, source))  # one if two race
            self._names.add(tool)
        return counter

    def has(self, tool: str) -> bool:
        """Whether any call of a tool named ``tool`` was counted."""
        return tool in self._names

    def record(
        self,
        tool: str,
        duration: float,
        failed: bool,
        at: float | None = None,
        *,
        cancelled: bool = False,
        source: str = "",
    ) -> None:
        """A call of ``tool`` (as ``source`` defines it) that ran for ``duration`` seconds
        (``failed``: it answered with an error or timed out; ``cancelled``: its caller
        cancelled it); ``at`` is its ``time.perf_counter()``."""
        key = stats_key(tool, source)
        counter = self.counters.get(key) or self.counter(key, tool, source)
        counter.durations.append(duration)
        next(counter.calls)
        if cancelled:
            next(counter.cancelled)
        elif failed:
            next(counter.errors)
        counter.last = at

    def refuse(self, tool: str, source: str = "") -> None:
        """A call of ``tool`` (as ``source`` defines it; ``""``: before a definition was
        chosen) that was refused before it ran (policy, validation, ...)."""
        counter = self.counter(stats_key(tool, source), tool, source)
        next(counter.refused)
        counter.last = time.perf_counter()

    def snapshot(self) -> dict[str, ToolStats]:
        """Every called tool's figures now, by name (sorted; the definitions of one name
        summed)."""
        grouped: dict[str, list[_Counter]] = {}
        for c in self.counters.copy().values():
            grouped.setdefault(c.tool, []).append(c)
        return {name: _merged(name, grouped[name]) for name in sorted(grouped)}

    def by_source(self, tool: str) -> dict[str, ToolStats]:
        """The figures of each definition of ``tool`` that was called, by source (``""``:
        calls refused before a definition was chosen, such as one over a conflict)."""
        return {
            c.source: _merged(tool, [c])
            for c in sorted(self.counters.copy().values(), key=lambda c: c.source)
            if c.tool == tool
        }

    def counts(self) -> dict[str, tuple[int, int]]:
        """``(calls, refusals)`` of every called tool, read without the percentiles (cheap
        enough to poll: a face that shows counts can tell which tools were called since)."""
        out: dict[str, tuple[int, int]] = {}
        for c in self.counters.copy().values():
            calls, refused = out.get(c.tool, (0, 0))
            out[c.tool] = (calls + _count(c.calls), refused + _count(c.refused))
        return out

    def reset(self) -> None:
        self.counters = {}
        self._names = set()


def _merged(name: str, counters: list[_Counter]) -> ToolStats:
    """The figures of ``counters`` (definitions of one name) as one row, read now."""
    now_wall, now_perf = time.time(), time.perf_counter()
    lasts = [c.last for c in counters if c.last is not None]
    last = None if not lasts else now_wall - (now_perf - max(lasts))
    durations: list[float] = []
    for c in counters:
        durations.extend(_copy(c.durations))
    return _figures(
        name,
        sum(_count(c.calls) for c in counters),
        sum(_count(c.errors) for c in counters),
        sum(_count(c.refused) for c in counters),
        sorted(durations),
        last,
        sum(_count(c.cancelled) for c in counters),
    )


def _copy(values: deque[float]) -> list[float]:
    for _ in range(10):
        try:
            return list(values)
        except RuntimeError:  # appended to while copied (not seen in CPython: one C call)
            continue
    return []


def stats_from_calls(calls: Iterable[Mapping[str, Any]]) -> dict[str, ToolStats]:
    """Figures from recorded calls (audit-log lines: ``tool``, ``decision``, ``duration``,
    ``error``, ``error_type``, ``time``), exact over all of them: a call is a line whose
    decision is ``allow``; any other decision is a refusal; a call whose ``error_type`` is
    ``CancelledError`` was cancelled by its caller, not failed (lines written before the log
    had ``error_type`` count as failures). Lines of test runs (client ``test``) are left out,
    as :class:`CallStats` leaves them out."""
    # tool -> [calls, errors, refused, durations, last time, cancelled]
    found: dict[str, list[Any]] = {}
    for line in calls:
        tool = line.get("tool")
        if not isinstance(tool, str) or line.get("client") == TEST_CLIENT:
            continue  # a test run's calls are audited but are not use
        row = found.setdefault(tool, [0, 0, 0, [], None, 0])
        if line.get("decision") == "allow":
            row[0] += 1
            if line.get("error") is not None:
                row[5 if line.get("error_type") == "CancelledError" else 1] += 1
            duration = line.get("duration")
            if isinstance(duration, int | float):
                row[3].append(float(duration))
        else:
            row[2] += 1
        row[4] = parse_time(line.get("time")) or row[4]
    return {
        name: _figures(name, calls_, errors, refused, sorted(durations), last, cancelled)
        for name, (calls_, errors, refused, durations, last, cancelled) in sorted(found.items())
    }


def _figures(
    tool: str,
    calls: int,
    errors: int,
    refused: int,
    ordered: list[float],
    last: float | None,
    cancelled: int = 0,
) -> ToolStats:
    return ToolStats(
        tool=tool,
        calls=calls,
        errors=errors,
        refused=refused,
        cancelled=cancelled,
        p50=_percentile(ordered, 0.5) if ordered else None,
        p95=_percentile(ordered, 0.95) if ordered else None,
        max=ordered[-1] if ordered else None,
        last_call=last,
    )


def parse_time(value: Any) -> float | None:
    """An audit line's ISO time as UNIX time (``None`` when it is not one)."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None
