"""Ranked tool search: a keyword index, optionally fused with sentence embeddings.

:class:`SearchIndex` is what ``Registry.search``, ``tool_search``, ``%tool search``, the
catalog, the CLI and REST all use. It follows the registry incrementally through
:meth:`SearchIndex.update` (one SQLite FTS5 row per tool, replaced in place), and answers
queries ranked best first. A query runs through named stages:

0. **spelling** (a signal, switchable like the others of stage 3): a word that no tool
   contains and that is not an English word, one slip from a word that some tool contains
   or from a service name, is read as that word (:mod:`.spelling`, :meth:`SearchIndex.spelled`);
1. **candidates**: BM25F over the tool's fields (:mod:`.fts`) and, in hybrid mode, the
   nearest tools by sentence embedding (:mod:`.dense`, :mod:`.embeddings`);
2. **fusion** of the two rankings and dense-to-sparse feedback (:mod:`.fusion`);
3. **signals**, each switchable (``search: {signals: {...}}`` in ``nex.yaml``, or
   :class:`~.options.SearchOptions`): ``spelling`` (stage 0), ``abbreviations`` (a short
   form also searches its long form, applied to the query terms of stage 1), ``slots``
   (:mod:`.slots`), ``intent`` (:mod:`.intent`) and ``services`` (:mod:`.scope`);
4. **confidence**: each candidate's confidence, the threshold and the margin
   (:mod:`.confidence`).

The word lists the signals read are data files (:mod:`.vocabulary`).

- a query that names a tool (``get_me``, ``getMe``, ``github__get_me``) puts it first;
- ``"keyword"`` mode ranks with BM25 over the name (split on ``_``/``-``/camelCase), the
  summary (the description's first sentence, which says what the tool is for, counted once
  more), the description, parameter names and descriptions, categories, capabilities and
  the source. Query words inside argument values (quoted text, URLs, paths, owner/repo) are
  not search terms, and an abbreviation also searches its long form ("PR" -> pull request);
- ``"hybrid"`` mode (the ``semantic`` extra) fuses that ranking with all-MiniLM-L6-v2
  cosine similarity (:mod:`.fusion`), which finds tools described in other words
  ("what's inside the /data folder" -> ``list_directory``), and searches the words that
  distinguish the best embedding hits as a second keyword query (dense-to-sparse feedback);
- in both modes a tool that fits the request gains: one whose parameters take the values the
  query carries (a URL, a path, an id: :mod:`.slots`), and one that reads for a
  question or writes for a command (:mod:`.intent`);
- every hit is confident on its own. Its ``score`` is a confidence in [0, 1] on one scale for
  every query of a mode: in keyword mode the share of the query's IDF mass (its rare words
  weigh most) that the tool's fields contain; in hybrid mode the cosine similarity of the
  query (or of the query without its argument values, when that is higher) to the tool's
  nearest embedded view (all-MiniLM-L6-v2: unrelated text sits near 0, a paraphrase of the
  tool's purpose at 0.5 and above). A hit must reach ``threshold``
  (:data:`~.confidence.DEFAULT_THRESHOLDS`: 0.1 keyword, 0.2 hybrid) and rank within
  :data:`~.confidence.MARGINS` of the best candidate, so a query one tool fits gets that
  tool alone. Scores never rise down the list (each is capped by the one before), so a
  caller's own cut keeps a prefix; an exact name scores 1.0;
- a query no tool serves returns ``[]``: nothing reaches the threshold. A query that names
  a service no indexed tool mentions (:mod:`.scope`; :meth:`SearchIndex.unserved_services`
  says which) needs :data:`~.confidence.SERVICE_PENALTY` more confidence: a generic tool
  that fits the rest of the request is scored down, not hidden. So does a tool that only
  reads for a request to change something, and one that writes for a question
  (:data:`~.confidence.INTENT_PENALTY`). :meth:`SearchIndex.suggest`
  offers near names.

>>> from nexus_jupyter.core.tools.spec import ToolSpec
>>> index = SearchIndex("keyword")
>>> index.update([ToolSpec("list_directory", "List the files in a folder.")])
>>> [hit.name for hit in index.search("files in a folder")]
['list_directory']
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import wait
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..tools.spec import ToolSpec
from .confidence import (
    DEFAULT_THRESHOLDS,
    INTENT_PENALTY,
    MARGINS,
    SERVICE_PENALTY,
    SHARES,
    UNREAD_PENALTY,
    Candidate,
    confident,
    scored_down,
)
from .filter import make_filter
from .fts import KeywordEngine
from .fusion import (
    FEEDBACK_DOCS,
    FEEDBACK_TERMS,
    FEEDBACK_WEIGHT,
    dense_ranking,
    expansion_terms,
    fuse,
)
from .intent import query_action, query_intent, tool_action, tool_intent
from .model_files import fetch_model, semantic_missing
from .options import SearchOptions
from .results import SearchHit, SearchResults
from .scope import mentioned_services
from .slots import query_slots, slot_share, tool_slots, without_values
from .spelling import QuerySpelling
from .text import (
    embedding_texts,
    normalize_name,
    query_terms,
    split_identifier,
    terms,
)
from .vocabulary import Vocabulary, default_vocabulary
from .weights import (
    ACTION_WEIGHT,
    CLOSE_WAIT_S,
    FEEDBACK_POOL,
    FUSION_POOL,
    INTENT_WEIGHT,
    LENGTH_PRIOR,
    NAME_BONUS,
    POOL,
    SLOT_WEIGHT,
)

if TYPE_CHECKING:
    from .dense import DenseIndex

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "SearchHit",
    "SearchIndex",
    "SearchResults",
    "make_filter",
    "semantic_missing",
]


_fallback_said = False  # ``auto`` says once per process when it falls back to keyword


def _say_fallback(reason: str) -> None:
    global _fallback_said
    if not _fallback_said:
        _fallback_said = True
        log.warning("Search uses keyword mode: hybrid search cannot run (%s).", reason)


class SearchIndex:
    """Tools searchable by name, words and (in hybrid mode) meaning; see the module docs.

    ``mode`` is ``"keyword"``, ``"hybrid"`` or ``"auto"`` (hybrid when the ``semantic``
    extra is installed), or :class:`~.options.SearchOptions` (or a mapping of them) that
    also switch signals and add words. ``threshold`` is the confidence every result must
    reach (default :data:`DEFAULT_THRESHOLDS` for the mode; settable). ``cache_dir`` holds
    the embedding cache in hybrid mode. Every method is thread-safe.
    """

    def __init__(
        self,
        mode: str | SearchOptions | Any = "auto",
        *,
        threshold: float | None = None,
        cache_dir: str | Path | None = None,
    ) -> None:
        options = SearchOptions.coerce(mode).with_threshold(threshold)
        self.options = options
        self.signals = options.signals
        self.vocabulary: Vocabulary = (
            Vocabulary.load(services=options.services, abbreviations=options.abbreviations)
            if options.services or options.abbreviations
            else default_vocabulary()
        )
        mode, threshold = options.mode, options.threshold
        missing = semantic_missing(options.model_path) if mode != "keyword" else None
        if missing and not options.model_path and fetch_model() is not None:
            missing = None  # downloaded into the Hugging Face cache, as other libraries do
        elif missing and not options.model_path:
            missing = semantic_missing()  # now with why the download failed, if it did
        if mode == "hybrid" and missing:
            raise ConfigError(
                f"Search mode 'hybrid' cannot run: {missing}. Or use search='keyword'."
            )
        if missing:
            _say_fallback(missing)
        self.mode: str = "keyword" if mode == "keyword" or missing else "hybrid"
        self.threshold: float = DEFAULT_THRESHOLDS[self.mode] if threshold is None else threshold
        self._lock = threading.RLock()
        # One embedding run at a time: a search during the warm-up waits for it instead of
        # embedding the same texts again in step with it (which doubled the wait).
        self._embedding = threading.Lock()
        self._specs: dict[str, ToolSpec] = {}
        self._by_words: dict[str, set[str]] = {}  # normalize_name(name or local part) -> names
        self._name_terms: dict[str, frozenset[str]] = {}  # a tool's own name (no server) as terms
        # per tool: kinds of value its parameters take (bit mask), reads (+1) or writes (-1),
        # the kind of change its name says it makes ("create", "change", "delete" or None)
        self._fit: dict[str, tuple[int, int, str | None]] = {}
        self._keyword = KeywordEngine(LENGTH_PRIOR[self.mode])
        self._spelling = QuerySpelling(self._keyword, self.vocabulary)
        self._dense: DenseIndex | None = None
        if self.mode == "hybrid":
            from .dense import DenseIndex

            self._dense = DenseIndex(
                cache_dir, model_path=options.model_path, precision=options.model_precision
            )

    def __len__(self) -> int:
        return len(self._specs)

    def __repr__(self) -> str:
        return f"<SearchIndex mode={self.mode!r} tools={len(self)} threshold={self.threshold}>"

    @property
    def embedded_count(self) -> int:
        """How many texts this index ran through the model (cache hits excluded)."""
        return self._dense.encoded if self._dense is not None else 0

    # -- updates --------------------------------------------------------------------------

    def update(self, upserts: Iterable[ToolSpec] = (), removals: Iterable[str] = ()) -> None:
        """Apply a registry change: remove ``removals`` by name, add or replace ``upserts``."""
        with self._lock:
            for name in removals:
                self._remove(name)
            changed = [s for s in upserts if self._specs.get(s.name) != s]
            for spec in changed:
                if spec.name not in self._specs:  # a replaced tool keeps its name entries
                    self._name_terms[spec.name] = frozenset(terms(spec.name.rsplit("__", 1)[-1]))
                    for key in self._name_keys(spec.name):
                        self._by_words.setdefault(key, set()).add(spec.name)
                self._specs[spec.name] = spec
                own_words = split_identifier(spec.name.rsplit("__", 1)[-1])
                self._fit[spec.name] = (
                    tool_slots(spec.input_schema),
                    tool_intent(spec),
                    tool_action(own_words, self.vocabulary.verbs),
                )
                if self._dense is not None:
                    self._dense.upsert(spec.name, embedding_texts(spec))
            if len(changed) > 1:
                self._keyword.upsert_many(changed)
            elif changed:
                self._keyword.upsert(changed[0])

    def _remove(self, name: str) -> None:
        if self._specs.pop(name, None) is None:
            return
        self._name_terms.pop(name, None)
        self._fit.pop(name, None)
        for key in self._name_keys(name):
            names = self._by_words.get(key)
            if names is not None:
                names.discard(name)
                if not names:
                    del self._by_words[key]
        self._keyword.remove(name)
        if self._dense is not None:
            self._dense.remove(name)

    @staticmethod
    def _name_keys(name: str) -> set[str]:
        # The full name and the part after the last "__" (an MCP tool's own name).
        return {normalize_name(name), normalize_name(name.rsplit("__", 1)[-1])}

    def warm(self) -> None:
        """Embed pending tools now (otherwise the next search does it).

        The model runs outside the index lock, so searches and registry updates are not held
        up while it works (seconds for a cold cache); only the final, cached flush locks.
        """
        self._embed_pending()
        with self._lock:
            if self._dense is not None:
                self._dense.flush()

    def _embed_pending(self) -> None:
        """Run the model on pending tools' texts outside the lock (the results land in the
        disk cache, so the locked flush that follows only copies vectors). Holding the lock
        through the model would stall every registry update behind a search."""
        if self._dense is None:
            return
        with self._embedding:
            with self._lock:
                texts = self._dense.uncached_texts()
            if texts:
                self._dense.precompute(texts)

    # -- queries --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        filter: Callable[[ToolSpec], bool] | None = None,
        threshold: float | None = None,
    ) -> list[SearchHit]:
        """The best ``limit`` tools for ``query``, best first; ``[]`` when none is confident.

        An empty query lists every tool (that ``filter`` keeps) by name with score 0.
        """
        return list(self.search_results(query, limit, filter=filter, threshold=threshold).hits)

    def search_results(
        self,
        query: str,
        limit: int = 10,
        *,
        filter: Callable[[ToolSpec], bool] | None = None,
        threshold: float | None = None,
    ) -> SearchResults:
        """:meth:`search`'s hits with how it read ``query``: as :meth:`spelled` reads it and
        with the :meth:`unserved_services` it names, from the same pass (a face that shows
        all three shows one reading of one index state)."""
        keep = filter
        threshold = self.threshold if threshold is None else threshold
        self._embed_pending()
        with self._lock:
            if not query.strip():
                names = sorted(n for n, s in self._specs.items() if keep is None or keep(s))
                listed = tuple(SearchHit(n, 0.0, self._specs[n]) for n in names[:limit])
                return SearchResults(query, query, listed, ())
            exact = self._exact(query, keep)
            spelled = self._spelled(query)
            if not exact and spelled != query:  # a misspelt tool name
                exact = self._exact(spelled, keep)
            unserved = self._unserved(spelled)
            if self._dense is None:
                ranked = self._keyword_candidates(spelled, limit + len(exact), keep)
            else:
                ranked = self._hybrid_candidates(spelled, limit + len(exact), keep, threshold)
            ranked = [c for c in ranked if c.name not in exact]
            if unserved:
                ranked = scored_down(ranked, SERVICE_PENALTY[self.mode])
            # (a keyword candidate has a word some tool contains: only hybrid can lack one)
            if ranked and self._dense is not None and not self._reads(spelled):
                ranked = scored_down(ranked, UNREAD_PENALTY[self.mode])
            intent = query_intent(spelled, self.vocabulary.verbs) if self.signals.intent else 0
            if intent:
                fit = self._fit
                ranked = scored_down(  # a tool that reads cannot make the change asked for
                    ranked, INTENT_PENALTY[self.mode], lambda n: fit[n][1] * intent < 0
                )
            first = [SearchHit(n, 1.0, self._specs[n], ("name",)) for n in exact]
            hits = [
                SearchHit(c.name, c.confidence, self._specs[c.name], c.matched)
                for c in confident(
                    ranked, threshold, MARGINS[self.mode], SHARES[self.mode], 1.0 if exact else 0.0
                )
            ]
            return SearchResults(query, spelled, tuple((first + hits)[:limit]), tuple(unserved))

    def spelled(self, query: str) -> str:
        """``query`` as search reads it: each word that no indexed tool contains and that is
        not an English word, when one edit from an indexed word or a service name, replaced
        by it ("serach notion" -> "search notion", "Zendsek" -> "Zendesk"). Argument values,
        names given after "called", "named" or "titled", abbreviations and words inside ids
        or hyphenated names stay as written. ``query`` itself when nothing changes or the
        ``spelling`` signal is off. See :mod:`.spelling`."""
        with self._lock:
            return self._spelled(query)

    def _spelled(self, query: str) -> str:
        return self._spelling.read(query) if self.signals.spelling else query

    def unserved_services(self, query: str) -> list[str]:
        """Services ``query`` names that no indexed tool mentions, as the query writes them
        (``["Acmeboard"]`` for "add a card to our Acmeboard board" when no tool mentions
        it) or as :meth:`spelled` reads a misspelt one; such a query's hits are scored
        down. See :mod:`.scope`."""
        with self._lock:
            return self._unserved(self._spelled(query))

    def _unserved(self, query: str) -> list[str]:
        if not self.signals.services:
            return []
        return [
            name
            for name in mentioned_services(query, self.vocabulary)
            if not self._keyword.has_phrase(terms(name))
        ]

    def _reads(self, query: str) -> bool:
        """Whether search can read a word of ``query`` (:meth:`.QuerySpelling.reads_a_word`)."""
        dense = self._dense
        knows = dense.knows_word if dense is not None else (lambda _word: False)
        return self._spelling.reads_a_word(self._query_terms(query), knows)

    def _exact(self, query: str, keep: Callable[[ToolSpec], bool] | None) -> list[str]:
        q = query.strip()
        if q in self._specs:
            names = [q]
        else:
            words = normalize_name(q)
            names = sorted(self._by_words.get(words, ()), key=lambda n: (len(n), n))
        return [n for n in names if keep is None or keep(self._specs[n])]

    def _keep_name(self, keep: Callable[[ToolSpec], bool] | None) -> Callable[[str], bool] | None:
        if keep is None:
            return None
        specs = self._specs
        return lambda name: keep(specs[name])

    def _keyword_ranking(
        self, q_terms: list[str], pool: int, keep: Callable[[ToolSpec], bool] | None
    ) -> list[tuple[str, float]]:
        """BM25 candidates re-scored: BM25 relative to the best, plus a bonus when every word
        of a tool's own name is in the query (the query spells the name out)."""
        ranked = list(self._keyword.ranked(q_terms, keep=self._keep_name(keep), limit=pool))
        if not ranked:
            return []
        best = ranked[0][1] or 1.0
        words = set(q_terms)
        scored = []
        for name, bm25 in ranked[:pool]:
            own = self._name_terms.get(name)
            bonus = NAME_BONUS if own and own <= words else 0.0
            scored.append((name, bm25 / best + bonus))
        scored.sort(key=lambda item: -item[1])
        return scored

    def _query_terms(self, query: str) -> list[str]:
        """The keyword terms of ``query``: its words outside argument values (see
        :func:`.slots.without_values`), or all of them when values are all it has; with
        abbreviations expanded unless that signal is off."""
        short = self.vocabulary.abbreviations if self.signals.abbreviations else {}
        return query_terms(without_values(query), short) or query_terms(query, short)

    def _keyword_candidates(
        self, query: str, limit: int, keep: Callable[[ToolSpec], bool] | None
    ) -> list[Candidate]:
        """Keyword candidates best first; confidence = the share of the query's IDF mass
        the tool's fields contain."""
        q_terms = self._query_terms(query)
        ranking = self._with_fit(
            query, self._keyword_ranking(q_terms, max(POOL, limit), keep), "keyword"
        )
        ranking = ranking[: max(POOL, limit)]
        coverage = self._keyword.coverage([name for name, _ in ranking], self._keyword.idf(q_terms))
        return [Candidate(name, score, *coverage.get(name, (0.0, ()))) for name, score in ranking]

    def _hybrid_candidates(
        self, query: str, limit: int, keep: Callable[[ToolSpec], bool] | None, threshold: float
    ) -> list[Candidate]:
        """Fused candidates best first; confidence = the cosine similarity of the query to
        the tool's nearest view, or of the query without its argument values when that is
        higher (quoted text, a URL or a path can outweigh the words that ask for the tool: a
        request to open an issue that quotes a browser bug is about an issue, not the
        browser; on the two dev query sets this found two more queries' tools in the top
        five and changed nothing else)."""
        from .dense import SPLIT_AT, side_thread  # numpy: hybrid mode only

        assert self._dense is not None
        pool = max(FUSION_POOL, limit)
        q_terms = self._query_terms(query)
        bare = " ".join(without_values(query).split())
        has_values = bool(bare) and bare != " ".join(query.split())
        if has_values:  # both in one call of the model (a text's vector ignores its batch-mates)
            self._dense.embed_queries([query, bare])
        # A large index ranks by keyword while the query is encoded, unless a filter must run:
        # it is the caller's code, which may use this index or expect the caller's thread.
        large = len(self._specs) >= SPLIT_AT and keep is None
        side = side_thread() if large else None
        if side is None:
            sims = self._dense.similarities(query)
            keyword = None
        else:
            job = side.submit(self._keyword_ranking, q_terms, pool, keep)
            try:
                sims = self._dense.similarities(query)
            except BaseException:
                wait([job])  # it reads the keyword index: done before the lock is let go
                raise
            keyword = job.result()
        dense = dense_ranking(sims, self._dense.names, pool, self._keep_name(keep))
        if not dense or (dense[0][1] < threshold and not has_values):
            return []  # no tool is that close, so none can be confident
        if keyword is None:
            keyword = self._keyword_ranking(q_terms, pool, keep)
        seeds = [name for name, _ in dense[:FEEDBACK_DOCS]]
        feedback = self._feedback(q_terms, seeds, max(FEEDBACK_POOL, limit), keep)
        cosine = dict(dense)
        slots = self._dense.slots
        for name, _ in keyword + feedback:
            if name not in cosine and name in slots:
                cosine[name] = float(sims[slots[name]])
        fused = fuse(keyword, cosine, float(sims.mean()), float(sims.std()))
        for name, score in feedback:
            fused[name] = fused.get(name, 0.0) + FEEDBACK_WEIGHT * score
        fused = dict(self._with_fit(query, list(fused.items()), "hybrid"))
        best_names = sorted(fused, key=lambda n: (-fused[n], n))[: max(POOL, limit)]
        coverage = self._keyword.coverage(best_names, self._keyword.idf(q_terms))
        request = self._dense.cosines(bare, best_names) if has_values else {}
        in_dense = {name for name, _ in dense}
        out = []
        for name in best_names:
            matched = coverage[name][1] if name in coverage else ()
            if name in in_dense:
                matched += ("semantic",)
            confidence = max(cosine.get(name, 0.0), request.get(name, 0.0))
            out.append(Candidate(name, fused[name], confidence, matched))
        return out

    def _with_fit(
        self, query: str, scored: list[tuple[str, float]], mode: str
    ) -> list[tuple[str, float]]:
        """``scored`` plus how well each tool fits the request (see :data:`SLOT_WEIGHT`),
        best first."""
        verbs = self.vocabulary.verbs
        wanted = query_slots(query) if self.signals.slots else 0
        intent = query_intent(query, verbs) if self.signals.intent else 0
        action = query_action(query, verbs) if self.signals.intent else None
        if not wanted and not intent and not action:
            return scored
        slot_weight, intent_weight = SLOT_WEIGHT[mode], INTENT_WEIGHT[mode] * intent
        action_weight = ACTION_WEIGHT[mode]
        fit = self._fit
        out = []
        for name, score in scored:
            slots, reads, makes = fit.get(name, (0, 0, None))
            out.append(
                (
                    name,
                    score
                    + slot_weight * slot_share(slots, wanted)
                    + intent_weight * reads
                    + (action_weight if action and makes == action else 0.0),
                )
            )
        out.sort(key=lambda item: -item[1])
        return out

    def _feedback(
        self,
        q_terms: list[str],
        seeds: list[str],
        pool: int,
        keep: Callable[[ToolSpec], bool] | None,
    ) -> list[tuple[str, float]]:
        """Keyword ranking of the words that distinguish ``seeds`` (the best embedding hits)
        and are not in the query, each score relative to the best (see :mod:`.fusion`)."""
        docs = [" ".join(fields.values()) for fields in self._keyword.fields_of(seeds).values()]
        words = expansion_terms(docs, q_terms, self._keyword.idf, FEEDBACK_TERMS)
        if not words:
            return []
        ranked = self._keyword.ranked(words, keep=self._keep_name(keep), limit=pool)[:pool]
        best = (ranked[0][1] if ranked else 0.0) or 1.0
        return [(name, score / best) for name, score in ranked]

    def suggest(self, query: str, limit: int = 3) -> list[str]:
        """Tool names close to ``query`` in spelling ("did you mean"), closest first."""
        text = query.strip().lower()
        if not text:
            return []
        with self._lock:
            by_key: dict[str, str] = {}
            for name in sorted(self._specs):
                by_key.setdefault(name.lower(), name)
                by_key.setdefault(name.rsplit("__", 1)[-1].lower(), name)
        out: list[str] = []
        for key in difflib.get_close_matches(text, list(by_key), n=limit * 2, cutoff=0.6):
            if by_key[key] not in out:
                out.append(by_key[key])
        return out[:limit]

    def select(self, names: Iterable[str]) -> list[ToolSpec]:
        """The specs of ``names`` in the order given (``tool_search("select:A,B")``);
        unknown names are skipped, names also match case-insensitively."""
        with self._lock:
            lowered = {n.lower(): s for n, s in self._specs.items()}
            out: list[ToolSpec] = []
            for raw in names:
                name = raw.strip()
                spec = self._specs.get(name) or lowered.get(name.lower())
                if spec is not None and spec not in out:
                    out.append(spec)
            return out

    def stop_warming(self, wait: float = CLOSE_WAIT_S) -> bool:
        """Stop the warm-up's embedding between two chunks and wait up to ``wait`` seconds
        for the current one: a process must not exit normally while ONNX Runtime runs (it
        aborts with "terminate called without an active exception"). Searches still work,
        embedding what they need. Whether the warm-up has stopped."""
        if self._dense is None:
            return True
        self._dense.stop()
        if self._embedding.acquire(timeout=wait):
            self._embedding.release()
            return True
        if wait > 0:
            log.warning("the search warm-up did not stop within %g s", wait)
        return False

    def close(self, wait: float = CLOSE_WAIT_S) -> None:
        """Stop the warm-up (:meth:`stop_warming`), then free the keyword index and the
        vector cache; a warm-up still busy after ``wait`` keeps the cache it writes to."""
        stopped = self.stop_warming(wait)
        with self._lock:
            self._keyword.close()
            if self._dense is not None and stopped:
                self._dense.close()
