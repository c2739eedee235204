"""The keyword engine: in-memory SQLite FTS5 tables ranked with BM25.

Text is split into terms in Python (:mod:`.text`) and stored space-joined, so the
FTS5 tokenizer only splits on spaces and both sides of a match agree. One row per tool,
replaced in place on upsert, so the index follows the registry without rebuilds.

Speed notes (measured with ``benchmarks/search_scale.py``):

- The table is contentless (``content=''``): the term-split fields live once, in Python,
  where the confidence check reads them without a query; deleting a row hands FTS5 the old
  values back.
- Ranking calls ``bm25(docs, weights...)`` in the select list: on SQLite 3.40 that is
  several times faster than ``ORDER BY rank`` with the same function configured as ``rank``.
- Document frequencies (for IDF) are cached between writes.
- The remaining cost is bm25() itself, ~1-2 us per row that matches any query word (800 rows
  for a 4-word query at 10k synthetic tools, 5,500 at 100k). FTS5 has no dynamic pruning
  (WAND/MaxScore), so a query reaching many rows is answered in two passes
  (:meth:`KeywordEngine._top_two_pass`): a second table ``bound`` holds the same rows
  without their lengths (``columnsize=0``), which makes its bm25() cheaper, and with its
  column weights scaled (:meth:`KeywordEngine._bound_weights`) its score is an upper bound
  of every row's exact score. The first pass sorts rows by that bound; only rows whose
  bound reaches the k-th best exact score are then scored exactly. The answer is the same
  as a full sort (``tests/core/test_search_fts.py`` checks it on random catalogues with
  updates in between). Measured at 10k synthetic tools on 2026-11-24: p50 1.23-1.27 ms
  with one pass, 0.83-0.88 ms with two; a one-tool update costs 0.14-0.16 ms with both
  tables written in one transaction.
- Ranking only the rows holding the query's rarest words was tried and dropped: it lost
  the right tool whenever the rarest word was one the tool lacks (a plural in the query:
  hit@10 on the synthetic 10k catalog fell from 0.87 to 0.02).
- ``detail=column`` and ``detail=none`` (smaller postings) were 5% faster at best and broke
  ranking: recall@1 on the toolret queries fell from 0.67 to 0.12.

Not thread-safe on its own: :class:`~.index.SearchIndex` serialises access with a lock.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from ..tools.spec import ToolSpec
from .text import FIELDS, tool_fields

__all__ = ["FIELD_WEIGHTS", "KeywordEngine"]

#: BM25 column weights, in :data:`~.text.FIELDS` order. The name is written to be
#: found; the other fields count the same (weights tuned on one query set did not carry over).
#: The summary (a description's first sentence) is in the description too, so what a tool is
#: for counts twice: toolret dev keyword recall@5 0.844 -> 0.856; summary weights 0.5-2 land
#: within 0.02 of that.
FIELD_WEIGHTS: dict[str, float] = {
    "name": 2.0,
    "summary": 1.0,
    "description": 1.0,
    "parameters": 1.0,
    "tags": 1.0,
    "source": 1.0,
}
# One FTS5 column per distinct weight, holding every field of that weight: FTS5's bm25()
# weights term counts per column and normalises by the whole row's length, so this ranks
# exactly as one column per field, and fewer columns cost less per row (15% at 100k tools).
_GROUPS: tuple[tuple[int, ...], ...] = tuple(
    tuple(i for i, f in enumerate(FIELDS) if FIELD_WEIGHTS[f] == w)
    for w in sorted(set(FIELD_WEIGHTS.values()), reverse=True)
)
# The fields a hit reports as matched (the summary is part of the description).
_REPORTED_FIELDS = tuple(field for field in FIELDS if field != "summary")
_COLS = ", ".join(f"c{n}" for n in range(len(_GROUPS)))
_MARKS = ", ".join("?" * len(_GROUPS))
_WEIGHTS = tuple(FIELD_WEIGHTS[FIELDS[group[0]]] for group in _GROUPS)
_BM25 = f"bm25(docs, {', '.join(map(str, _WEIGHTS))})"

# ``docs`` ranks; ``bound`` holds the same rows but not their lengths, so that its bm25()
# is cheap and, with weights scaled down (:meth:`KeywordEngine._bound_weights`), an upper
# bound of the exact score (see the module docstring).
_TOP = f"SELECT rowid, -{_BM25} AS score FROM docs WHERE docs MATCH ? ORDER BY score DESC, rowid"
_SCORES = (
    f"SELECT rowid, -{_BM25} FROM docs WHERE docs MATCH ?"
    " AND +rowid IN (SELECT value FROM json_each(?))"
)
_BOUNDS = (
    f"SELECT rowid, -bm25(bound, {_MARKS}) AS score FROM bound WHERE bound MATCH ?"
    " ORDER BY score DESC LIMIT ?"
)
_TWO_PASS_FROM = 400  # postings a query reaches (sum of its words' document frequencies)
_FIRST_CUT = 0.9  # first guess at the k-th exact score, as a share of the k-th best bound
_BOUND_ROWS = 8  # the bound pass sorts at most postings / this many rows (then falls back)
# bm25()'s constants (fts5_aux.c), and the length a row of ``bound`` reports (-1 a column).
_K1, _B, _BOUND_LENGTH = 1.2, 0.75, -len(_GROUPS)


def _columns(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(" ".join(values[i] for i in group if values[i]) for group in _GROUPS)


def _length(columns: tuple[str, ...]) -> int:
    """The number of terms in a row (FTS5 counts the same: the terms are space-joined)."""
    return sum(c.count(" ") + 1 for c in columns if c)


def _best_first(row: tuple[int, float]) -> tuple[float, int]:
    return -row[1], row[0]


class KeywordEngine:
    """BM25 over the fields of each tool. Scores are positive, higher is better.

    ``length_prior`` terms are added to the length of every row in BM25's length
    normalisation (as a run of ``0`` tokens, which no query term can be: digits alone are
    values, see :func:`.text.terms`). FTS5's bm25() fixes ``b`` at 0.75; a constant ``C`` added
    to every length is BM25 with ``b = 0.75 * avgdl / (avgdl + C)``, so short rows are held
    less against long ones. It changes only the ranking: the fields, coverage and the
    vocabulary are the tool's own."""

    def __init__(self, length_prior: int = 0) -> None:
        if length_prior < 0:
            raise ValueError(f"length_prior must be 0 or more, got {length_prior}")
        self.length_prior = length_prior
        self._pad = " ".join(["0"] * length_prior)
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        for table, options in (("docs", ""), ("bound", ", columnsize=0")):
            self._db.execute(
                f"CREATE VIRTUAL TABLE {table} USING fts5({_COLS}, content=''{options},"
                " tokenize='unicode61')"
            )
        self._db.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(docs, 'row')")
        self._rowids: dict[str, int] = {}
        self._names: dict[int, str] = {}
        self._fields: dict[int, tuple[str, ...]] = {}  # rowid -> indexed text, FIELDS order
        self._df: dict[str, int] = {}  # document frequency cache, cleared on every write
        self._phrases: dict[str, bool] = {}  # phrase -> in some row; cleared on every write
        self._lengths: dict[int, int] = {}  # row length -> number of rows that long
        self._tokens = 0  # terms in all rows
        self._shortest: int | None = None  # cached min(self._lengths)
        self._next_rowid = 1
        self.generation = 0  # counts writes: a cache built from the index checks it

    def __len__(self) -> int:
        return len(self._rowids)

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction for the statements of a change (a replaced tool is a delete and
        an insert in both tables): committing each statement on its own made a one-tool
        update 25% slower."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN")
        try:
            yield
        finally:
            self._db.execute("COMMIT")

    def upsert(self, spec: ToolSpec) -> None:
        with self._transaction():
            self._upsert(spec)

    def _upsert(self, spec: ToolSpec) -> None:
        fields = tool_fields(spec)
        values = tuple(fields[f] for f in FIELDS)
        rowid = self._rowids.get(spec.name)
        if rowid is not None:
            if self._fields[rowid] == values:
                return
            self._delete_row(rowid)
        else:
            rowid = self._next_rowid
            self._next_rowid += 1
            self._rowids[spec.name] = rowid
            self._names[rowid] = spec.name
        self._fields[rowid] = values
        self.generation += 1
        self._df.clear()
        self._phrases.clear()
        columns = _columns(values)
        self._count_length(_length(columns) + self.length_prior, 1)
        self._db.execute(
            f"INSERT INTO docs(rowid, {_COLS}) VALUES (?, {_MARKS})",
            (rowid, *self._padded(columns)),
        )
        self._db.execute(
            f"INSERT INTO bound(rowid, {_COLS}) VALUES (?, {_MARKS})", (rowid, *columns)
        )

    def upsert_many(self, specs: Iterable[ToolSpec]) -> None:
        count = 0
        with self._transaction():
            for spec in specs:
                self._upsert(spec)
                count += 1
        if count >= 256:
            self.optimize()

    def _delete_row(self, rowid: int) -> None:
        # A contentless table forgets the text: FTS5 needs the indexed values to remove them.
        columns = _columns(self._fields.pop(rowid))
        self.generation += 1
        self._df.clear()
        self._phrases.clear()
        self._count_length(_length(columns) + self.length_prior, -1)
        for table, values in (("docs", self._padded(columns)), ("bound", columns)):
            sql = f"INSERT INTO {table}({table}, rowid, {_COLS}) VALUES ('delete', ?, {_MARKS})"
            self._db.execute(sql, (rowid, *values))

    def _padded(self, columns: tuple[str, ...]) -> tuple[str, ...]:
        """A row's columns for ``docs``: the last one followed by the length prior's tokens
        (``bound`` reports no lengths, so it takes the columns as they are)."""
        if not self._pad:
            return columns
        last = f"{columns[-1]} {self._pad}" if columns[-1] else self._pad
        return (*columns[:-1], last)

    def _count_length(self, length: int, change: int) -> None:
        count = self._lengths.get(length, 0) + change
        if count:
            self._lengths[length] = count
        else:
            del self._lengths[length]
        self._tokens += change * length
        shortest = self._shortest
        if change > 0 and shortest is not None and length < shortest:
            self._shortest = length
        elif change < 0 and length == shortest and not count:
            self._shortest = None

    def remove(self, name: str) -> None:
        rowid = self._rowids.pop(name, None)
        if rowid is not None:
            del self._names[rowid]
            with self._transaction():
                self._delete_row(rowid)

    def ranked(
        self,
        query_terms: list[str],
        *,
        keep: Callable[[str], bool] | None = None,
        limit: int | None = None,
    ) -> list[tuple[str, float]]:
        """``(name, bm25)`` best first for tools matching any term; ``keep`` filters names.
        Equal scores keep the order the tools were added in."""
        df = {t: n for t, n in self.doc_freq(query_terms).items() if n}
        if not df:
            return []
        match = " OR ".join(f'"{t}"' for t in df)
        names = self._names
        if keep is not None or limit is None:
            rows = self._db.execute(_TOP, (match,))
            if keep is None:
                return [(names[rowid], score) for rowid, score in rows]
            return [(names[r], score) for r, score in rows if keep(names[r])]
        postings = sum(df.values())
        weights = self._bound_weights() if postings >= max(_TWO_PASS_FROM, 4 * limit) else None
        if weights is None:
            top = self._top(match, limit)
        else:
            top = self._top_two_pass(match, limit, postings, weights)
        return [(names[rowid], score) for rowid, score in top]

    def _bound_weights(self) -> tuple[float, ...] | None:
        """Column weights that make bm25() on ``bound`` an upper bound of the exact score
        of every row, or ``None`` when there are none (rows of very few terms on average).

        A term adds ``idf * f * (k1 + 1) / (f + K)`` to a row's bm25(), where ``f`` is its
        weighted count and ``K = k1 * (1 - b + b * D / avgdl)`` grows with the row's length
        ``D``. A ``bound`` row reports ``D = -1`` per column, so ``K`` is some ``K0`` below
        the exact one; weights scaled by ``c`` turn the sum into ``... / (f + K0 / c)``,
        and ``c = K0 / Kmin`` (``Kmin``: ``K`` of the shortest row, a hair less for
        rounding) gives a bound that is exact for the shortest rows and above all others.
        ``K0`` must be positive: at zero a term the row lacks scores 0 / 0.
        """
        tokens = self._tokens
        if tokens <= 0:
            return None
        avgdl = tokens / len(self._rowids)
        k0 = _K1 * (1 - _B + _B * _BOUND_LENGTH / avgdl)
        if k0 < 0.05:
            return None
        if self._shortest is None:
            self._shortest = min(self._lengths)
        kmin = _K1 * (1 - _B + _B * self._shortest / avgdl)
        scale = k0 / kmin * (1 + 1e-6)
        return tuple(w * scale for w in _WEIGHTS)

    def _top_two_pass(
        self, match: str, k: int, postings: int, weights: tuple[float, ...]
    ) -> list[tuple[int, float]]:
        """The first ``k`` rows of the exact ranking, scoring exactly only the rows whose
        bound reaches the k-th best exact score (the module docstring explains why)."""
        sort_limit = max(4 * k, postings // _BOUND_ROWS)
        bounds = self._db.execute(_BOUNDS, (*weights, match, sort_limit))
        head = bounds.fetchmany(k)
        rowids = [rowid for rowid, _ in head]
        if len(head) < k:  # every matching row is in the head
            return sorted(self._scores(match, rowids), key=_best_first)
        cut = _FIRST_CUT * head[-1][1]
        read = k
        for row in bounds:
            read += 1
            if row[1] < cut:
                break
            rowids.append(row[0])
        else:
            if read == sort_limit:  # rows past the sort limit may reach the cut
                return self._top(match, k)
            return sorted(self._scores(match, rowids), key=_best_first)[:k]
        top = sorted(self._scores(match, rowids), key=_best_first)[:k]
        floor = top[-1][1]
        if floor >= cut:
            return top
        # The guess was too high: add the rows whose bound reaches the k-th exact score.
        rowids = []
        while row[1] >= floor:
            rowids.append(row[0])
            row = next(bounds, None)
            if row is None:
                if read == sort_limit:
                    return self._top(match, k)
                break
            read += 1
        return sorted(top + self._scores(match, rowids), key=_best_first)[:k]

    def _top(self, match: str, k: int) -> list[tuple[int, float]]:
        return self._db.execute(_TOP + " LIMIT ?", (match, k)).fetchall()

    def _scores(self, match: str, rowids: list[int]) -> list[tuple[int, float]]:
        """Exact scores of some rows that match ``match``."""
        if not rowids:
            return []
        return self._db.execute(_SCORES, (match, f"[{','.join(map(str, rowids))}]")).fetchall()

    def doc_freq(self, query_terms: Iterable[str]) -> dict[str, int]:
        """How many tools contain each (distinct) term, in query order."""
        unique = list(dict.fromkeys(query_terms))
        missing = [t for t in unique if t not in self._df]
        if missing:
            marks = ", ".join("?" * len(missing))
            sql = f"SELECT term, doc FROM vocab WHERE term IN ({marks})"
            found = dict(self._db.execute(sql, missing))
            for term in missing:
                self._df[term] = found.get(term, 0)
        return {t: self._df[t] for t in unique}

    def vocabulary(self) -> dict[str, int]:
        """Every indexed term with the number of tools that contain it (not the length
        prior's ``0``, which is no tool's: :func:`.text.terms` never makes a term of digits)."""
        return dict(self._db.execute("SELECT term, doc FROM vocab WHERE term != '0'"))

    def has_phrase(self, phrase_terms: list[str]) -> bool:
        """Whether some tool's text holds these terms next to each other, in this order."""
        if not phrase_terms:
            return False
        if len(phrase_terms) == 1:
            return self.doc_freq(phrase_terms)[phrase_terms[0]] > 0
        key = " ".join(phrase_terms)
        found = self._phrases.get(key)
        if found is None:
            sql = "SELECT 1 FROM docs WHERE docs MATCH ? LIMIT 1"
            found = self._db.execute(sql, (f'"{key}"',)).fetchone() is not None
            self._phrases[key] = found
        return found

    def idf(self, query_terms: Iterable[str]) -> dict[str, float]:
        """BM25 inverse document frequency of each term; a word no tool has gets the highest
        value (it says the most about what the query wants, and nothing serves it)."""
        n = max(len(self._rowids), 1)
        return {
            t: math.log(1 + (n - df + 0.5) / (df + 0.5))
            for t, df in self.doc_freq(query_terms).items()
        }

    def coverage(
        self, names: list[str], idf: dict[str, float]
    ) -> dict[str, tuple[float, tuple[str, ...]]]:
        """Per tool: the share of the query's IDF mass (``idf``, from :meth:`idf`) found in
        its fields, and those fields (the summary is part of the description, so it is not
        reported on its own)."""
        total = sum(idf.values())
        padded = [(f" {t} ", t) for t in idf]  # a term inside a field's space-joined terms
        out = {}
        for name, fields in self.fields_of(names).items():
            found: set[str] = set()
            matched = []
            for field in _REPORTED_FIELDS:
                text = f" {fields[field]} "
                hit = [t for p, t in padded if p in text]
                if hit:
                    found.update(hit)
                    matched.append(field)
            share = sum(idf[t] for t in found) / total if total else 0.0
            out[name] = (share, tuple(matched))
        return out

    def fields_of(self, names: Iterable[str]) -> dict[str, dict[str, str]]:
        """The indexed (term-split) text of some tools, by name and field."""
        out = {}
        for name in names:
            rowid = self._rowids.get(name)
            if rowid is not None:
                out[name] = dict(zip(FIELDS, self._fields[rowid], strict=True))
        return out

    def optimize(self) -> None:
        """Merge the index segments into one (after a bulk load: queries get faster)."""
        self._db.execute("INSERT INTO docs(docs) VALUES('optimize')")
        self._db.execute("INSERT INTO bound(bound) VALUES('optimize')")

    def close(self) -> None:
        self._db.close()
