"""Retrieval evals: does search put the right tool first for what people ask?

>>> report = evaluate(registry, [{"query": "add two numbers", "relevant": ["add"]}])  # doctest: +SKIP
>>> report.metrics["recall@1"], report.misses                                        # doctest: +SKIP

For labelled queries (:mod:`.queries`) and a ranker (the registry's search, in the mode it is
configured with or another), the figures are:

- ``recall@1`` / ``recall@5``: the share of servable queries with an acceptable tool first /
  in the first five;
- ``MRR``: the mean reciprocal rank of the first acceptable tool in the first ten (0 when
  none is there), over servable queries;
- ``unservable_no_hits``: the share of unservable queries (``relevant: []``) that get no hits,
  as they should (NaN when there are none);
- ``servable_no_hits``: the share of servable queries wrongly left without hits;
- ``hits``: the mean number of hits per query.

**Confusions**: a servable query whose first hit is not acceptable counts once for each
(acceptable tool, winner) pair; two tools that win each other's queries are a *confusable
pair*: their descriptions do not tell them apart. ``benchmarks/search_quality.py`` computes
its figures with :func:`score`, so an eval of the same catalog and queries reproduces them.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .queries import LabelledQuery, coerce_queries, load_queries

if TYPE_CHECKING:
    from ..registry.registry import Registry

__all__ = [
    "METRICS",
    "EvalReport",
    "QueryResult",
    "Ranker",
    "evaluate",
    "evaluate_ranker",
    "miss_lines",
    "score",
]

#: A function from a query to tool names, best first.
Ranker = Callable[[str], list[str]]
#: The figures of :func:`score`, in the order reports show them.
METRICS = ("recall@1", "recall@5", "MRR", "unservable_no_hits", "servable_no_hits", "hits")
_DEPTH = 10  # ranks looked at (MRR@10)


def _as_dicts(queries: Iterable[Any]) -> list[dict[str, Any]]:
    return [q.to_dict() if isinstance(q, LabelledQuery) else dict(q) for q in queries]


def score(rank: Ranker, queries: Iterable[Any]) -> dict[str, float]:
    """The figures of the module docstring for ``rank`` over ``queries`` (mappings with
    ``query`` and ``relevant``, or :class:`LabelledQuery`)."""
    return _score([(q, rank(q["query"])) for q in _as_dicts(queries)])


def _score(ranked: Sequence[tuple[dict[str, Any], list[str]]]) -> dict[str, float]:
    r1 = r5 = rr = servable = no_hit_servable = unservable = no_hit_unservable = 0.0
    shown = 0
    for q, got in ranked:
        shown += len(got)
        relevant = set(q["relevant"])
        if not relevant:
            unservable += 1
            no_hit_unservable += not got
            continue
        servable += 1
        no_hit_servable += not got
        first = next((i for i, name in enumerate(got[:_DEPTH]) if name in relevant), None)
        if first is not None:
            r1 += first == 0
            r5 += first < 5
            rr += 1.0 / (first + 1)
    return {
        "recall@1": r1 / max(servable, 1),
        "recall@5": r5 / max(servable, 1),
        "MRR": rr / max(servable, 1),
        "unservable_no_hits": no_hit_unservable / unservable if unservable else float("nan"),
        "servable_no_hits": no_hit_servable / max(servable, 1),
        "hits": shown / max(len(ranked), 1),
    }


def miss_lines(rank: Ranker, queries: Iterable[Any]) -> list[str]:
    """One line per miss: a servable query with no acceptable tool in the first five, or an
    unservable query that got hits."""
    report = evaluate_ranker(rank, queries)
    return [r.describe() for r in report.misses]


@dataclass(frozen=True, slots=True)
class QueryResult:
    """What search gave for one labelled query: ``got`` (best first) and the rank (0-based)
    of the first acceptable tool in the first ten, ``None`` when it is not there."""

    query: LabelledQuery
    got: tuple[str, ...]
    first: int | None

    @property
    def missed(self) -> bool:
        """A servable query without an acceptable tool in the first five, or an unservable
        one with hits."""
        if not self.query.servable:
            return bool(self.got)
        return self.first is None or self.first >= 5

    def describe(self) -> str:
        if not self.query.servable:
            return f"  unservable {self.query.query[:60]!r} -> {list(self.got[:2])}"
        return (
            f"  {self.query.query[:70]!r} -> {list(self.got[:3])} "
            f"(want {list(self.query.relevant[:2])})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.query.to_dict(),
            "got": list(self.got),
            "rank": None if self.first is None else self.first + 1,
            "missed": self.missed,
        }


@dataclass(frozen=True)
class EvalReport:
    """The figures, per-query results and confusions of one eval."""

    results: tuple[QueryResult, ...]
    metrics: dict[str, float]
    mode: str = ""
    tools: int = 0
    duration: float = 0.0
    confusions: tuple[tuple[str, str, int], ...] = field(default=())

    @property
    def misses(self) -> list[QueryResult]:
        return [r for r in self.results if r.missed]

    @property
    def confusable_pairs(self) -> list[tuple[str, str, int, int]]:
        """``(a, b, a's queries b won, b's queries a won)`` for tools that win each other's
        queries, most confused first."""
        counts = {(want, won): n for want, won, n in self.confusions}
        pairs = []
        for (a, b), n in counts.items():
            back = counts.get((b, a), 0)
            if back and a < b:
                pairs.append((a, b, n, back))
        return sorted(pairs, key=lambda p: (-(p[2] + p[3]), p[0], p[1]))

    @property
    def servable(self) -> int:
        return sum(1 for r in self.results if r.query.servable)

    def summary(self) -> str:
        m = self.metrics
        unservable = m["unservable_no_hits"]
        empty = "n/a" if math.isnan(unservable) else f"{unservable:.0%}"
        return (
            f"{len(self.results)} queries ({self.servable} servable) against {self.tools} tools"
            f"{f', {self.mode} search' if self.mode else ''}: recall@1 {m['recall@1']:.3f}, "
            f"recall@5 {m['recall@5']:.3f}, MRR {m['MRR']:.3f}; unservable left empty {empty}, "
            f"servable left empty {m['servable_no_hits']:.1%}; {len(self.misses)} "
            f"{'miss' if len(self.misses) == 1 else 'misses'}, "
            f"{len(self.confusable_pairs)} confusable pair(s)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "tools": self.tools,
            "queries": len(self.results),
            "servable": self.servable,
            "metrics": {
                k: (None if math.isnan(v) else round(v, 4)) for k, v in self.metrics.items()
            },
            "misses": [r.to_dict() for r in self.misses],
            "confusable_pairs": [
                {"a": a, "b": b, "a_queries_won_by_b": n, "b_queries_won_by_a": back}
                for a, b, n, back in self.confusable_pairs
            ],
            "confusions": [
                {"relevant": want, "winner": won, "count": n} for want, won, n in self.confusions
            ],
            "results": [r.to_dict() for r in self.results],
            "duration": round(self.duration, 3),
        }


def evaluate_ranker(
    rank: Ranker, queries: Iterable[Any], *, mode: str = "", tools: int = 0
) -> EvalReport:
    """An :class:`EvalReport` for any ranker (see the module docstring)."""
    started = time.perf_counter()
    labelled = coerce_queries(list(queries))
    ranked = [(q, list(rank(q.query))) for q in labelled]
    results = []
    confusions: Counter[tuple[str, str]] = Counter()
    for q, got in ranked:
        relevant = set(q.relevant)
        first = next((i for i, name in enumerate(got[:_DEPTH]) if name in relevant), None)
        results.append(QueryResult(q, tuple(got[:_DEPTH]), first))
        if relevant and got and got[0] not in relevant:
            for want in q.relevant:
                confusions[(want, got[0])] += 1
    metrics = _score([(q.to_dict(), got) for q, got in ranked])
    ordered = sorted(confusions.items(), key=lambda kv: (-kv[1], kv[0]))
    return EvalReport(
        results=tuple(results),
        metrics=metrics,
        mode=mode,
        tools=tools,
        duration=time.perf_counter() - started,
        confusions=tuple((want, won, n) for (want, won), n in ordered),
    )


def evaluate(
    registry: Registry,
    queries: Iterable[Any] | str | PathLike[str],
    *,
    mode: str | None = None,
    limit: int = _DEPTH,
) -> EvalReport:
    """How well ``registry``'s search answers ``queries``: a list of ``{query, relevant}``
    mappings or :class:`LabelledQuery`, or the path of a JSON or YAML file of them.

    ``mode`` is ``"keyword"`` or ``"hybrid"`` to rank with that mode and the registry's
    other search settings (threshold, signals, word lists), or ``None`` for the registry's
    own search as configured. Tools are ranked exactly as every face ranks them
    (``registry.search``).
    """
    from ..search.index import SearchIndex
    from ..search.options import SearchOptions

    if isinstance(queries, str | PathLike):
        queries = load_queries(Path(queries))
    index = registry.search_index
    own = True
    if mode is not None and mode != index.mode:
        options = SearchOptions.coerce(registry.search_mode).with_threshold(
            registry.search_threshold
        )
        index = SearchIndex(replace(options, mode=mode))
        index.update(upserts=[e.spec for e in registry.entries()])
        own = False
    try:

        def rank(query: str) -> list[str]:
            if own:
                return [h.name for h in registry.search(query, limit=limit)]
            return [h.name for h in index.search(query, limit=limit)]

        return evaluate_ranker(rank, queries, mode=index.mode, tools=len(registry.names()))
    finally:
        if not own:
            index.close()
