"""all-MiniLM-L6-v2 on ONNX Runtime: the shipped weights as an ONNX graph, built at first use.

:class:`OnnxMiniLM` encodes like :class:`~.embeddings.MiniLM` (same tokenizer, same
forward pass, nearly the same unit vectors), 5-6.5x as fast cold as the numpy pass and a
query in 1.9 ms: ONNX Runtime fuses and threads what the numpy pass does op by op, in int8.
The graph is written here with ``onnx.helper`` from the ``model.safetensors`` the model
folder holds (no torch, no download, no exported file to trust) in one of the four
:data:`PRECISIONS`, and saved under the user cache dir (``$NEXUS_CACHE_DIR/models`` or
``~/.cache/nexus_jupyter/models``), keyed by the weights file, this builder's version and
the precision's recipe (:func:`recipe`), so later processes load it in a fraction of a
second.

Graph: token, position (a ``Slice`` of the table by the input's length: a ``Range`` +
``Gather`` passes the checker but ORT's optimiser then fails on it) and token-type
embeddings, LayerNorm, six encoder layers (attention with a -1e9 bias on padding, exact
GELU through ``Erf``), mean pooling over real tokens, L2 normalisation.

Precisions (:data:`PRECISIONS`), measured on this project's 2-core machine (the toolret tool
texts, 2026-11-27):

- ``"smooth8"``, the default: int8 arithmetic with SmoothQuant (Xiao et al., 2022). BERT's
  activations have a few channels far larger than the rest, so one int8 range per input
  (dynamic quantisation) loses the small ones; here each such channel is divided by a factor
  and the weight's matching input column multiplied by it (:func:`smoothing_scales`, from
  the activation ranges of ``data/calibration.txt``), then the query, key, value, attention
  output and first feed-forward MatMuls are quantised dynamically (weights per channel,
  activations per tensor). The feed-forward's second MatMul, whose input (after GELU) stayed
  too uneven for one range, keeps its weights in int8 blocks (as ``"block8"``). Vectors within
  cosine 0.998 of fp32 (mean 0.9995; on an AVX2-only x86, with the 7-bit weights it gets
  there, :func:`seven_bit_weights`, 0.9967 for a one-letter text); cold embedding 1.6-2x
  fp32 (67-72 against 36-40 toolret tools/s, two threads); one query in 1.9 ms (fp32 4.4, block8 2.7). Dev retrieval
  in hybrid mode equal to fp32's on the toolret dev queries (recall@1 0.800, recall@5
  0.933), one query lower at rank 5 on the second dev set. A text runs alone, since its
  activations' range would depend on its batch-mates.
- ``"block8"``: each weight matrix of the encoder layers stored as int8 in blocks of 32 inputs
  with a scale per block, run by ONNX Runtime's ``MatMulNBits`` with int8 arithmetic on
  activations quantised per row and block. Vectors within cosine 0.9989 of fp32 (mean
  0.9997); one query in 2.6-3.2 ms; cold embedding only 1.0-1.15x fp32 on two threads (the
  8-bit kernel gains little on many rows). Dev recall@1 one query lower than fp32.
- ``"fp32"``: the model as it ships; agrees with the numpy pass to 1e-6.
- ``"int8"`` (``search: {quantized: true}``): dynamic quantisation of every MatMul without
  smoothing (the word-embedding table too): 2x fp32 cold, only 1.0-1.2x smooth8, and the
  vectors move more (cosine mean 0.995): dev recall@1 2 points lower; one text per run, as
  ``"smooth8"``.

``"smooth8"`` and ``"block8"`` need ONNX Runtime's 8-bit ``MatMulNBits`` (1.22 or later on
x86, :func:`block8_missing`, checked once); without it fp32 runs instead (logged once).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import platform
import threading
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

from .embeddings import MiniLM, load_safetensors, model_cache_root, padded_batches
from .options import PRECISIONS  # the graphs OnnxMiniLM can run; the first is the default

__all__ = [
    "BLOCK_KERNEL",
    "BUILDER_VERSION",
    "PRECISIONS",
    "SMOOTHING",
    "TOKEN_BUDGET",
    "OnnxMiniLM",
    "block8_missing",
    "block8_node",
    "block_quantize",
    "build_graph",
    "calibration_texts",
    "onnx_missing",
    "recipe",
    "seven_bit_weights",
    "smoothing_scales",
]

log = logging.getLogger(__name__)

#: Word pieces (padding included) per fp32 run: on toolret tool texts 256-512 embedded 1.3x
#: as fast as one text per run, 1024 and more less (``benchmarks/search_scale.py``).
TOKEN_BUDGET = 512
#: Bumped whenever the graph changes, so cached model files are rebuilt.
BUILDER_VERSION = "1"
_OPSET = 17
#: SmoothQuant's migration strength for ``"smooth8"``: how much of an input channel's range
#: moves into the weight. 0.6-0.8 kept vectors equally close to fp32 on toolret tool texts
#: (cosine mean 0.9995); 0.3 and 0.85 moved them more. Part of :func:`recipe`, as are the
#: calibration texts, so changing either rebuilds the graph and re-embeds the tools.
SMOOTHING = 0.7
_QKV = ("query", "key", "value")
#: Precisions whose feed-forward's second MatMul runs as int8 blocks (``MatMulNBits``), so
#: which need the 8-bit kernel (:func:`block8_missing`).
BLOCK_KERNEL = frozenset({"block8", "smooth8"})
#: Precisions quantised dynamically after the graph is built: activations per tensor, so a
#: text runs alone (see :meth:`OnnxMiniLM.encode`).
_DYNAMIC = frozenset({"int8", "smooth8"})
_quantize_lock = threading.Lock()
#: Inputs per int8 block of ``"block8"``. 16 gave the same dev figures and ran slower; 64 and
#: 128 ran faster but moved the vectors more (cosine mean 0.9996 and 0.9993), and 128 lost
#: three dev queries at rank 1. Changing it needs a new ``BUILDER_VERSION`` and a new variant
#: name, since cached graphs and vectors are keyed by those.
BLOCK = 32
_probe_lock = threading.Lock()
_probe: list[str | None] = []  # [why block8 cannot run, or None], once per process
_fallback_said = False


def block8_missing() -> str | None:
    """Why this ONNX Runtime cannot run ``"block8"``, or ``None`` when it can. Checked once
    per process by running one ``MatMulNBits`` node (8 bits, int8 arithmetic) against numpy:
    the 8-bit kernel for x86 came with ONNX Runtime 1.22."""
    with _probe_lock:
        if not _probe:
            _probe.append(_probe_block8())
        return _probe[0]


def _probe_block8() -> str | None:
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper

        rng = np.random.default_rng(0)
        weight = rng.normal(0, 1, (64, 64)).astype(np.float32)
        values, scales = block_quantize(weight)
        x = rng.normal(0, 1, (2, 64)).astype(np.float32)
        graph = helper.make_graph(
            [block8_node("x", "b", "s", "y", weight.shape)],
            "probe",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 64])],
            initializer=[
                numpy_helper.from_array(values, "b"),
                numpy_helper.from_array(scales, "s"),
            ],
        )
        opsets = [helper.make_opsetid("", _OPSET), helper.make_opsetid("com.microsoft", 1)]
        model = helper.make_model(graph, opset_imports=opsets)
        model.ir_version = 8
        options = ort.SessionOptions()
        options.log_severity_level = 3
        session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        got = session.run(None, {"x": x})[0]
    except Exception as exc:  # any failure means: run fp32 instead
        return f"ONNX Runtime cannot run MatMulNBits with 8 bits ({str(exc).splitlines()[0][:160]})"
    restored = (values.astype(np.float32) - 128) * scales.reshape(64, 2, 1)
    expected = x @ restored.reshape(64, 64).T
    if not np.allclose(got, expected, atol=0.05 * float(np.abs(expected).max())):
        return "ONNX Runtime's 8-bit MatMulNBits gave wrong results"
    return None


def block8_node(x: str, values: str, scales: str, out: str, shape: tuple[int, ...]) -> Any:
    """The ``MatMulNBits`` node that multiplies ``x`` by a ``[out, in]`` weight of ``shape``
    stored by :func:`block_quantize` (8 bits, int8 arithmetic)."""
    from onnx import helper

    return helper.make_node(
        "MatMulNBits",
        [x, values, scales],
        [out],
        domain="com.microsoft",
        K=shape[1],
        N=shape[0],
        bits=8,
        block_size=BLOCK,
        accuracy_level=4,  # int8 arithmetic on activations quantised per row and block
    )


def block_quantize(matrix: np.ndarray, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """``matrix`` (``[out, in]``, a torch ``Linear`` weight) as ``MatMulNBits`` takes it with
    8 bits and no zero points: ``uint8 [out, in / block, block]`` (the value plus 128) and
    one fp32 scale per block (``[out * in / block]``), symmetric, rounding to nearest."""
    out_dim, in_dim = matrix.shape
    if in_dim % block:
        raise ValueError(f"{in_dim} inputs are not a whole number of blocks of {block}")
    blocks = np.asarray(matrix, dtype=np.float32).reshape(out_dim, in_dim // block, block)
    scales = np.abs(blocks).max(axis=2) / 127.0
    scales[scales == 0] = 1.0
    values = np.clip(np.rint(blocks / scales[..., None]), -127, 127) + 128
    return values.astype(np.uint8), scales.reshape(-1).astype(np.float32)


def onnx_missing() -> str | None:
    """The packages the ONNX path needs that are not installed, or ``None``."""
    import importlib.util

    missing = [m for m in ("onnxruntime", "onnx") if importlib.util.find_spec(m) is None]
    return ", ".join(missing) or None


def calibration_texts() -> list[str]:
    """The texts ``"smooth8"`` is calibrated on (``data/calibration.txt``, written for it)."""
    raw = resources.files(__package__).joinpath("data", "calibration.txt").read_text("utf-8")
    return [line for line in raw.splitlines() if line.strip() and not line.startswith("#")]


@functools.cache
def recipe(precision: str) -> str:
    """What else than the weights and :data:`BUILDER_VERSION` decides ``precision``'s numbers,
    as a short hash (``""`` when nothing does): for ``"smooth8"`` the calibration texts,
    :data:`SMOOTHING` and :data:`BLOCK`; for the dynamic precisions, whether the weights are
    7-bit (:func:`seven_bit_weights`). Model files and cached vectors are keyed by it."""
    seven = precision in _DYNAMIC and seven_bit_weights()
    if precision != "smooth8":
        return "w7" if seven else ""
    made_of = json.dumps([calibration_texts(), SMOOTHING, BLOCK] + (["w7"] if seven else []))
    return hashlib.sha256(made_of.encode()).hexdigest()[:8]


@functools.cache
def seven_bit_weights() -> bool:
    """Whether dynamic int8 weights are kept to 7 bits (ONNX Runtime's ``reduce_range``): on
    x86 without VNNI, whose int8 kernel adds byte products in 16 bits and saturates with
    8-bit weights. On this project's AVX2-only 2-core machine (AMD EPYC, 2026-11-28) 8-bit
    weights moved ``"smooth8"``'s vectors to cosine 0.994 of fp32 on a long text (7-bit:
    0.998) and cost hybrid dev recall@1 (toolret dev 0.789 -> 0.767, second dev set 0.680 ->
    0.670, ``benchmarks/search_quality.py``); where VNNI or an ARM dot product runs, 8 bits
    stay exact. ``NEXUS_INT8_WEIGHTS=7|8`` decides instead (the cache keys on the choice)."""
    forced = os.environ.get("NEXUS_INT8_WEIGHTS", "").strip()
    if forced in ("7", "8"):
        return forced == "7"
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return not flags & {"avx512_vnni", "avx_vnni", "amx_int8"}
    except OSError:
        pass
    return True  # an x86 whose flags cannot be read: 7 bits are close everywhere


def smoothing_scales(
    weights: dict[str, np.ndarray], maxima: dict[str, np.ndarray], layers: int
) -> dict[str, np.ndarray]:
    """SmoothQuant's per-channel factors for ``"smooth8"``: per encoder layer, one vector for
    the input the query, key and value projections share (``...attention.self``), one for
    the attention output's input (``...attention.output.dense``) and one for the
    feed-forward's first input (``...intermediate.dense``). Channel ``j``'s factor is
    ``max|x_j| ** a / max|w_j| ** (1 - a)`` with :data:`SMOOTHING` as ``a``: dividing the
    input by it and multiplying the weight's input column by it leaves the product unchanged
    but moves the few very large activation channels into the weight, where they are
    quantised per output channel, so the per-tensor activation range shrinks."""

    def factor(inputs: np.ndarray, matrices: list[np.ndarray]) -> np.ndarray:
        weight_max = np.max([np.abs(m).max(axis=0) for m in matrices], axis=0)
        out = np.maximum(inputs, 1e-5) ** SMOOTHING / np.maximum(weight_max, 1e-5) ** (
            1 - SMOOTHING
        )
        return out.astype(np.float32)

    scales: dict[str, np.ndarray] = {}
    for n in range(layers):
        p = f"encoder.layer.{n}."
        qkv = [np.asarray(weights[f"{p}attention.self.{k}.weight"]) for k in _QKV]
        scales[p + "attention.self"] = factor(maxima[p + "attention.self.query"], qkv)
        for key in ("attention.output.dense", "intermediate.dense"):
            scales[p + key] = factor(maxima[p + key], [np.asarray(weights[p + key + ".weight"])])
    return scales


def build_graph(
    weights: dict[str, np.ndarray],
    config: dict[str, Any],
    precision: str = "fp32",
    smoothing: dict[str, np.ndarray] | None = None,
) -> Any:
    """The sentence encoder as an ``onnx.ModelProto`` (inputs ``input_ids`` and
    ``attention_mask``, int64 ``[batch, seq]``; output ``sentence_embedding``, ``[batch, dim]``).
    ``"block8"`` stores the encoder layers' weight matrices as int8 blocks
    (:func:`block_quantize`); ``"fp32"`` and ``"int8"`` build the fp32 graph (``"int8"`` is
    quantised afterwards, by :func:`model_file`). ``"smooth8"`` needs ``smoothing``
    (:func:`smoothing_scales`): it divides each smoothed input by its factors (for the
    attention output, inside the value projection's weights) and multiplies the weights by
    them, and keeps the feed-forward's second MatMul in int8 blocks; :func:`model_file` then
    quantises the other MatMuls dynamically."""
    if precision == "smooth8" and smoothing is None:
        raise ValueError("the smooth8 graph needs smoothing factors (smoothing_scales)")
    smoothing = smoothing or {}
    from onnx import TensorProto, helper, numpy_helper

    dim, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    layers, eps = int(config["num_hidden_layers"]), float(config.get("layer_norm_eps", 1e-12))
    head = dim // heads
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: Any, dtype: Any = np.float32) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=dtype), name))
        return name

    def weight(key: str) -> str:
        return const(key, np.asarray(weights[key], dtype=np.float32))

    count = [0]

    def op(kind: str, inputs: list[str], **attrs: Any) -> str:
        count[0] += 1
        out = f"{kind.lower()}_{count[0]}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(
        x: str,
        prefix: str,
        columns: np.ndarray | None = None,
        rows: np.ndarray | None = None,
        blocks: bool = False,
    ) -> str:
        """``x @ W.T + b``; ``columns`` multiplies W's input columns (smoothing its input),
        ``rows`` divides its output rows and the bias (smoothing the next layer's input);
        ``blocks`` stores W as int8 blocks run by ``MatMulNBits``."""
        matrix = np.asarray(weights[prefix + ".weight"], dtype=np.float32)
        bias_value = np.asarray(weights[prefix + ".bias"], dtype=np.float32)
        if columns is not None:
            matrix = matrix * columns[None, :]
        if rows is not None:
            matrix, bias_value = matrix / rows[:, None], bias_value / rows
        bias_name = const(prefix + ".bias", bias_value)
        if not blocks:
            product = op("MatMul", [x, const(prefix + ".weight", matrix.T)])
            return op("Add", [product, bias_name])
        values, scales = block_quantize(matrix)
        count[0] += 1
        product = f"matmulnbits_{count[0]}"
        b = const(prefix + ".weight_q8", values, np.uint8)
        nodes.append(block8_node(x, b, const(prefix + ".scales", scales), product, matrix.shape))
        return op("Add", [product, bias_name])

    def layer_norm(x: str, prefix: str) -> str:
        gamma, beta = weight(prefix + ".weight"), weight(prefix + ".bias")
        return op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)

    split_shape = const("split_shape", [0, 0, heads, head], np.int64)
    merge_shape = const("merge_shape", [0, 0, dim], np.int64)
    zero = const("zero", [0], np.int64)
    one = const("one", 1.0)

    length = op("Shape", ["input_ids"], start=1, end=2)
    positions = op("Slice", [weight("embeddings.position_embeddings.weight"), zero, length, zero])
    token_type = const(
        "token_type", np.asarray(weights["embeddings.token_type_embeddings.weight"])[0]
    )
    words = op("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"])
    x = op("Add", [op("Add", [words, positions]), token_type])
    x = layer_norm(x, "embeddings.LayerNorm")
    mask = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    padding = op("Mul", [op("Sub", [one, mask]), const("neg", -1e9)])
    bias = op("Unsqueeze", [padding, const("axes_12", [1, 2], np.int64)])
    scale = const("scale", 1.0 / np.sqrt(head))
    half, root2 = const("half", 0.5), const("root2", np.sqrt(2.0))

    every_matmul_in_blocks = precision == "block8"

    def smoothed(x: str, key: str) -> tuple[str, np.ndarray | None]:
        """``x`` divided by the smoothing factors ``key`` names, and those factors."""
        if key not in smoothing:
            return x, None
        return op("Mul", [x, const(key + ".smooth", 1.0 / smoothing[key])]), smoothing[key]

    for n in range(layers):
        p = f"encoder.layer.{n}."
        x_qkv, qkv_columns = smoothed(x, p + "attention.self")
        # The attention output's input is the heads' mix of value vectors: attention mixes
        # word pieces, never channels, so dividing the value projection's output channel j
        # (its row j and bias j) divides that input's channel j.
        context_factors = smoothing.get(p + "attention.output.dense")

        projected = {}
        for name in _QKV:
            rows = context_factors if name == "value" else None
            vectors = linear(
                x_qkv, p + f"attention.self.{name}", qkv_columns, rows, every_matmul_in_blocks
            )
            projected[name] = op("Reshape", [vectors, split_shape])
        q = op("Transpose", [projected["query"]], perm=[0, 2, 1, 3])
        k = op("Transpose", [projected["key"]], perm=[0, 2, 3, 1])  # transposed for Q @ K
        v = op("Transpose", [projected["value"]], perm=[0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), bias])
        context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        merged = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), merge_shape])
        attended = linear(
            merged, p + "attention.output.dense", context_factors, None, every_matmul_in_blocks
        )
        x = layer_norm(op("Add", [x, attended]), p + "attention.output.LayerNorm")
        x_up, up_columns = smoothed(x, p + "intermediate.dense")
        inner = linear(x_up, p + "intermediate.dense", up_columns, None, every_matmul_in_blocks)
        erf = op("Erf", [op("Div", [inner, root2])])
        gelu = op("Mul", [op("Mul", [inner, half]), op("Add", [one, erf])])
        down = linear(gelu, p + "output.dense", blocks=precision in BLOCK_KERNEL)
        x = layer_norm(op("Add", [x, down]), p + "output.LayerNorm")

    mask3 = op("Unsqueeze", [mask, const("axes_2", [2], np.int64)])
    axis1 = const("axes_1", [1], np.int64)
    summed = op("ReduceSum", [op("Mul", [x, mask3]), axis1], keepdims=0)
    counted = op("Max", [op("ReduceSum", [mask3, axis1], keepdims=0), const("tiny", 1e-9)])
    pooled = op("Div", [summed, counted])
    norm = op("Max", [op("ReduceL2", [pooled], axes=[-1], keepdims=1), const("eps", 1e-12)])
    nodes.append(helper.make_node("Div", [pooled, norm], ["sentence_embedding"]))

    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])
    attention = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])
    out = helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", dim])
    graph = helper.make_graph(nodes, "minilm", [ids, attention], [out], initializer=inits)
    opsets = [helper.make_opsetid("", _OPSET)]
    if precision in BLOCK_KERNEL:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def _weights_key(path: Path) -> str:
    """Identifies the weights cheaply: the safetensors header and the file size."""
    weights = path / "model.safetensors"
    with open(weights, "rb") as fh:
        header = fh.read(8 + int.from_bytes(fh.read(8), "little"))
    digest = hashlib.sha256(header + str(weights.stat().st_size).encode()).hexdigest()
    return digest[:16]


def model_file(path: Path, precision: str, cache_root: Path | None = None) -> Path:
    """The ONNX file for the weights in ``path`` in ``precision`` (:data:`PRECISIONS`), built
    (calibrated and quantised) on first use: about 0.2 s for fp32 and block8, 2-3 s for
    smooth8 and int8."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; use one of {', '.join(PRECISIONS)}")
    root = (cache_root or model_cache_root()) / "models"
    made = "-".join(p for p in (_weights_key(path), recipe(precision), precision) if p)
    target = root / f"minilm-v{BUILDER_VERSION}-{made}.onnx"
    if target.exists():
        return target
    root.mkdir(parents=True, exist_ok=True)
    import onnx

    config = json.loads((path / "config.json").read_text())
    weights = load_safetensors(path / "model.safetensors")
    smoothing = None
    if precision == "smooth8":
        maxima = MiniLM(path).input_maxima(calibration_texts())
        smoothing = smoothing_scales(weights, maxima, int(config["num_hidden_layers"]))
    graph = build_graph(weights, config, precision, smoothing)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        if precision in _DYNAMIC:
            _quantize(graph, tmp, precision)
        else:
            onnx.save(graph, str(tmp))
        os.replace(tmp, target)  # atomic: a concurrent builder writes the same bytes
    finally:
        tmp.unlink(missing_ok=True)
    log.info("built the sentence model for ONNX Runtime at %s", target)
    return target


def _not_from_the_quantiser(record: logging.LogRecord) -> bool:
    """Keep every log record except ONNX Runtime's quantiser's advice (it logs on the root
    logger, e.g. that a model should be pre-processed first)."""
    return "quantization" not in Path(record.pathname).parts


def _quantize(graph: Any, target: Path, precision: str) -> None:
    """Quantise ``graph`` dynamically into ``target``: int8 weights per channel. ``"smooth8"``
    quantises only its MatMuls (the word-embedding table stays fp32); ``"int8"`` also the
    table, as it always has."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = target.with_suffix(".fp32")
    onnx.save(graph, str(fp32))
    only = {"op_types_to_quantize": ["MatMul"]} if precision == "smooth8" else {}
    root = logging.getLogger()
    with _quantize_lock:  # one filter at a time on the process-wide root logger
        root.addFilter(_not_from_the_quantiser)
        try:
            quantize_dynamic(
                str(fp32),
                str(target),
                weight_type=QuantType.QInt8,
                per_channel=True,
                reduce_range=seven_bit_weights(),
                **only,
            )
        finally:
            root.removeFilter(_not_from_the_quantiser)
            fp32.unlink(missing_ok=True)


class OnnxMiniLM:
    """all-MiniLM-L6-v2 on ONNX Runtime; :meth:`encode` returns unit vectors (n, 384).

    ``precision`` is one of :data:`PRECISIONS` (default ``"smooth8"``); ``quantized=True``
    is short for ``"int8"``. :attr:`variant` names the vectors the graph makes (the
    embedding cache keys on it): the precision that actually runs."""

    def __init__(
        self,
        path: Path,
        *,
        quantized: bool = False,
        precision: str | None = None,
        max_length: int = 256,
        cache_root: Path | None = None,
    ) -> None:
        import onnxruntime as ort

        config = json.loads((path / "config.json").read_text())
        self.dim = int(config["hidden_size"])
        precision = precision or ("int8" if quantized else PRECISIONS[0])
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_length)

        def session(file: Path, threads: int) -> Any:
            options = ort.SessionOptions()
            options.log_severity_level = 3
            options.intra_op_num_threads = threads
            # Worker threads that spin while idle steal the core they share with the
            # caller's own work (and with other processes on a small machine).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            return ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])

        if precision in BLOCK_KERNEL and block8_missing() is not None:
            global _fallback_said
            if not _fallback_said:
                _fallback_said = True
                log.warning(
                    "%s; the sentence model runs in fp32, about half as fast (onnxruntime 1.22 "
                    "or later runs the int8 model on x86: pip install -U onnxruntime).",
                    block8_missing(),
                )
            precision = "fp32"
        self.file = model_file(path, precision, cache_root)
        self._session = session(self.file, 1)
        self.precision = self.variant = precision
        # Activations quantised per tensor: one text per run (see encode).
        self.one_text_per_run = precision in _DYNAMIC
        # One thread per session run, and batches spread over the cores by the caller's
        # threads: ORT splitting each op across two threads makes every op wait for the
        # slower one, so a busy core halved throughput (on this shared 2-core machine: 42
        # tools/s on one thread against 24 on two, under load); whole batches per thread
        # degrade gracefully instead. One query stays on one thread too (0.9 ms against
        # 1.3-1.5 ms on two, int8).
        self.workers = max(1, min(os.cpu_count() or 1, 4))
        self._lock = threading.Lock()

    def encode(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """Unit-length sentence embeddings of ``texts``, shape ``(len(texts), dim)``; batches
        run on up to :attr:`workers` threads.

        fp32 and block8 texts go in batches of similar length holding at most
        :data:`TOKEN_BUDGET` word pieces with padding (padding is masked out and block8
        quantises each row on its own, so a text's vector does not depend on its batch-mates,
        to 1e-6): many short texts share one run, whose fixed cost dominated them one at a
        time, and a long one runs nearly alone. smooth8 and int8 texts run one at a time
        (``batch_size`` 1): their activations are quantised over the whole input, so in a
        batch a text's vector moved with its batch-mates.
        """
        budget = None if self.one_text_per_run else TOKEN_BUDGET
        if batch_size is None:
            batch_size = 1 if self.one_text_per_run else 64
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        batches = list(padded_batches(self.tokenizer, texts, batch_size, budget))

        def run(batch: tuple[list[int], np.ndarray, np.ndarray]) -> None:
            idx, ids, mask = batch
            out[idx] = self._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]

        with self._lock:
            if len(batches) <= 1 or self.workers == 1:
                for batch in batches:
                    run(batch)
            else:
                with ThreadPoolExecutor(min(self.workers, len(batches))) as pool:
                    list(pool.map(run, batches))
        return out
