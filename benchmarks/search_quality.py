"""Search quality on a labelled catalog, next to a plain rank_bm25 baseline in the same run.

    python benchmarks/search_quality.py [--catalog CATALOG.json] [--queries LABEL=QUERIES.json ...]
        [--modes keyword,hybrid] [--split all|a|b] [--threshold T] [--cache-dir DIR]
        [--typos] [--without SIGNAL,...]

catalog = JSON list of ``{name, server, description, input_schema}`` (default: the toolret
catalogue in ``$TOOLRET_DIR``, else ``../shared/data/toolret`` next to the repository);
queries = JSON list of ``{query, relevant: [names]}`` (any listed tool counts; ``[]`` means no
tool serves it). By default the toolret dev queries (``dev``, for tuning) and, when present,
``benchmarks/data/toolret-heldout-queries.json`` (``held-out``: report only, never tune on it;
``--show-misses`` lists dev misses only). For every query set and mode it prints recall@1,
recall@5 and MRR@10 over servable queries, the share of unservable queries that get no hits,
the share of servable queries that wrongly get none, and the mean number of hits. A second
catalogue shape follows (``--shapes both``, the default): the built-in tools plus 204
generated notebook-style helpers with 132 generated queries (``notebook_catalog.py``).
``--typos`` adds a copy of every query set with one word per query mistyped (``typos.py``),
and ``--without spelling,intent`` switches signals off, to see what each one does.
``--split a|b`` keeps half of the queries (a stable hash of the text), to check that a
setting chosen on one half carries over to the other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from notebook_catalog import notebook_catalog
from typos import with_typos

from nexus_jupyter.core.evals.retrieval import miss_lines as misses
from nexus_jupyter.core.evals.retrieval import score as evaluate
from nexus_jupyter.core.search.index import SearchIndex
from nexus_jupyter.core.search.options import SIGNALS
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
    return [q for q in json.loads(path.read_text()) if keep_split(q, split)]


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


REPO = Path(__file__).resolve().parents[1]
HELD_OUT = REPO / "benchmarks" / "data" / "toolret-heldout-queries.json"
COLS = ["recall@1", "recall@5", "MRR", "unservable_no_hits", "servable_no_hits", "hits"]


def toolret_dir() -> Path:
    env = os.environ.get("TOOLRET_DIR")
    return Path(env) if env else REPO.parent / "shared" / "data" / "toolret"


def query_sets(given: list[str]) -> dict[str, Path]:
    if given:
        out = {}
        for item in given:
            label, _, path = item.rpartition("=")
            out[label or Path(path).stem] = Path(path)
        return out
    sets = {"dev": toolret_dir() / "queries-dev.json"}
    if HELD_OUT.exists():
        sets["held-out"] = HELD_OUT
    return sets


def builtin_specs() -> list[ToolSpec]:
    """The tools this project ships (built-ins, in a throwaway workspace)."""
    import tempfile

    from nexus_jupyter import Registry

    with tempfile.TemporaryDirectory() as root:
        reg = Registry.default(root=root, watch=False, mcp=False, search="keyword")
        try:
            return [entry.spec for entry in reg.entries()]
        finally:
            reg.close()


def keep_split(query: dict, split: str) -> bool:
    if split == "all":
        return True
    return hashlib.sha256(query["query"].encode()).digest()[0] % 2 == (0 if split == "a" else 1)


def run_shape(specs: list[ToolSpec], sets: dict[str, list[dict]], args: argparse.Namespace) -> None:
    """Every query set against rank_bm25 and each mode, on one catalogue."""
    for label, queries in sets.items():
        n_serv = sum(1 for q in queries if q["relevant"])
        print(
            f"  {label}: {len(queries)} queries ({n_serv} servable, {len(queries) - n_serv} unservable)"
        )
    baseline = bm25_baseline(specs)
    print(f"{'set':14}{'engine':24}" + "".join(f"{c:>20}" for c in COLS))
    for label, queries in sets.items():
        base = evaluate(baseline, queries)
        print(f"{label:14}{'rank_bm25 baseline':24}" + "".join(f"{base[c]:>20.3f}" for c in COLS))
    for mode in args.modes.split(","):
        start = time.perf_counter()
        options = {"mode": mode, "signals": {name: False for name in args.without}}
        index = SearchIndex(options, threshold=args.threshold, cache_dir=args.cache_dir)
        index.update(specs)
        index.warm()
        build = time.perf_counter() - start

        def ours(query: str, index: SearchIndex = index) -> list[str]:
            return [h.name for h in index.search(query, limit=10)]

        for label, queries in sets.items():
            res, base = evaluate(ours, queries), evaluate(baseline, queries)
            name = f"nexus {index.mode} (t={index.threshold:g})"
            print(f"{label:14}{name:24}" + "".join(f"{res[c]:>20.3f}" for c in COLS))
            ratios = "".join(
                f"{res[c] / base[c] if base[c] else float('nan'):>20.2f}" for c in COLS[:3]
            )
            print(f"{label:14}{'  ratio to rank_bm25':24}" + ratios)
            if args.show_misses and label.startswith("dev"):
                print("misses (top 5):", *misses(ours, queries), sep="\n")
        print(f"{'':14}index build ({mode}): {build:.2f}s")
        index.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--catalog", type=Path, default=None)
    ap.add_argument("--queries", action="append", default=[], metavar="[LABEL=]PATH")
    ap.add_argument("--modes", default="keyword,hybrid")
    ap.add_argument("--split", choices=["all", "a", "b"], default="all")
    ap.add_argument("--threshold", type=float, default=None, help="default: the index's own")
    ap.add_argument("--cache-dir", type=Path, default=None, help="embedding cache (hybrid)")
    ap.add_argument("--show-misses", action="store_true", help="dev sets only")
    ap.add_argument(
        "--without",
        type=lambda text: [name for name in text.split(",") if name],
        default=[],
        metavar="SIGNAL[,SIGNAL]",
        help=f"switch signals off ({', '.join(SIGNALS)})",
    )
    ap.add_argument(
        "--typos",
        action="store_true",
        help="also run each query set with one word per query mistyped (typos.py)",
    )
    ap.add_argument(
        "--shapes", choices=["both", "toolret"], default="both", help="catalogue shapes to run"
    )
    args = ap.parse_args(argv)

    catalog = args.catalog or toolret_dir() / "catalog.json"
    toolret = load_catalog(catalog)
    sets = {
        label: load_queries(path, args.split) for label, path in query_sets(args.queries).items()
    }
    if args.typos:
        sets |= {f"{label}~typo": with_typos(queries) for label, queries in sets.items()}
    shapes = {f"toolret ({catalog})": (toolret, sets)}
    if args.shapes == "both":
        specs, queries = notebook_catalog(builtin_specs())
        notebook = {"notebook": [q for q in queries if keep_split(q, args.split)]}
        if args.typos:
            notebook["notebook~typo"] = with_typos(notebook["notebook"])
        shapes["notebook (built-ins + generated helpers)"] = (specs, notebook)
    for shape, (specs, shape_sets) in shapes.items():
        print(f"\ncatalog {shape}: {len(specs)} tools; split={args.split}")
        run_shape(specs, shape_sets, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
