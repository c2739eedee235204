"""Query sets with one typing slip per query, to measure how search holds up on them.

``with_typos(queries)`` copies each query with one word mistyped: a word of four letters or
more, outside quoted text, URLs, addresses and paths, and not a stop word, gets one of the
slips people make at a keyboard: two neighbouring letters swapped, a letter dropped, a
letter doubled, a letter replaced by one next to it on a QWERTY keyboard, or such a
neighbour added after a letter. Any letter may slip, the first and the last included, each
as likely as another (in real typing the first letter slips less often, so this is the
harder case for a corrector that trusts it). Which word and which slip come from a hash of
the query text, so every run and every machine types the same slips, and the slips know
nothing of the catalogue or of how search corrects them. A query with no such word is kept
as it is.

>>> with_typos([{"query": "list the files in the folder", "relevant": ["ls"]}])[0]["query"]
'ist the files in the folder'
"""

from __future__ import annotations

import hashlib
import random
import re

from nexus_jupyter.core.search.slots import outside_values
from nexus_jupyter.core.search.text import STOPWORDS

__all__ = ["mistyped", "with_typos"]

_WORD = re.compile(r"[A-Za-z]{4,}")
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours(letter: str) -> str:
    for r, row in enumerate(_ROWS):
        c = row.find(letter)
        if c >= 0:
            near = [row[i] for i in (c - 1, c + 1) if 0 <= i < len(row)]
            for other in (r - 1, r + 1):
                if 0 <= other < len(_ROWS):
                    near += [_ROWS[other][i] for i in (c - 1, c) if 0 <= i < len(_ROWS[other])]
            return "".join(near)
    return ""


def _slip(word: str, rng: random.Random) -> str:
    i = rng.randrange(len(word))
    kind = rng.choice(("swap", "drop", "double", "near", "extra"))
    if kind == "swap" and i + 1 < len(word) and word[i] != word[i + 1]:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == "drop":
        return word[:i] + word[i + 1 :]
    if kind == "double":
        return word[: i + 1] + word[i:]
    near = _neighbours(word[i].lower()) or word[i]
    if kind == "extra":  # a neighbouring key struck too, after this letter
        return word[: i + 1] + rng.choice(near) + word[i + 1 :]
    return word[:i] + rng.choice(near) + word[i + 1 :]


def mistyped(query: str) -> str:
    """``query`` with one word mistyped (see the module docstring)."""
    rng = random.Random(hashlib.sha256(query.encode()).digest())
    words = [
        w for part in _outside(query) for w in _WORD.findall(part) if w.lower() not in STOPWORDS
    ]
    if not words:
        return query
    target, seen = rng.randrange(len(words)), [0]

    def slip_target(match: re.Match[str]) -> str:
        word = match.group(0)
        if word.lower() in STOPWORDS:
            return word
        seen[0] += 1
        return _slip(word, rng) if seen[0] - 1 == target else word

    return outside_values(query, lambda part: _WORD.sub(slip_target, part))


def _outside(query: str) -> list[str]:
    """The pieces of ``query`` between its values."""
    parts: list[str] = []

    def keep(part: str) -> str:
        parts.append(part)
        return part

    outside_values(query, keep)
    return parts


def with_typos(queries: list[dict]) -> list[dict]:
    """A copy of ``queries`` (dicts with a ``query``) with each query :func:`mistyped`."""
    return [{**q, "query": mistyped(q["query"])} for q in queries]
