"""Sentence embeddings for hybrid search: all-MiniLM-L6-v2, on ONNX Runtime or in numpy.

The weights are read straight from the model folder's ``model.safetensors`` (found by
:mod:`.model_files`); the ``tokenizers`` package does the WordPiece split. No torch, no
network. :func:`shared_model` runs them on ONNX Runtime (:mod:`.onnx_model`, the
``semantic`` extra's ``onnxruntime`` and ``onnx``), in int8 with SmoothQuant (``"smooth8"``,
vectors within cosine 0.998 of fp32) unless ``search: {precision: ...}`` picks another
graph (``quantized: true`` is ``precision: int8``, see the note on int8 below); without
those packages it falls back to :class:`MiniLM`, the same plain BERT as a numpy forward
pass in fp32 (embeddings, 6 encoder layers, mean pooling over real tokens, L2
normalisation), 4-8x slower to embed a catalogue cold. Each kind of vector is keyed apart in
the disk cache (its ``variant``).

Texts are cut at 256 word pieces, as sentence-transformers does for this model. Cutting at
128 (its training length) doubled encoding speed on long tool texts (13 -> 27 texts/s) but
lost 3 points of recall@5 and 2 of MRR on the toolret queries.

The matrices here are small (one query is 1 x 384), where a multi-threaded BLAS only adds
hand-over cost; on a busy machine OpenBLAS threads spinning against each other made
encoding 5-12x slower. With ``threadpoolctl`` installed, encoding runs single-threaded
(restored afterwards, so the user's own numpy keeps its threads).

Tool embeddings are cached on disk in a small SQLite file keyed by a hash of the model and
the embedded text, so a restart or a reload only embeds tools whose text changed. The cache
directory is ``$NEXUS_CACHE_DIR/embeddings``, else ``~/.cache/nexus_jupyter/embeddings``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

__all__ = [
    "MODEL_ID",
    "EmbeddingCache",
    "MiniLM",
    "default_cache_dir",
    "model_dir",
    "shared_model",
    "single_threaded_blas",
]

log = logging.getLogger(__name__)

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
# Why plain int8 is opt-in: on the toolret dev queries in hybrid mode, fp32 gives recall@1 0.800,
# recall@5 0.922, MRR 0.849; int8 per channel (weights and activations of every MatMul)
# gave 0.778 / 0.911 / 0.836 with one text per run and 0.767 / 0.889 / 0.823 in batches of
# 32 (a batch shares one activation range), and int8 on the feed-forward MatMuls only
# 0.744 / 0.911 / 0.811: each more than a point below. It embeds about twice as fast as fp32
# (69-80 against 40 toolret tools/s, same run, load 4.5; numpy 9.5). The default
# ``"smooth8"`` keeps fp32's dev figures at 1.6-2x its speed by smoothing the activations
# first, which leaves plain int8 only 1.0-1.2x faster than the default.
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


def model_dir(model_path: str | Path | None = None) -> Path:
    """The folder holding the model's files (see :mod:`.model_files`)."""
    from ..errors import ConfigError
    from .model_files import find_model, semantic_missing

    found = find_model(model_path)
    if found is None:
        raise ConfigError(f"Hybrid search cannot run: {semantic_missing(model_path)}.")
    return found


def default_variant(precision: str | None = None) -> str:
    """The vectors :func:`shared_model` makes for ``precision`` (``None``: the default,
    ``"smooth8"``; see :mod:`.onnx_model`): that precision on ONNX Runtime, ``"fp32"`` for
    the int8-block ones on a runtime without the 8-bit kernel, and ``"fp32"`` from the numpy
    pass."""
    from .onnx_model import BLOCK_KERNEL, PRECISIONS, block8_missing, onnx_missing

    if onnx_missing() is not None:
        return "fp32"
    chosen = precision or PRECISIONS[0]
    if chosen in BLOCK_KERNEL and block8_missing() is not None:
        return "fp32"
    return chosen


def model_cache_root() -> Path:
    """``$NEXUS_CACHE_DIR``, else ``nexus_jupyter`` in the user cache dir (``$XDG_CACHE_HOME``
    or ``~/.cache``)."""
    base = os.environ.get("NEXUS_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "nexus_jupyter"


def default_cache_dir() -> Path:
    return model_cache_root() / "embeddings"


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Tensors of a ``.safetensors`` file as read-only numpy arrays (memory-mapped)."""
    with open(path, "rb") as fh:
        header_len = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(header_len))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = _DTYPES[info["dtype"]]
        out[name] = data[start:end].view(dtype).reshape(info["shape"])
    return out


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, ``x * (1 + erf(x / sqrt 2)) / 2``, with erf from Abramowitz &
    Stegun 7.1.26 (|error| < 1.5e-7; numpy has no erf). Written in place on three buffers:
    the naive expression allocated ten and took 30% of encoding time; this halves that."""
    a = np.abs(x)
    a *= np.float32(0.7071067811865476)  # |z| for z = x / sqrt(2)
    t = a * np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    p = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        p += np.float32(coefficient)
        p *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    p *= a
    p *= np.float32(0.5)  # (1 - erf|z|) / 2, which is the factor for x < 0
    np.subtract(1, p, out=p, where=x >= 0)  # (1 + erf z) / 2 for x >= 0
    p *= x
    return p


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


_blas_lock = threading.Lock()
_blas_users = 0  # threads inside single_threaded_blas; the first sets the limit, the last restores
_blas_state: dict[str, Any] = {}  # "controller" (scanned once), "limiter" (while users > 0)


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the block with BLAS limited to one thread, then restore the user's setting.

    The limit is process-wide, so overlapping blocks in several threads share one limiter:
    nested save/restore pairs from different threads would otherwise restore out of order.
    """
    global _blas_users
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # optional: without it numpy keeps its default threads
        yield
        return
    with _blas_lock:
        if _blas_users == 0:
            if "controller" not in _blas_state:
                _blas_state["controller"] = ThreadpoolController()  # scans loaded libraries
            _blas_state["limiter"] = _blas_state["controller"].limit(limits=1, user_api="blas")
        _blas_users += 1
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                _blas_state.pop("limiter").restore_original_limits()


def padded_batches(
    tokenizer: Tokenizer, texts: list[str], batch_size: int, token_budget: int | None = None
) -> Iterator[tuple[list[int], np.ndarray, np.ndarray]]:
    """``texts`` as word-piece ids in batches of similar length (little padding): per batch
    the positions of its texts in ``texts``, the ids and the attention mask (int64). A batch
    holds at most ``batch_size`` texts and, with ``token_budget``, at most that many word
    pieces counting padding (so short texts go many to a batch, long ones few)."""
    if not texts:
        return
    encodings = tokenizer.encode_batch(texts)
    order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
    groups: list[list[int]] = [[]]
    for i in order:  # ascending length: the text added last sets the batch's width
        group = groups[-1]
        width = len(encodings[i].ids)
        full = len(group) >= batch_size or (
            token_budget is not None and group and (len(group) + 1) * width > token_budget
        )
        if full:
            groups.append([i])
        else:
            group.append(i)
    for idx in groups:
        width = max(len(encodings[i].ids) for i in idx)
        ids = np.zeros((len(idx), width), dtype=np.int64)
        mask = np.zeros((len(idx), width), dtype=np.int64)
        for row, i in enumerate(idx):
            seq = encodings[i].ids
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        yield idx, ids, mask


class MiniLM:
    """all-MiniLM-L6-v2 sentence encoder; :meth:`encode` returns unit vectors (n, 384)."""

    variant = "fp32"

    def __init__(self, path: Path | None = None, max_length: int = 256) -> None:
        path = path or model_dir()
        config = json.loads((path / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.dim = int(config["hidden_size"])
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_length)
        raw = load_safetensors(path / "model.safetensors")
        # Linear weights are stored (out, in); keep them transposed and contiguous once.
        self.w = {
            k: (
                np.ascontiguousarray(v.T)
                if k.endswith("dense.weight")
                or k.endswith(("query.weight", "key.weight", "value.weight"))
                else np.asarray(v)
            ).astype(np.float32, copy=False)
            for k, v in raw.items()
            if v.dtype != np.int64
        }
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch_size: int = 16) -> np.ndarray:
        """Unit-length sentence embeddings of ``texts``, shape ``(len(texts), 384)``."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        with self._lock, single_threaded_blas():
            for idx, ids, mask in padded_batches(self.tokenizer, texts, batch_size):
                out[idx] = self._forward(ids, mask.astype(np.float32))
        return out

    def input_maxima(self, texts: list[str]) -> dict[str, np.ndarray]:
        """Per linear layer (keyed by its weight's prefix, ``encoder.layer.0.attention.self.
        query``), the largest absolute value each input channel took over the real word
        pieces of ``texts``: what quantising that layer's input has to cover."""
        maxima: dict[str, np.ndarray] = {}

        def observe(prefix: str, inputs: np.ndarray, mask: np.ndarray) -> None:
            seen = np.abs(inputs[mask.astype(bool)]).max(axis=0)
            maxima[prefix] = np.maximum(maxima.get(prefix, seen), seen)

        with self._lock, single_threaded_blas():
            for _idx, ids, mask in padded_batches(self.tokenizer, texts, 16):
                self._forward(ids, mask.astype(np.float32), observe)
        return maxima

    def _forward(
        self,
        ids: np.ndarray,
        mask: np.ndarray,
        observe: Callable[[str, np.ndarray, np.ndarray], None] | None = None,
    ) -> np.ndarray:
        w, eps = self.w, self.eps

        def linear(inputs: np.ndarray, prefix: str) -> np.ndarray:
            if observe is not None:
                observe(prefix, inputs, mask)
            return inputs @ w[prefix + ".weight"] + w[prefix + ".bias"]

        batch, width = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        head = self.dim // self.heads
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(head))

        def split(t: np.ndarray) -> np.ndarray:
            return t.reshape(batch, width, self.heads, head).transpose(0, 2, 1, 3)

        for n in range(self.layers):
            p = f"encoder.layer.{n}."
            q = split(linear(x, p + "attention.self.query"))
            k = split(linear(x, p + "attention.self.key"))
            v = split(linear(x, p + "attention.self.value"))
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, width, self.dim)
            attn = linear(ctx, p + "attention.output.dense")
            x = _layer_norm(
                x + attn,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
                eps,
            )
            inner = _gelu(linear(x, p + "intermediate.dense"))
            ffn = linear(inner, p + "output.dense")
            x = _layer_norm(
                x + ffn, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps
            )
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


_shared: dict[tuple[str | None, str | None], Any] = {}
_shared_lock = threading.Lock()


def shared_model(model_path: str | Path | None = None, precision: str | None = None) -> Any:
    """One encoder per process, model folder and precision, loaded on first use: ONNX
    Runtime when its packages are installed (the first run ever builds the graph, 2-3 s;
    later ones load it in 0.1 s), else :class:`MiniLM`. Its ``encode(texts)`` returns unit vectors and its
    ``variant`` names the vectors (:func:`default_variant`)."""
    from .options import PRECISIONS

    precision = precision or PRECISIONS[0]  # one model for the default, however it is asked
    key = (str(model_path) if model_path else None, precision)
    with _shared_lock:
        model = _shared.get(key)
        if model is None:
            from .onnx_model import OnnxMiniLM, onnx_missing

            path = model_dir(model_path)
            if onnx_missing() is None:
                model = OnnxMiniLM(path, precision=precision)
            else:
                log.warning(
                    "Hybrid search embeds with numpy, 4-8x slower than ONNX Runtime "
                    '(%s not installed): pip install "nexus-jupyter[semantic]"',
                    onnx_missing(),
                )
                model = MiniLM(path)
            _shared[key] = model
        return model


@functools.cache  # EmbeddingCache.key calls it once per text
def _vector_kind(variant: str) -> str:
    """``variant`` plus whatever else makes its vectors (a calibration: see
    :func:`.onnx_model.recipe`), so vectors of an older recipe are never reused."""
    from .onnx_model import recipe

    made = recipe(variant)
    return f"{variant}\0{made}" if made else variant


class EmbeddingCache:
    """Embeddings on disk, keyed by ``sha256(model id, variant, text)``; safe across
    processes. ``variant`` tells quantised vectors from full-precision ones."""

    def __init__(self, cache_dir: str | Path | None = None, variant: str = "fp32") -> None:
        self.variant = variant
        self.path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # one connection, used from the warm-up thread too
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path / "minilm-l6-v2.sqlite", check_same_thread=False, timeout=10
            )
            self._db.execute("CREATE TABLE IF NOT EXISTS emb (key TEXT PRIMARY KEY, vec BLOB)")
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            log.warning(
                "Embedding cache at %s is unusable (%s); embeddings are not "
                "kept between runs. Set NEXUS_CACHE_DIR to a writable folder.",
                self.path,
                exc,
            )
            self._db = None

    def key(self, text: str) -> str:
        # fp32 keys are the ones earlier versions wrote, so their caches stay valid.
        model = MODEL_ID if self.variant == "fp32" else f"{MODEL_ID}\0{_vector_kind(self.variant)}"
        return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()

    def get_many(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        if self._db is None:
            return {}
        out: dict[str, np.ndarray] = {}
        keys = list(keys)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            with self._lock:
                if self._db is None:  # closed meanwhile
                    break
                rows = self._db.execute(
                    f"SELECT key, vec FROM emb WHERE key IN ({marks})", chunk
                ).fetchall()
            for key, blob in rows:
                out[key] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, items: dict[str, np.ndarray]) -> None:
        if self._db is None or not items:
            return
        rows = [(k, v.astype(np.float32).tobytes()) for k, v in items.items()]
        with self._lock:
            if self._db is None:
                return
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO emb (key, vec) VALUES (?, ?)", rows)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


class QueryCache:
    """A small LRU of query embeddings: the same query typed twice is embedded once."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[str, np.ndarray] = OrderedDict()

    def get(self, text: str) -> np.ndarray | None:
        vec = self._items.get(text)
        if vec is not None:
            self._items.move_to_end(text)
        return vec

    def put(self, text: str, vec: np.ndarray) -> None:
        self._items[text] = vec
        if len(self._items) > self.size:
            self._items.popitem(last=False)
