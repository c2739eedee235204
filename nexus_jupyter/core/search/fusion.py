"""Hybrid ranking: fuse the keyword ranking with sentence-embedding similarity.

The fused score of a tool is the z-score of its cosine similarity to the query among *all*
tools, plus :data:`KEYWORD_WEIGHT` times its keyword score relative to the best keyword
score for the query. Scores, not ranks: a clear keyword winner (a rare word in a tool's
name) keeps its lead over a close embedding race and vice versa, which reciprocal-rank
fusion throws away (Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval",
2023). The z-score puts cosines on a per-query scale: how far a tool stands out from the
catalogue, not the raw value, which drifts with query length and wording.

Measured on the toolret dev queries (both halves, see ``benchmarks/search_quality.py``):
min-max blends and RRF (k = 10..60, weights 0.5..0.7) were 1-4 points of MRR below this;
the weight 2 was the best of 1..4 on both halves.

Dense-to-sparse feedback (:func:`expansion_terms`): the words that best distinguish the few
tools the embedding ranks highest are searched as a second keyword query, and that ranking is
added with weight :data:`FEEDBACK_WEIGHT`. It lends the keyword side the vocabulary the query
lacks (a query about a "folder" gains the "directory" its neighbours share). Seeding the feedback
from the keyword ranking itself (classic RM3) or from the fused ranking lost MRR on one half.

Measured on toolret and dropped (MRR of this fusion then, before argument slots and intent:
0.781): Rocchio feedback on the query
vector (beta 0.2-1.0 over the 2-8 nearest tools: 0.706-0.764); each description sentence
and each parameter description as extra views (0.763-0.789, recall@5 no better, and fewer
unservable queries rejected); embedding the query without its argument values (ids, paths,
quoted text: 0.767-0.777); a read/write intent axis (the direction from write tools to
read-only tools, by ``readOnlyHint``) matched against the query (0.755-0.780); z-scoring each
view before the max (0.762). Most remaining misses need reasoning a 6-layer model does not
do (a verb that names the outcome of a review rather than the review tool's own words).
A query-side server-name match (the query names a tool's server) added nothing (0.802 with
slots; the embedding already weighs the name). Scaling the cosine z-scores down when the best
cosine is low (a weak embedding race against a clear keyword winner; 2026-11-27, both dev
sets) moved recall@1 up on one set and down on the other, pooled 0.716-0.721 against 0.726.
Tried 2026-11-28 on both dev sets and dropped, recall@1 dev / dev2 against 0.789 / 0.680: the
query vector blended with the vectors of its clauses (split at punctuation and "then", "so",
"because"; the first clause, the mean or a decaying mean, weight 0.3-1.0): 0.756-0.778 /
0.660-0.700, one set up where the other went down; re-ranking the fused top 20 by adding the
keyword coverage of the query (weight 0.5-4): 0.756-0.800 / 0.660-0.680, within a query of
the shipped ranking at its best.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = [
    "FEEDBACK_DOCS",
    "FEEDBACK_TERMS",
    "FEEDBACK_WEIGHT",
    "KEYWORD_WEIGHT",
    "dense_ranking",
    "expansion_terms",
    "fuse",
]

#: Weight of the relative keyword score against one standard deviation of cosine similarity.
KEYWORD_WEIGHT = 2.0
#: Dense-to-sparse feedback: from the ``FEEDBACK_DOCS`` most similar tools, the
#: ``FEEDBACK_TERMS`` most distinctive words, whose relative keyword score counts
#: ``FEEDBACK_WEIGHT``. A small gain: on toolret, 4 x 5 x 0.5 lifts MRR 0.768 -> 0.781 and
#: recall@1 by 2 queries (both halves gain), recall@5 unchanged; over the grid 3-5 docs x 3-7
#: words x 0.3-0.7 MRR spans 0.753-0.783 (median 0.771), and more words or weight start to lose.
FEEDBACK_DOCS = 4
FEEDBACK_TERMS = 5
FEEDBACK_WEIGHT = 0.5


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
    import numpy as np

    out: list[tuple[str, float]] = []
    # A partial sort is enough unless a selective filter rejects most of the head.
    for width in (pool * 4 if keep is not None else pool, len(sims)):
        width = min(width, len(sims))
        head = sims.argpartition(-width)[-width:] if width < len(sims) else np.arange(len(sims))
        out = []
        for i in head[np.argsort(-sims[head], kind="stable")].tolist():
            if keep is None or keep(names[i]):
                out.append((names[i], float(sims[i])))
                if len(out) >= pool:
                    return out
        if width == len(sims):
            break
    return out


def expansion_terms(
    docs: Iterable[str],
    query_terms: Iterable[str],
    idf: Callable[[list[str]], dict[str, float]],
    count: int,
) -> list[str]:
    """The ``count`` words of ``docs`` (term-split tool texts) that best describe them and are
    not in the query: by the number of docs holding the word times its IDF (ties by word)."""
    held: dict[str, int] = {}
    for doc in docs:
        for word in set(doc.split()):
            held[word] = held.get(word, 0) + 1
    asked = set(query_terms)
    words = [w for w in held if w not in asked]
    weight = idf(words)
    return sorted(words, key=lambda w: (-held[w] * weight[w], w))[:count]
