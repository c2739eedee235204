"""The keyword engine: an in-memory SQLite FTS5 table ranked with BM25.

Text is split into terms in Python (:mod:`.search_text`) and stored space-joined, so the
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
  (WAND/MaxScore). Ranking only the rows holding the query's rarest words was tried and
  dropped: it lost the right tool whenever the rarest word was one the tool lacks (a plural
  in the query: hit@10 on the synthetic 10k catalog fell from 0.87 to 0.02), and the
  MaxScore bound that would make it exact almost never held for 3-4 word queries.

- ``detail=column`` and ``detail=none`` (smaller postings) were 5% faster at best and broke
  ranking: recall@1 on the toolret queries fell from 0.67 to 0.12.
- On a quiet 2-core machine (2026-11-22): p50 0.86 ms at 10k synthetic tools and 5.2 ms at
  100k; SQLite is 70% of that, the confidence check most of the rest. Under load from other
  processes the same run measured 1.3-2.2 ms and 12.7 ms.

Not thread-safe on its own: :class:`~.search.SearchIndex` serialises access with a lock.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterable

from .search_text import FIELDS, tool_fields
from .spec import ToolSpec

__all__ = ["FIELD_WEIGHTS", "KeywordEngine"]

#: BM25 column weights, in :data:`~.search_text.FIELDS` order. The name is written to be
#: found; the other fields count the same (weights tuned on one query set did not carry over).
FIELD_WEIGHTS: dict[str, float] = {
    "name": 2.0,
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
_COLS = ", ".join(f"c{n}" for n in range(len(_GROUPS)))
_MARKS = ", ".join("?" * len(_GROUPS))
_BM25 = f"bm25(docs, {', '.join(str(FIELD_WEIGHTS[FIELDS[g[0]]]) for g in _GROUPS)})"


def _columns(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(" ".join(values[i] for i in group if values[i]) for group in _GROUPS)


class KeywordEngine:
    """BM25 over the fields of each tool. Scores are positive, higher is better."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._db.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5({_COLS}, content='', tokenize='unicode61')"
        )
        self._db.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(docs, 'row')")
        self._rowids: dict[str, int] = {}
        self._names: dict[int, str] = {}
        self._fields: dict[int, tuple[str, ...]] = {}  # rowid -> indexed text, FIELDS order
        self._df: dict[str, int] = {}  # document frequency cache, cleared on every write
        self._next_rowid = 1

    def __len__(self) -> int:
        return len(self._rowids)

    def upsert(self, spec: ToolSpec) -> None:
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
        self._df.clear()
        sql = f"INSERT INTO docs(rowid, {_COLS}) VALUES (?, {_MARKS})"
        self._db.execute(sql, (rowid, *_columns(values)))

    def upsert_many(self, specs: Iterable[ToolSpec]) -> None:
        count = 0
        self._db.execute("BEGIN")
        try:
            for spec in specs:
                self.upsert(spec)
                count += 1
        finally:
            self._db.execute("COMMIT")
        if count >= 256:
            self.optimize()

    def _delete_row(self, rowid: int) -> None:
        # A contentless table forgets the text: FTS5 needs the indexed values to remove them.
        old = self._fields.pop(rowid)
        self._df.clear()
        sql = f"INSERT INTO docs(docs, rowid, {_COLS}) VALUES ('delete', ?, {_MARKS})"
        self._db.execute(sql, (rowid, *_columns(old)))

    def remove(self, name: str) -> None:
        rowid = self._rowids.pop(name, None)
        if rowid is not None:
            del self._names[rowid]
            self._delete_row(rowid)

    def ranked(
        self, query_terms: list[str], *, keep: Callable[[str], bool] | None = None,
        limit: int | None = None,
    ) -> list[tuple[str, float]]:  # fmt: skip
        """``(name, bm25)`` best first for tools matching any term; ``keep`` filters names."""
        df = {t: n for t, n in self.doc_freq(query_terms).items() if n}
        if not df:
            return []
        return self._ranked_by_fts(list(df), keep, limit)

    def _ranked_by_fts(
        self, unique: list[str], keep: Callable[[str], bool] | None, limit: int | None
    ) -> list[tuple[str, float]]:
        match = " OR ".join(f'"{t}"' for t in unique)
        sql = f"SELECT rowid, -{_BM25} AS score FROM docs WHERE docs MATCH ? ORDER BY score DESC"
        args: tuple[object, ...] = (match,)
        if keep is None and limit is not None:
            sql += " LIMIT ?"
            args = (match, limit)
        names = self._names
        rows = self._db.execute(sql, args)
        if keep is None:
            return [(names[rowid], score) for rowid, score in rows]
        return [(names[r], score) for r, score in rows if keep(names[r])]

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

    def idf(self, query_terms: Iterable[str]) -> dict[str, float]:
        """BM25 inverse document frequency of each term; a word no tool has gets the highest
        value (it says the most about what the query wants, and nothing serves it)."""
        n = max(len(self._rowids), 1)
        return {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in self.doc_freq(query_terms).items()}  # fmt: skip

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

    def close(self) -> None:
        self._db.close()
