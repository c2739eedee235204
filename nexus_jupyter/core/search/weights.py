"""The weights and pool sizes of :class:`~.index.SearchIndex`'s stages, with how each was
chosen (on the toolret dev query sets only; ``benchmarks/search_quality.py`` and
``benchmarks/search_cv.py`` reproduce the figures)."""

from __future__ import annotations

__all__ = [
    "ACTION_WEIGHT",
    "CLOSE_WAIT_S",
    "FEEDBACK_POOL",
    "FUSION_POOL",
    "INTENT_WEIGHT",
    "LENGTH_PRIOR",
    "NAME_BONUS",
    "POOL",
    "SLOT_WEIGHT",
]

POOL = 20  # keyword candidates re-scored with the name bonus and checked for confidence
# (10, 20, 30 and 50 gave identical toolret figures; fewer rows are cheaper to rank).
# Candidates from each ranking before fusion; a tool outside the keyword pool counts as no
# keyword match, so a wider pool lets more good keyword evidence in (toolret MRR +0.006 from
# 50 to 100; hybrid queries are dominated by the embedding anyway).
FUSION_POOL = 100
# Tools ranked by the feedback words: 50 and 100 gave identical figures on both dev query
# sets (20 lost one dev query at rank 1), and a shorter top-k is cheaper at 10,000 tools.
FEEDBACK_POOL = 50
#: How long closing waits for the warm-up's current chunk of embeddings.
CLOSE_WAIT_S = 3.0
NAME_BONUS = 0.3  # added to relative BM25 when the query contains every word of a tool's name
# How well a tool fits the request, added to the relative keyword score and to the fused
# hybrid score: the share of the query's argument values it has parameters for
# (:mod:`.slots`), +1/-1 when query and tool agree/disagree on read or write, and +1
# when they name the same kind of change (create, change or delete: :mod:`.intent`),
# each times its weight per mode.
SLOT_WEIGHT = {"keyword": 0.2, "hybrid": 0.75}
# Terms added to every tool's length in BM25's length normalisation (:class:`.fts.KeywordEngine`):
# FTS5 fixes b at 0.75, which held short descriptions too strongly against long ones. Chosen on
# the two dev query sets (``benchmarks/search_cv.py``, pooled 190 servable): keyword recall@1
# 0.638 -> 0.678 and MRR 0.724 -> 0.746 at 10, 0.678 / 0.745 at 20 and 0.667 / 0.739 at 30
# (recall@5 0.846 -> 0.848-0.853); each half of each set gained or held. Hybrid mode keeps
# plain BM25: its fusion weights were set on it, and 10 there cost 2 points of dev recall@1.
LENGTH_PRIOR = {"keyword": 10, "hybrid": 0}
INTENT_WEIGHT = {"keyword": 0.2, "hybrid": 0.75}
ACTION_WEIGHT = {"keyword": 0.2, "hybrid": 0.75}
