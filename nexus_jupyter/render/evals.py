"""Retrieval eval reports for people: text (``nexus-tools eval``) and HTML (``%tool eval``)."""

from __future__ import annotations

import html
import math
from typing import TYPE_CHECKING

from .tables import left_aligned

if TYPE_CHECKING:
    from ..core.evals.retrieval import EvalReport

__all__ = ["eval_html", "eval_text"]

_LABELS = {
    "recall@1": "recall@1",
    "recall@5": "recall@5",
    "MRR": "MRR@10",
    "unservable_no_hits": "unservable left empty",
    "servable_no_hits": "servable left empty",
    "hits": "hits per query",
}


def _value(key: str, value: float) -> str:
    if math.isnan(value):
        return "n/a (no unservable queries)"
    if key.endswith("no_hits"):
        return f"{value:.1%}"
    return f"{value:.3f}" if key != "hits" else f"{value:.1f}"


def eval_text(report: EvalReport, *, misses: int = 20) -> str:
    lines = [report.summary(), ""]
    lines += [f"  {_LABELS[k]:<22} {_value(k, v)}" for k, v in report.metrics.items()]
    missed = report.misses
    if missed:
        lines += ["", f"Misses ({len(missed)}): query -> its first hits (the tools wanted)"]
        lines += [r.describe() for r in missed[:misses]]
        if len(missed) > misses:
            lines.append(f"  ... {len(missed) - misses} more (--misses N, or --json)")
    pairs = report.confusable_pairs
    if pairs:
        lines += ["", "Confusable pairs (each wins the other's queries):"]
        lines += [f"  {a} <-> {b}  ({n} + {back})" for a, b, n, back in pairs]
    one_way = [c for c in report.confusions if c[2] > 1]
    if one_way:
        lines += ["", "Often ranked first instead (wanted -> got, queries):"]
        lines += [f"  {want} -> {won}  ({n})" for want, won, n in one_way[:10]]
    return "\n".join(lines)


def eval_html(report: EvalReport, *, misses: int = 50) -> str:
    esc = html.escape
    figures = "".join(
        f"<tr><td>{esc(_LABELS[k])}</td><td><b>{esc(_value(k, v))}</b></td></tr>"
        for k, v in report.metrics.items()
    )
    parts = [
        f"<div class='nexus-eval'><p>{esc(report.summary())}</p>",
        left_aligned(f"<table><tbody>{figures}</tbody></table>"),
    ]
    missed = report.misses
    if missed:
        rows = "".join(
            f"<tr><td style='text-align:left'>{esc(r.query.query)}</td>"
            f"<td>{esc(', '.join(r.query.relevant) or '(none: unservable)')}</td>"
            f"<td>{esc(', '.join(r.got[:5]) or '(no hits)')}</td>"
            f"<td>{'-' if r.first is None else r.first + 1}</td></tr>"
            for r in missed[:misses]
        )
        parts.append(
            f"<p><b>Misses</b> ({len(missed)})</p>"
            + left_aligned(
                "<table><thead><tr><th>query</th><th>wanted</th><th>got (first five)</th>"
                f"<th>rank</th></tr></thead><tbody>{rows}</tbody></table>"
            )
        )
    pairs = report.confusable_pairs
    if pairs:
        items = "".join(
            f"<li><code>{esc(a)}</code> ⇄ <code>{esc(b)}</code> ({n} + {back})</li>"
            for a, b, n, back in pairs
        )
        parts.append(
            f"<p><b>Confusable pairs</b> (each wins the other's queries)</p><ul>{items}</ul>"
        )
    return "".join(parts) + "</div>"
