"""The last stage of search: which candidates are confident enough to be hits.

Every candidate carries a ranking score (the order of the stages before) and a confidence in
[0, 1] on one scale for every query of a mode: in keyword mode the share of the query's IDF
mass its fields contain, in hybrid mode the cosine similarity of the query to its nearest
embedded view. :func:`confident` keeps, in ranking order, the candidates whose confidence
reaches the threshold and whose ranking score is within :data:`MARGINS` of the best
candidate's, so a query one tool fits gets that tool alone; :func:`scored_down` lowers every
confidence of a query that names a service no tool mentions (:data:`SERVICE_PENALTY`).

Thresholds, margins and penalties were chosen on the toolret dev queries only
(``benchmarks/search_quality.py``). The thresholds by cross-validation
(``benchmarks/search_cv.py``): in each fold the highest that leaves at most 3% of the other
folds' servable queries without hits and costs them no recall@5 (a hit below the threshold is
dropped). That is 0.2 in hybrid mode (60% of unservable dev queries empty, 1.1% of servable;
0.25 empties 70% / 1.1% but drops relevant hits: dev recall@5 0.922 -> 0.889), and 0.1 or
0.15 in keyword mode, which give the same figures (0.2 empties 7.8% of servable). The
margins cut the mean page from 9 hits to about 5 (keyword) and 7 (hybrid) with no other
change; the penalty leaves 5 (keyword) and 6 (hybrid) of the 7 dev queries that name such a
service with no hits (the one left in hybrid asks to pay an invoice, which the catalogue's
invoice tool does elsewhere).

>>> [c.name for c in confident([Candidate("a", 2.0, 0.6), Candidate("b", 1.8, 0.3)], 0.2, 1.0)]
['a', 'b']
>>> [c.confidence for c in confident([Candidate("a", 2, 0.6), Candidate("b", 1.8, 0.7)], 0.2, 1)]
[0.6, 0.6]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "DEFAULT_THRESHOLDS",
    "INTENT_PENALTY",
    "MARGINS",
    "SERVICE_PENALTY",
    "SHARES",
    "UNREAD_PENALTY",
    "Candidate",
    "confident",
    "scored_down",
]

#: Default confidence each result must reach, per resolved mode.
DEFAULT_THRESHOLDS: dict[str, float] = {"keyword": 0.1, "hybrid": 0.2}
#: How far below the best candidate's ranking score a hit may fall, per mode: in relative-BM25
#: units (keyword) and in standard deviations of cosine (hybrid). Chosen by cross-validation
#: (``benchmarks/search_cv.py``, the narrowest that costs the training folds no recall@5): on
#: the toolret dev queries alone hybrid chose 3 with the fp32 encoder and 4 with the int8-block
#: and the smoothed int8 ones; on them pooled with the second dev set 4
#: (recall@5 0.900 -> 0.911 on the pooled 190 servable queries, 5.8 -> 7.1 hits per query).
MARGINS: dict[str, float] = {"keyword": 0.5, "hybrid": 4.0}
#: The share of the best hit's confidence every other hit must reach, per mode, so that next
#: to a tool that fits the request well (an exact name scores 1) near neighbours that only
#: resemble it are not shown. The largest share that cost neither toolret dev set any recall@5
#: (0.3, 0.4, 0.5 and 0.6 tried; keyword 0.4 and hybrid 0.5 each lost one query's relevant
#: hit); on those catalogues it rarely acts, since their best confidences are rarely high.
SHARES: dict[str, float] = {"keyword": 0.3, "hybrid": 0.4}
#: Confidence taken off every candidate of a query that names a service no tool mentions: a
#: hit then needs 0.3 keyword coverage or 0.45 cosine with the default thresholds.
SERVICE_PENALTY: dict[str, float] = {"keyword": 0.2, "hybrid": 0.25}
#: Confidence taken off every candidate of a query none of whose words search can read: no
#: tool contains one, none is an English word nor a service or abbreviation it knows, and the
#: sentence model has none as a word of its own ("zzzqqqxx", "xqzv"). The model's similarity
#: to such letters is noise, so a hit needs what a named service needs.
UNREAD_PENALTY: dict[str, float] = SERVICE_PENALTY
#: Confidence taken off a tool that only reads when the query asks to change something, and
#: off one that writes when the query asks to look (the ``intent`` signal, :mod:`.intent`):
#: it cannot do what is asked unless the query's verb misleads. On the toolret dev queries
#: no relevant tool (0 of 90 servable queries) disagreed with its query so; the same amount
#: as a named service.
INTENT_PENALTY: dict[str, float] = SERVICE_PENALTY


@dataclass(frozen=True, slots=True)
class Candidate:
    """A tool on its way to a hit: its ranking score, its confidence and what it matched."""

    name: str
    rank: float
    confidence: float
    matched: tuple[str, ...] = ()


def confident(
    ranked: list[Candidate],
    threshold: float,
    margin: float,
    share: float = 0.0,
    best: float = 0.0,
) -> list[Candidate]:
    """The candidates of ``ranked`` (best first) that are confident on their own, each with
    its confidence capped by the one before it: scores never rise down the list, so a
    caller's own cut keeps a prefix. Each must also reach ``share`` of the best confidence
    shown, ``best`` (a hit found before these, such as an exact name) or the first kept."""
    out: list[Candidate] = []
    if not ranked:
        return out
    floor = ranked[0].rank - margin
    ceiling = 1.0
    for c in ranked:
        if c.rank < floor:
            break
        if c.confidence < threshold:
            continue
        ceiling = min(ceiling, max(0.0, c.confidence))
        if ceiling < share * max(best, out[0].confidence if out else ceiling):
            break
        out.append(Candidate(c.name, c.rank, round(ceiling, 4), c.matched))
    return out


def scored_down(
    ranked: list[Candidate], penalty: float, only: Callable[[str], bool] | None = None
) -> list[Candidate]:
    """``ranked`` with ``penalty`` taken off the confidence of every candidate (or of those
    whose name ``only`` accepts): a tool that does not work with the service the query names,
    or that reads where the query asks to write, needs more confidence to be shown. A tool
    that fits the rest of the request well stays; near neighbours that only resemble it drop."""
    return [
        Candidate(c.name, c.rank, c.confidence - penalty, c.matched)
        if only is None or only(c.name)
        else c
        for c in ranked
    ]
