"""How many correctly spelt names the ``spelling`` search signal would change.

    python benchmarks/spelling_names.py [--names benchmarks/data/tool-names.txt]

A slip benchmark (``search_quality.py --typos``) only feeds the corrector real slips; this
feeds it the opposite, names spelt right that no catalogue word or English word covers
(``conda``, ``gcloud``, ``Priya``), and prints which ones it would rewrite, against the toolret
catalogue and against the notebook-shaped one (the built-in tools plus generated helpers).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from notebook_catalog import notebook_catalog
from search_quality import builtin_specs, load_catalog, toolret_dir

from nexus_jupyter.core.search.index import SearchIndex
from nexus_jupyter.core.search.spelling import MIN_LENGTH, english_words

NAMES = Path(__file__).resolve().parent / "data" / "tool-names.txt"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--names", type=Path, default=NAMES)
    args = ap.parse_args(argv)
    lines = args.names.read_text().splitlines()
    names = [n.strip() for n in lines if n.strip() and not n.startswith("#")]
    english = english_words()
    checked = [n for n in names if len(n) >= MIN_LENGTH and n.lower() not in english]
    print(f"{len(names)} names, {len(checked)} of five letters or more and not English words")
    shapes = {
        "toolret": load_catalog(toolret_dir() / "catalog.json"),
        "notebook": notebook_catalog(builtin_specs())[0],
    }
    for shape, specs in shapes.items():
        index = SearchIndex("keyword")
        index.update(specs)
        changed = [(n, index.spelled(n)) for n in checked if index.spelled(n) != n]
        print(f"{shape:9} {len(specs)} tools: {len(changed)} changed", *changed)
        index.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
