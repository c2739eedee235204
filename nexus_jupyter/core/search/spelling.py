"""Spelling: a query word that no tool's text contains, read as the nearest word that one does.

"serach notion for the roadmap" has no keyword for ``search``, and the sentence model's word
pieces for "serach" mean little, so both candidate stages miss the tool that searches. The
``spelling`` signal (:mod:`.options`) rewrites such a word before the stages run. The words
it can become are the index's own terms, so the fix follows the catalogue with nothing to
maintain by hand, as a search engine's typo tolerance does.

A word is corrected when all of these hold:

- it is a whole word of at least :data:`MIN_LENGTH` ASCII letters (shorter words are too
  often another real word one edit away; a word inside an id, a version, a hash or a
  hyphenated name is left alone, and so is the query's argument values and the name after
  "called", "named" or "titled", which the caller gives as written);
- no indexed tool contains it (a word the catalogue knows is never "corrected"), and it is
  not an English word: :func:`english_words` ships SCOWL's list (``data/english-words.txt.gz``,
  notice beside it), so "stack" stays "stack" in a catalogue that only knows "slack", and
  "blocked" does not become "locked";
- some indexed term is exactly one edit away: a letter added, dropped, replaced, or two
  neighbours swapped (optimal string alignment distance 1), in a way a hand slips
  (:func:`plausible_slip`: the first letter right, and no other letter than a doubled one
  added at the end, so "gcloud", "rustc" and "webhooks" keep their meaning). Among several,
  the term in most tools wins, then the alphabetically first, so the choice does not depend
  on the order tools were added.

A name or a coined word that is in neither list and one edit from an indexed term is still
rewritten ("certs" -> "cents"); that costs little, because a hit still has to be confident on
its own.

Lookups use the index of one-letter deletions (each term filed under every string it gives
with one letter removed, and under itself): two words one edit apart always share a key, so
a query word checks only its own few keys and verifies the few terms found there.

>>> speller = Speller({"search": 12, "searches": 2, "pages": 30, "slack": 9, "notion": 5})
>>> speller.correct("serach"), speller.correct("pagse"), speller.correct("stack")
('search', 'pages', None)
>>> speller.corrected("serach Notoin for Q4 OKRs")
'search Notion for Q4 OKRs'
"""

from __future__ import annotations

import functools
import gzip
import re
from collections.abc import Callable, Mapping
from importlib import resources

__all__ = [
    "MIN_LENGTH",
    "Speller",
    "checked_words",
    "english_words",
    "plausible_slip",
    "within_one_edit",
]

#: The shortest word that is corrected; the shortest term it can become is one letter less.
MIN_LENGTH = 5

# A whole word of ASCII letters: not part of an id ("4f3a9serach22"), of a hyphenated or
# dotted name ("eng-backend", "name.com") or of a word with other letters ("café"); an
# apostrophe may follow ("Notion's").
_WORD = re.compile(r"(?<![\w'\u2019-])(?<!\w\.)[A-Za-z]+(?![\w-]|\.\w)")
_ASCII_WORD = re.compile(r"[a-z]+")


@functools.cache
def english_words() -> frozenset[str]:
    """The English words (lower-cased, :data:`MIN_LENGTH` letters or more) that are never
    corrected: SCOWL's list, 68,928 words (``scripts/english_words.py`` derives it)."""
    raw = resources.files(__package__).joinpath("data", "english-words.txt.gz").read_bytes()
    return frozenset(gzip.decompress(raw).decode("utf-8").split())


def within_one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter added, dropped or replaced, or two neighbouring
    letters swapped (or is ``a`` itself)."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    if la < lb:  # one letter added at i
        return a[i:] == b[i + 1 :]
    if a[i + 1 :] == b[i + 1 :]:  # one letter replaced at i
        return True
    return i + 1 < la and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2 :] == b[i + 2 :]


def plausible_slip(typed: str, term: str) -> bool:
    """Whether ``typed`` (one edit from ``term``) looks like a slip at the keyboard rather
    than another word: its first letter is right (people rarely get it wrong; "gcloud",
    "xcode" and "oauth" are words of their own, not "cloud", "code" and "auth"), and a letter
    added at the end only doubles the last one ("searchh"); another letter there makes a
    word of its own ("rustc", "jsonl", "systemd", "webhooks")."""
    if not typed or not term or typed[0] != term[0]:
        return False
    if len(typed) == len(term) + 1 and typed.startswith(term):
        return typed[-1] == term[-1]
    return True


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))} | {word}


def checked_words(text: str) -> set[str]:
    """The words of ``text`` that :meth:`Speller.corrected` would look at, lower-cased:
    whole words of :data:`MIN_LENGTH` ASCII letters or more (not part of an id, a
    hyphenated name or a word with digits)."""
    return {w.lower() for w in _WORD.findall(text) if len(w) >= MIN_LENGTH}


class Speller:
    """Corrections against one vocabulary (term -> how many tools contain it). The words of
    ``known`` (default :func:`english_words`) are never corrected; ``spellings`` gives the
    written form of a term (a product's "PayPal"), used when the query capitalises it."""

    def __init__(
        self,
        vocabulary: Mapping[str, int],
        known: frozenset[str] | None = None,
        spellings: Mapping[str, str] | None = None,
    ) -> None:
        self._known = english_words() if known is None else known
        self._spellings = dict(spellings or {})
        self._count: dict[str, int] = {}
        self._by_key: dict[str, set[str]] = {}
        self.update(vocabulary)

    def update(self, vocabulary: Mapping[str, int]) -> None:
        """Follow a changed vocabulary: only the terms that came or went are re-filed, so a
        registry that changes one tool does not pay for the whole catalogue again."""
        new = {t: n for t, n in vocabulary.items() if n > 0}
        for term in self._count.keys() - new.keys():
            for key in _deletions(term):
                filed = self._by_key.get(key)
                if filed is not None:
                    filed.discard(term)
                    if not filed:
                        del self._by_key[key]
        for term in new.keys() - self._count.keys():
            if len(term) >= MIN_LENGTH - 1 and _ASCII_WORD.fullmatch(term):
                for key in _deletions(term):
                    self._by_key.setdefault(key, set()).add(term)
        self._count = new

    def correct(self, word: str) -> str | None:
        """The term ``word`` is a typo of (see the module docstring), or ``None``."""
        word = word.lower()
        if len(word) < MIN_LENGTH or not _ASCII_WORD.fullmatch(word):
            return None
        if word in self._count or word in self._known:
            return None
        found = {
            term
            for key in _deletions(word)
            for term in self._by_key.get(key, ())
            if within_one_edit(word, term) and plausible_slip(word, term)
        }
        if not found:
            return None
        return min(found, key=lambda t: (-self._count[t], t))

    def corrected(self, text: str, keep: Callable[[str], bool] | None = None) -> str:
        """``text`` with each misspelled word (see :func:`checked_words`) replaced by its
        correction, in the word's case; a word ``keep`` accepts stays as written."""

        def fix(match: re.Match[str]) -> str:
            word = match.group(0)
            if keep is not None and keep(word):
                return word
            fixed = self.correct(word)
            if fixed is None:
                return word
            if word.isupper():
                return fixed.upper()
            if word[0].isupper():
                return self._spellings.get(fixed) or fixed.capitalize()
            return fixed

        return _WORD.sub(fix, text)
