"""Hybrid ranking: fuse the keyword ranking with sentence-embedding similarity.

The fused score of a tool is the z-score of its cosine similarity to the query among *all*
tools, plus :data:`KEYWORD_WEIGHT` times its keyword score relative to the best keyword
score for the query. Scores, not ranks: a clear keyword winner (a rare word in a tool's
name) keeps its lead over a close embedding race and vice versa, which reciprocal-rank
fusion throws away (Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval",
2023). The z-score puts cosines on a per-query scale: how far a tool stands out from the
catalogue, not the raw value, which drifts with query length and wording.

Measured on the toolret queries (both halves, see ``benchmarks/search_quality.py``):
min-max blends and RRF (k = 10..60, weights 0.5..0.7) were 1-4 points of MRR below this;
the weight 2 was the best of 1..4 on both halves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["KEYWORD_WEIGHT", "dense_ranking", "fuse"]

#: Weight of the relative keyword score against one standard deviation of cosine similarity.
KEYWORD_WEIGHT = 2.0


def fuse(
    keyword: Sequence[tuple[str, float]], cosine: dict[str, float], mean: float, std: float
) -> dict[str, float]:
    """Fused scores of every tool in ``keyword`` or ``cosine``.

    ``keyword`` is ``(name, score)`` best first; ``cosine`` maps names to their similarity;
    ``mean``/``std`` describe the similarities of all tools for this query.
    """
    best = max((s for _, s in keyword), default=0.0) or 1.0
    kw = {name: score / best for name, score in keyword}
    std = std or 1.0
    names = kw.keys() | cosine.keys()
    return {n: (cosine.get(n, mean) - mean) / std + KEYWORD_WEIGHT * kw.get(n, 0.0) for n in names}


def dense_ranking(
    sims: Any, names: Sequence[str], pool: int, keep: Callable[[str], bool] | None
) -> list[tuple[str, float]]:
    """The ``pool`` most similar names that ``keep`` accepts, as ``(name, cosine)``.

    ``sims`` is a numpy vector aligned with ``names``.
    """
    out: list[tuple[str, float]] = []
    # A partial sort is enough unless a selective filter rejects most of the head.
    for width in (pool * 4, len(sims)):
        width = min(width, len(sims))
        head = sims.argpartition(-width)[-width:] if width < len(sims) else range(len(sims))
        out = []
        for i in sorted(head, key=lambda i: -sims[i]):
            if keep is None or keep(names[i]):
                out.append((names[i], float(sims[i])))
                if len(out) >= pool:
                    return out
        if width == len(sims):
            break
    return out
