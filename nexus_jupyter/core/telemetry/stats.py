"""Per-tool call statistics, kept by the call pipeline at a cost of well under a microsecond
per call: how many calls, how many failed, how many were refused before running, and the
latency percentiles of the recent ones.

>>> stats = CallStats()
>>> stats.record("add", 0.002, False); stats.record("add", 0.004, True)
>>> row = stats.snapshot()["add"]
>>> (row.calls, row.errors, row.error_rate)
(2, 1, 0.5)

Percentiles are over each tool's last :data:`WINDOW` calls (a ring buffer: memory stays bounded
however long the process runs); counts are over the whole life of the registry. Durations are
the pipeline's, from admission to result (what a caller waits, the tool's own time included).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

__all__ = ["WINDOW", "CallStats", "ToolStats", "parse_time", "stats_from_calls"]

#: Calls per tool whose durations the percentiles are computed over.
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

    @property
    def error_rate(self) -> float:
        """Failed calls over calls that ran (refusals are not calls that ran)."""
        return self.errors / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "calls": self.calls,
            "errors": self.errors,
            "refused": self.refused,
            "error_rate": round(self.error_rate, 4),
            "p50_ms": _ms(self.p50),
            "p95_ms": _ms(self.p95),
            "max_ms": _ms(self.max),
            "last_call": self.last_call,
        }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


class _Counter:
    """One tool's running figures (mutated under :class:`CallStats`' lock)."""

    __slots__ = ("calls", "durations", "errors", "last", "next", "refused")

    def __init__(self) -> None:
        self.calls = 0
        self.errors = 0
        self.refused = 0
        self.durations: list[float] = []
        self.next = 0  # where the next duration goes once the window is full
        self.last: float | None = None


def _percentile(ordered: list[float], share: float) -> float:
    """Nearest-rank percentile of an ordered, non-empty list."""
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


class CallStats:
    """The figures of every tool a registry has called (see the module docstring)."""

    def __init__(self) -> None:
        self._tools: dict[str, _Counter] = {}
        self._lock = threading.Lock()

    def record(self, tool: str, duration: float, failed: bool) -> None:
        """A call of ``tool`` that ran for ``duration`` seconds (``failed``: it answered with
        an error, timed out or was cancelled)."""
        with self._lock:
            counter = self._tools.get(tool)
            if counter is None:
                counter = self._tools[tool] = _Counter()
            counter.calls += 1
            if failed:
                counter.errors += 1
            durations = counter.durations
            if len(durations) < WINDOW:
                durations.append(duration)
            else:
                durations[counter.next] = duration
                counter.next = (counter.next + 1) % WINDOW
            counter.last = time.time()

    def refuse(self, tool: str) -> None:
        """A call of ``tool`` that was refused before it ran (policy, validation, ...)."""
        with self._lock:
            counter = self._tools.get(tool)
            if counter is None:
                counter = self._tools[tool] = _Counter()
            counter.refused += 1
            counter.last = time.time()

    def snapshot(self) -> dict[str, ToolStats]:
        """Every called tool's figures now, by name (sorted)."""
        with self._lock:
            copied = {
                name: (c.calls, c.errors, c.refused, sorted(c.durations), c.last)
                for name, c in self._tools.items()
            }
        return {
            name: _figures(name, calls, errors, refused, ordered, last)
            for name, (calls, errors, refused, ordered, last) in sorted(copied.items())
        }

    def reset(self) -> None:
        with self._lock:
            self._tools.clear()


def stats_from_calls(calls: Iterable[Mapping[str, Any]]) -> dict[str, ToolStats]:
    """Figures from recorded calls (audit-log lines: ``tool``, ``decision``, ``duration``,
    ``error``, ``time``), exact over all of them: a call is a line whose decision is
    ``allow``; any other decision is a refusal."""
    counts: dict[str, _Counter] = {}
    for line in calls:
        tool = line.get("tool")
        if not isinstance(tool, str):
            continue
        counter = counts.get(tool)
        if counter is None:
            counter = counts[tool] = _Counter()
        if line.get("decision") == "allow":
            counter.calls += 1
            counter.errors += line.get("error") is not None
            duration = line.get("duration")
            if isinstance(duration, int | float):
                counter.durations.append(float(duration))
        else:
            counter.refused += 1
        counter.last = parse_time(line.get("time")) or counter.last
    return {
        name: _figures(name, c.calls, c.errors, c.refused, sorted(c.durations), c.last)
        for name, c in sorted(counts.items())
    }


def _figures(
    tool: str, calls: int, errors: int, refused: int, ordered: list[float], last: float | None
) -> ToolStats:
    return ToolStats(
        tool=tool,
        calls=calls,
        errors=errors,
        refused=refused,
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
