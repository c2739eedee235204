"""Regenerate ``nexus_jupyter/core/search/data/english-words.txt.gz``, the English words the
``spelling`` search signal never corrects (:mod:`nexus_jupyter.core.search.spelling`).

    apt-get download wamerican && dpkg-deb -x wamerican_*.deb wamerican
    python scripts/english_words.py wamerican/usr/share/dict/american-english

The words are SCOWL's (Debian's ``wamerican`` 2020.12.07-2; its copyright notice is in
``data/english-words.NOTICE``): every entry of letters only, lower-cased, that is long enough
to be corrected, one per line, sorted.
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

from nexus_jupyter.core.search.spelling import MIN_LENGTH

OUT = Path(__file__).resolve().parents[1] / "nexus_jupyter/core/search/data/english-words.txt.gz"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dictionary", type=Path, help="a word list, one word per line")
    args = ap.parse_args(argv)
    pattern = re.compile(rf"[A-Za-z]{{{MIN_LENGTH},}}")
    lines = args.dictionary.read_text("utf-8", errors="ignore").splitlines()
    words = sorted({w.strip().lower() for w in lines if pattern.fullmatch(w.strip())})
    # mtime=0: the same words give the same bytes
    OUT.write_bytes(gzip.compress("\n".join(words).encode() + b"\n", 9, mtime=0))
    print(f"{len(words)} words -> {OUT} ({OUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
