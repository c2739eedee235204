"""Spelling: a query word that no tool's text contains, read as the nearest word that one does.

"serach notion for the roadmap" has no keyword for ``search``, and the sentence model's word
pieces for "serach" mean little, so both candidate stages miss the tool that searches. The
``spelling`` signal (:mod:`.options`) rewrites such a word before the stages run. The words
it can become are the index's own terms (and the names of the products the services list
matches in any case), so the fix follows the catalogue with nothing to maintain by hand, as
a search engine's typo tolerance does.

A word is corrected when all of these hold:

- it is a whole word of at least :data:`MIN_LENGTH` ASCII letters (shorter words are too
  often another real word one edit away; a word inside an id, a version, a hash or a
  hyphenated name is left alone, and so are the query's argument values and the name after
  "called", "named" or "titled", which the caller gives as written);
- no indexed tool contains it (a word the catalogue knows is never "corrected"), and it is
  not an English word: :func:`english_words` ships SCOWL's list (``data/english-words.txt.gz``,
  notice beside it), so "stack" stays "stack" in a catalogue that only knows "slack", and
  "blocked" does not become "locked";
- some such word is exactly one edit away: a letter added, dropped, replaced, or two
  neighbours swapped (optimal string alignment distance 1), in a way a hand slips
  (:func:`plausible_slip`: the first letter right, and no other letter than a doubled one
  added at the end, so "gcloud", "rustc" and "webhooks" keep their meaning). Among several,
  the term in most tools wins, then the alphabetically first, so the choice does not depend
  on the order tools were added.

A name or a coined word that is in neither list and one edit from an indexed term is still
rewritten ("certs" -> "cents"); that costs little, because a hit still has to be confident on
its own.

A word the index lacks is looked up by trying every string one slip from it (about 400 for
a seven-letter word) against the index's terms: some 80 µs per unknown word, and no index of
its own to keep up to date.

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
from typing import TYPE_CHECKING

from .slots import NAMED, outside_values, without_values

if TYPE_CHECKING:
    from .fts import KeywordEngine
    from .vocabulary import Vocabulary

__all__ = [
    "MIN_LENGTH",
    "QuerySpelling",
    "Speller",
    "checked_words",
    "english_words",
    "one_edit",
    "plausible_slip",
]

#: The shortest word that is corrected; the shortest term it can become is one letter less.
MIN_LENGTH = 5

# A whole word of ASCII letters: not part of an id ("4f3a9serach22"), of a hyphenated or
# dotted name ("eng-backend", "name.com") or of a word with other letters ("café"); an
# apostrophe may follow ("Notion's").
_WORD = re.compile(r"(?<![\w'\u2019-])(?<!\w\.)[A-Za-z]+(?![\w-]|\.\w)")
_ASCII_WORD = re.compile(r"[a-z]+")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


@functools.cache
def english_words() -> frozenset[str]:
    """The English words (lower-cased, :data:`MIN_LENGTH` letters or more) that are never
    corrected: SCOWL's list, 68,928 words (``scripts/english_words.py`` derives it)."""
    raw = resources.files(__package__).joinpath("data", "english-words.txt.gz").read_bytes()
    return frozenset(gzip.decompress(raw).decode("utf-8").split())


def one_edit(word: str) -> set[str]:
    """Every string one slip from ``word`` (lower-case ASCII letters): a letter dropped,
    two neighbours swapped, a letter replaced, or a letter added."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return (
        {a + b[1:] for a, b in splits if b}
        | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
        | {a + c + b[1:] for a, b in splits if b for c in _ALPHABET if c != b[0]}
        | {a + c + b for a, b in splits for c in _ALPHABET}
    )


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


def checked_words(text: str) -> set[str]:
    """The words of ``text`` that :meth:`Speller.corrected` would look at, lower-cased:
    whole words of :data:`MIN_LENGTH` ASCII letters or more (not part of an id, a
    hyphenated name or a word with digits)."""
    return {w.lower() for w in _WORD.findall(text) if len(w) >= MIN_LENGTH}


class Speller:
    """Corrections against one vocabulary (term -> how many tools contain it). The words of
    ``known`` (default :func:`english_words`) are never corrected; ``spellings`` gives the
    written form of a term ("PayPal" for a product a project lists so), used when the query
    capitalises the word."""

    def __init__(
        self,
        vocabulary: Mapping[str, int],
        known: frozenset[str] | None = None,
        spellings: Mapping[str, str] | None = None,
    ) -> None:
        self._known = english_words() if known is None else known
        self._spellings = dict(spellings or {})
        self._count = {t: n for t, n in vocabulary.items() if n > 0}

    def correct(self, word: str) -> str | None:
        """The term ``word`` is a slip of (see the module docstring), or ``None``."""
        word = word.lower()
        if len(word) < MIN_LENGTH or not _ASCII_WORD.fullmatch(word):
            return None
        count = self._count
        if word in count or word in self._known:
            return None
        found = [t for t in one_edit(word) if t in count and plausible_slip(word, t)]
        return min(found, key=lambda t: (-count[t], t)) if found else None

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


class QuerySpelling:
    """The spelling stage of one index: a query as search reads it (see the module
    docstring). The words it corrects to are the index's terms (read again after each
    write, and only when a query has a word the index lacks) and the one-word names of
    the services in ``vocabulary`` that count in any case (a name that is also an ordinary
    word, "Coda" say, is not a target: "conda" must stay "conda")."""

    def __init__(self, keyword: KeywordEngine, vocabulary: Vocabulary) -> None:
        self._keyword = keyword
        self._vocabulary = vocabulary
        self._services = {
            word: 1
            for name, capitalised in vocabulary.services.items()
            if not capitalised
            for word in name.split()
            if len(word) >= MIN_LENGTH
        }
        self._speller: tuple[int, Speller] | None = None  # for one generation of the index

    def read(self, query: str) -> str:
        """``query`` with its misspelt words corrected, outside argument values and the
        names a query gives ("called X"); abbreviations stay as written."""
        words = checked_words(NAMED.sub(" ", without_values(query)))
        if not words or all(self._keyword.doc_freq(words).values()):
            return query  # every word is indexed: the common case costs a cached lookup
        if words <= english_words():
            return query
        speller = self._current()
        short = self._vocabulary.abbreviations
        return outside_values(
            query, lambda part: speller.corrected(part, lambda w: w.lower() in short), names=True
        )

    def reads_a_word(self, words: list[str], model_knows: Callable[[str], bool]) -> bool:
        """Whether search can read some of ``words`` (a query's terms): a term some tool
        contains, an English word, an abbreviation or service name it knows, or a word the
        sentence model knows whole (``model_knows``). A query of none is letters only."""
        if not words or any(self._keyword.doc_freq(words).values()):
            return True
        vocabulary = self._vocabulary
        return any(
            w in english_words()
            or w in vocabulary.abbreviations
            or w in vocabulary.services
            or model_knows(w)
            for w in words
        )

    def _current(self) -> Speller:
        generation = self._keyword.generation
        if self._speller is None or self._speller[0] != generation:
            terms = {**self._services, **self._keyword.vocabulary()}
            speller = Speller(terms, spellings=self._vocabulary.spellings)
            self._speller = (generation, speller)
        return self._speller[1]
