"""The dense half of hybrid search: tool embeddings in numpy matrices, updated in place.

Each tool is embedded as a few views (see :func:`~.text.embedding_texts`); its
similarity to a query is the best of them. Vectors come from the disk cache where possible
and from the encoder otherwise (see :mod:`.embeddings`).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .embeddings import (
    EmbeddingCache,
    QueryCache,
    default_variant,
    shared_model,
    single_threaded_blas,
)

__all__ = ["SPLIT_AT", "DenseIndex", "side_thread"]

#: From this many tools a query's similarities are computed in two halves on two threads.
#: Reading the vectors is what costs (three views of 10,000 tools are 46 MB of float32, far
#: more than the caches), and one core reads only so fast: on this 2-core machine 4.6 ms on
#: one thread, 2.4 ms on two at 10,000 tools. Below it the hand-over costs more than it saves.
SPLIT_AT = 4096
_pools: dict[str, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(name: str, workers: int) -> ThreadPoolExecutor | None:
    """The process's shared thread pool ``name``, or None on a one-core machine."""
    if (os.cpu_count() or 1) < 2:
        return None
    with _pools_lock:
        pool = _pools.get(name)
        if pool is None:
            pool = _pools[name] = ThreadPoolExecutor(workers, thread_name_prefix=name)
        return pool


def _second_thread() -> ThreadPoolExecutor | None:
    """One shared helper thread for the other half of a large index's similarities."""
    return _pool("nexus-search-dense", 1)


def side_thread() -> ThreadPoolExecutor | None:
    """Shared threads for work a large index's query can do while the query is encoded
    (its keyword ranking: SQLite and ONNX Runtime both release the GIL), or None on a
    one-core machine."""
    return _pool("nexus-search-keyword", 4)


class DenseIndex:
    """Unit vectors of tool texts, updated in place; per tool the best cosine of its views.

    Every tool has the same number of views (texts); view ``v`` of all tools is one matrix.
    ``upsert`` only records the texts; vectors are computed in batches by :meth:`flush`
    (which the first search after a change calls), from the disk cache where possible.
    ``encoded`` counts texts that went through the model, for tests and benchmarks.
    """

    def __init__(
        self,
        cache_dir: str | Path | None = None,
        model: Any = None,
        model_path: str | Path | None = None,
        precision: str | None = None,
    ) -> None:
        self._model = model
        self._model_path = model_path
        self._precision = precision  # the sentence model's graph; None: the default
        # The kind of vectors the model makes keys the disk cache; without a model it is
        # settled on first use (:attr:`variant`), since finding it imports ONNX Runtime.
        self._variant: str | None = getattr(model, "variant", None) if model is not None else None
        self.cache = EmbeddingCache(cache_dir, self._variant or "fp32")
        self._queries = QueryCache()
        self.dim = 384
        self.names: list[str] = []
        self.slots: dict[str, int] = {}  # name -> column in the matrices
        self._texts: dict[str, tuple[str, ...]] = {}
        self._matrix = np.zeros((0, 0, self.dim), dtype=np.float32)  # (views, slots, dim)
        self._pending: dict[str, tuple[str, ...]] = {}
        self.encoded = 0
        #: Set by :meth:`stop`: the warm-up embeds no further chunk. A process that exits
        #: while ONNX Runtime is inside a run aborts ("terminate called without an active
        #: exception"), so servers stop the warm-up before they exit.
        self.stopping = threading.Event()

    @property
    def variant(self) -> str:
        """The kind of vectors this index holds (``"smooth8"``, ``"fp32"``, ``"int8"``), the
        same :func:`~.embeddings.default_variant` and the shared model settle on."""
        return self._settle_variant()

    def _settle_variant(self) -> str:
        """Settle :attr:`variant` (and so the disk cache's keys) before any cache lookup."""
        if self._variant is None:
            self._variant = self.cache.variant = default_variant(self._precision)
        return self._variant

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = shared_model(self._model_path, self._precision)
        return self._model

    def knows_word(self, word: str) -> bool:
        """Whether the model's vocabulary holds ``word`` whole (one word piece): the model
        has seen it as a word, not only as the letters of something else."""
        tokenizer = getattr(self.model, "tokenizer", None)
        return tokenizer is not None and tokenizer.token_to_id(word) is not None

    def upsert(self, name: str, texts: str | tuple[str, ...]) -> None:
        views = (texts,) if isinstance(texts, str) else tuple(texts)
        if self._texts.get(name) == views and name not in self._pending:
            return
        if self._matrix.shape[0] and len(views) != self._matrix.shape[0]:
            raise ValueError(
                f"{name!r} has {len(views)} views; this index holds "
                f"{self._matrix.shape[0]} per tool."
            )
        self._texts[name] = views
        self._pending[name] = views

    def remove(self, name: str) -> None:
        self._texts.pop(name, None)
        self._pending.pop(name, None)
        slot = self.slots.pop(name, None)
        if slot is None:
            return
        last = len(self.names) - 1
        if slot != last:  # move the last row into the hole
            moved = self.names[last]
            self.names[slot] = moved
            self.slots[moved] = slot
            self._matrix[:, slot] = self._matrix[:, last]
        self.names.pop()

    def uncached_texts(self) -> list[str]:
        """Texts of pending tools that the disk cache does not hold yet (under the index lock)."""
        self._settle_variant()
        keys = {self.cache.key(t): t for views in self._pending.values() for t in views}
        cached = self.cache.get_many(keys)
        return sorted({t for k, t in keys.items() if k not in cached})

    def precompute(self, texts: list[str], batch: int = 16) -> None:
        """Embed ``texts`` into the disk cache only. It touches no index state, so it runs
        without the index lock; the next :meth:`flush` then finds every vector cached. Texts
        go in by length, so a batch pads little; chunks of a few model batches (the encoder
        spreads them over the cores) let a query's embedding slip in between them, and
        :meth:`stop` end the work between two of them (a fraction of a second)."""
        texts = sorted(texts, key=len)
        self._settle_variant()
        for start in range(0, len(texts), batch):
            if self.stopping.is_set():
                return
            chunk = texts[start : start + batch]
            fresh = self.model.encode(chunk)
            self.encoded += len(chunk)
            self.cache.put_many({self.cache.key(t): v for t, v in zip(chunk, fresh, strict=True)})

    def stop(self) -> None:
        """Embed nothing more in :meth:`precompute` (the index is closing)."""
        self.stopping.set()

    def flush(self) -> None:
        """Embed every tool whose texts changed since the last flush."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        self._settle_variant()
        keys = {name: [self.cache.key(t) for t in views] for name, views in pending.items()}
        cached = self.cache.get_many({k for ks in keys.values() for k in ks})
        texts = {k: t for n, ks in keys.items() for k, t in zip(ks, pending[n], strict=True)}
        missing = sorted({t for k, t in texts.items() if k not in cached})
        if missing:
            fresh = self.model.encode(missing)
            self.encoded += len(missing)
            new = {self.cache.key(t): v for t, v in zip(missing, fresh, strict=True)}
            self.cache.put_many(new)
            cached.update(new)
        for name, ks in keys.items():
            self._set(name, np.stack([cached[k] for k in ks]))

    def _set(self, name: str, vecs: np.ndarray) -> None:
        """Store ``vecs`` (views x dim) as the vectors of ``name``."""
        if self._matrix.shape[0] != len(vecs):
            self._matrix = np.zeros((len(vecs), 64, self.dim), dtype=np.float32)
        slot = self.slots.get(name)
        if slot is None:
            slot = len(self.names)
            if slot >= self._matrix.shape[1]:
                grown = np.zeros((len(vecs), 2 * self._matrix.shape[1], self.dim), np.float32)
                grown[:, : self._matrix.shape[1]] = self._matrix
                self._matrix = grown
            self.names.append(name)
            self.slots[name] = slot
        self._matrix[:, slot] = vecs

    def cosines(self, text: str, names: list[str]) -> dict[str, float]:
        """Best cosine of ``text`` to the views of each of ``names`` (tools without vectors
        are left out): a few columns, not the whole matrix."""
        self.flush()
        picked = [(name, self.slots[name]) for name in names if name in self.slots]
        if not picked:
            return {}
        vec = self.embed_query(text)
        columns = [slot for _, slot in picked]
        with single_threaded_blas():
            best = (self._matrix[:, columns] @ vec).max(axis=0)
        return {name: float(value) for (name, _), value in zip(picked, best, strict=True)}

    def embed_queries(self, texts: list[str]) -> None:
        """Encode the ``texts`` not cached yet in one call of the model (into the query cache):
        one run for fp32 and block8, one run per text on the model's threads for smooth8 and
        int8."""
        fresh = [t for t in dict.fromkeys(texts) if self._queries.get(t) is None]
        if fresh:
            for text, vec in zip(fresh, self.model.encode(fresh), strict=True):
                self._queries.put(text, vec)

    def embed_query(self, text: str) -> np.ndarray:
        vec = self._queries.get(text)
        if vec is None:
            vec = self.model.encode([text])[0]
            self._queries.put(text, vec)
        return vec

    def similarities(self, query: str) -> np.ndarray:
        """Best cosine similarity of ``query`` to each tool's views, aligned with :attr:`names`."""
        self.flush()
        if not self.names:
            return np.zeros(0, dtype=np.float32)
        vec = self.embed_query(query)
        matrix = self._matrix[:, : len(self.names)]
        # BLAS on one thread (its own threads spin against each other on a busy machine);
        # a large index is split over two threads of ours instead, which wait, not spin.
        with single_threaded_blas():
            pool = _second_thread() if len(self.names) >= SPLIT_AT else None
            if pool is None:
                return np.asarray((matrix @ vec).max(axis=0))
            out = np.empty(len(self.names), dtype=np.float32)
            half = len(self.names) // 2

            def part(lo: int, hi: int) -> None:
                out[lo:hi] = (matrix[:, lo:hi] @ vec).max(axis=0)

            other = pool.submit(part, half, len(self.names))
            part(0, half)
            other.result()
            return out

    def close(self) -> None:
        self.cache.close()
