"""Search quality on a labelled catalog, next to a plain rank_bm25 baseline in the same run.

    python benchmarks/search_quality.py --catalog CATALOG.json --queries QUERIES.json \
        [--mode keyword|hybrid] [--split all|a|b] [--threshold T] [--cache-dir DIR]

catalog = JSON list of ``{name, server, description, input_schema}``; queries = JSON list of
``{query, relevant: [names]}`` (any listed tool counts; ``[]`` means no tool serves it).
Prints recall@1, recall@5 and MRR@10 over servable queries, the share of unservable queries
that get no hits at the threshold, and the share of servable queries that wrongly get none.
``--split a|b`` keeps half of the queries (a stable hash of the text), to check that a
setting chosen on one half carries over to the other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nexus_jupyter.core.search.index import SearchIndex
from nexus_jupyter.core.tools.spec import ToolSpec

Ranker = Callable[[str], list[str]]


def load_catalog(path: Path) -> list[ToolSpec]:
    specs = []
    for item in json.loads(path.read_text()):
        schema = dict(item.get("input_schema") or {})
        schema.setdefault("type", "object")
        server = item.get("server", "")
        specs.append(
            ToolSpec(
                name=item["name"],
                description=item.get("description") or "",
                input_schema=schema,
                source=f"mcp:{server}" if server else "",
                source_kind="mcp",
                annotations=item.get("annotations") or {},
            )
        )
    return specs


def load_queries(path: Path, split: str) -> list[dict]:
    queries = json.loads(path.read_text())
    if split == "all":
        return queries
    want = 0 if split == "a" else 1
    return [q for q in queries if hashlib.sha256(q["query"].encode()).digest()[0] % 2 == want]


def bm25_baseline(specs: list[ToolSpec]) -> Ranker:
    """Plain BM25 (rank_bm25's Okapi defaults) over lower-cased words of name,
    description and parameter names and descriptions."""
    from rank_bm25 import BM25Okapi

    def words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    def doc(spec: ToolSpec) -> list[str]:
        params = " ".join(
            f"{k} {v.get('description', '')}"
            for k, v in spec.parameters.items()
            if isinstance(v, dict)
        )
        return words(f"{spec.name} {spec.description} {params}")

    bm25 = BM25Okapi([doc(s) for s in specs])
    names = [s.name for s in specs]

    def rank(query: str) -> list[str]:
        scores = bm25.get_scores(words(query))
        order = sorted(range(len(names)), key=lambda i: -scores[i])
        return [names[i] for i in order[:10] if scores[i] > 0]

    return rank


def evaluate(rank: Ranker, queries: list[dict]) -> dict[str, float]:
    r1 = r5 = rr = servable = no_hit_servable = unservable = no_hit_unservable = 0.0
    for q in queries:
        got = rank(q["query"])
        relevant = set(q["relevant"])
        if not relevant:
            unservable += 1
            no_hit_unservable += not got
            continue
        servable += 1
        no_hit_servable += not got
        first = next((i for i, name in enumerate(got[:10]) if name in relevant), None)
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
    }


def misses(rank: Ranker, queries: list[dict]) -> list[str]:
    out = []
    for q in queries:
        got = rank(q["query"])[:5]
        if q["relevant"] and not set(got) & set(q["relevant"]):
            out.append(f"  {q['query'][:70]!r} -> {got[:3]} (want {q['relevant'][:2]})")
        if not q["relevant"] and got:
            out.append(f"  unservable {q['query'][:60]!r} -> {got[:2]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--catalog", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--mode", choices=["keyword", "hybrid"], default="keyword")
    ap.add_argument("--split", choices=["all", "a", "b"], default="all")
    ap.add_argument("--threshold", type=float, default=None, help="default: the index's own")
    ap.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (hybrid)")
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args(argv)

    specs = load_catalog(args.catalog)
    queries = load_queries(args.queries, args.split)
    start = time.perf_counter()
    index = SearchIndex(args.mode, threshold=args.threshold, cache_dir=args.cache_dir)
    index.update(specs)
    index.warm()
    build = time.perf_counter() - start

    def ours(query: str) -> list[str]:
        return [h.name for h in index.search(query, limit=10)]

    results = {
        f"nexus {index.mode} (t={index.threshold:g})": evaluate(ours, queries),
        "rank_bm25 baseline": evaluate(bm25_baseline(specs), queries),
    }
    n_serv = sum(1 for q in queries if q["relevant"])
    print(
        f"catalog: {len(specs)} tools; queries: {len(queries)} ({n_serv} servable, "
        f"{len(queries) - n_serv} unservable); split={args.split}; index build {build:.2f}s"
    )
    cols = ["recall@1", "recall@5", "MRR", "unservable_no_hits", "servable_no_hits"]
    print(f"{'':28}" + "".join(f"{c:>20}" for c in cols))
    for label, res in results.items():
        print(f"{label:28}" + "".join(f"{res[c]:>20.3f}" for c in cols))
    ours_res, base = results[next(iter(results))], results["rank_bm25 baseline"]
    print(
        f"{'ratio ours/baseline':28}"
        + "".join(f"{ours_res[c] / base[c] if base[c] else float('nan'):>20.2f}" for c in cols[:3])
    )
    if args.show_misses:
        print("misses (top 5):", *misses(ours, queries), sep="\n")
    index.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
