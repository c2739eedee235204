"""The ONNX Runtime encoder built from the packaged weights, and where the model is found."""

from __future__ import annotations

import http.server
import logging
import os
import platform
import threading
from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter.core.errors import ConfigError
from nexus_jupyter.core.search import index as search_index
from nexus_jupyter.core.search.index import SearchIndex
from nexus_jupyter.core.search.model_files import (
    MODEL_COMMAND,
    MODEL_FILES,
    find_model,
    semantic_missing,
)

needs_model = pytest.mark.skipif(
    semantic_missing() is not None, reason=f"semantic extra missing ({semantic_missing()})"
)


def _packaged() -> Path:
    found = find_model()
    assert found is not None
    return found


@pytest.fixture
def onnx_model() -> Any:
    module = pytest.importorskip("nexus_jupyter.core.search.onnx_model")
    if module.onnx_missing():
        pytest.skip(f"{module.onnx_missing()} not installed")
    return module


@needs_model
def test_the_graph_built_from_the_packaged_weights_matches_the_numpy_pass(
    onnx_model: Any, tmp_path: Path
) -> None:
    import numpy as np

    from nexus_jupyter.core.search.embeddings import MiniLM, padded_batches

    texts = [
        "List the files and folders in a directory.",
        "Convert an amount of money into another currency at today's rate.",
        "x",
        " ".join(["a long text that is cut at 256 word pieces"] * 40),
    ]
    reference = MiniLM(_packaged()).encode(texts)
    fp32 = onnx_model.OnnxMiniLM(_packaged(), precision="fp32", cache_root=tmp_path)
    together = fp32.encode(texts)
    assert np.abs(together - reference).max() < 1e-4
    # fp32 texts share runs (a token budget per batch); a text's vector ignores its batch-mates.
    alone = np.stack([fp32.encode([text])[0] for text in texts])
    assert np.abs(together - alone).max() < 1e-5
    batches = list(padded_batches(fp32.tokenizer, texts[:3] * 20, 64, onnx_model.TOKEN_BUDGET))
    assert 1 < len(batches) < 60 and all(
        ids.size <= onnx_model.TOKEN_BUDGET for _, ids, _ in batches
    )
    # The default: int8 on smoothed activations, close to fp32; a text runs alone.
    smooth8 = onnx_model.OnnxMiniLM(_packaged(), cache_root=tmp_path)
    together_s8 = smooth8.encode(texts)
    cosines = (together_s8 * reference).sum(axis=1)
    # "x" is the furthest: 0.9984 where the int8 kernel is exact (VNNI), 0.9967 with the
    # 7-bit weights an AVX2-only x86 gets (seven_bit_weights); a broken smoothing gives < 0.99
    assert cosines.min() > 0.996 and cosines.mean() > 0.997
    assert smooth8.one_text_per_run and smooth8.variant == "smooth8"
    # One activation range per run, so each text runs alone: its batch-mates never move it.
    alone_s8 = np.stack([smooth8.encode([text])[0] for text in texts])
    assert np.abs(together_s8 - alone_s8).max() < 1e-6
    # int8 weight blocks run by MatMulNBits: close to fp32 and batch-independent.
    block8 = onnx_model.OnnxMiniLM(_packaged(), precision="block8", cache_root=tmp_path)
    together8 = block8.encode(texts)
    assert (together8 * reference).sum(axis=1).min() > 0.998  # "x" is the furthest: 0.9989
    alone8 = np.stack([block8.encode([text])[0] for text in texts])
    assert np.abs(together8 - alone8).max() < 1e-5
    int8 = onnx_model.OnnxMiniLM(_packaged(), quantized=True, cache_root=tmp_path)
    int8_cosines = (int8.encode(texts) * reference).sum(axis=1)
    assert int8_cosines.min() > 0.97
    # Smoothing is what keeps the default's int8 close: without it, every text moves more.
    assert (int8_cosines < cosines).all()
    assert (block8.variant, int8.variant, fp32.variant) == ("block8", "int8", "fp32")
    # The files are cached under the cache root and loaded, not rebuilt, next time.
    files = sorted((tmp_path / "models").glob("*.onnx"), key=lambda f: f.name.rsplit("-", 1)[1])
    assert [f.name.rsplit("-", 1)[-1] for f in files] == [
        "block8.onnx",
        "fp32.onnx",
        "int8.onnx",
        "smooth8.onnx",
    ]
    # Each graph holds the kernels its precision names: smooth8 runs five MatMuls per layer
    # in int8 and the feed-forward's second in int8 blocks, and keeps the word-embedding
    # table in fp32; plain int8 quantises every MatMul and the table.
    import onnx

    def kinds(file: Path) -> dict[str, int]:
        graph = onnx.load(str(file)).graph
        found: dict[str, int] = {}
        for node in graph.node:
            found[node.op_type] = found.get(node.op_type, 0) + 1
        tables = [i.name for i in graph.initializer if "word_embeddings" in i.name]
        found["quantised table"] = int(any("quantized" in name for name in tables))
        return found

    by_precision = {f.name.rsplit("-", 1)[1].removesuffix(".onnx"): kinds(f) for f in files}
    layers = 6
    assert by_precision["smooth8"].get("MatMulInteger") == 5 * layers
    assert by_precision["smooth8"].get("MatMulNBits") == layers
    assert by_precision["smooth8"]["quantised table"] == 0
    assert by_precision["int8"].get("MatMulInteger") == 6 * layers
    assert by_precision["int8"]["quantised table"] == 1
    assert by_precision["block8"].get("MatMulNBits") == 6 * layers
    assert "MatMulInteger" not in by_precision["fp32"] and "MatMulNBits" not in by_precision["fp32"]
    stamps = [f.stat().st_mtime_ns for f in files]
    again = onnx_model.OnnxMiniLM(_packaged(), quantized=True, cache_root=tmp_path)
    assert again.file == int8.file and [f.stat().st_mtime_ns for f in files] == stamps
    assert not list((tmp_path / "models").glob("*.tmp"))


@needs_model
def test_smoothing_narrows_the_activation_ranges_and_leaves_the_model_unchanged(
    onnx_model: Any,
) -> None:
    import json

    import numpy as np
    import onnxruntime as ort

    from nexus_jupyter.core.search.embeddings import MiniLM, load_safetensors

    path = _packaged()
    config = json.loads((path / "config.json").read_text())
    weights = load_safetensors(path / "model.safetensors")
    model = MiniLM(path)
    maxima = model.input_maxima(onnx_model.calibration_texts())
    layers = int(config["num_hidden_layers"])
    assert len(maxima) == 6 * layers and all(
        m.shape == (384,) or m.shape == (1536,) for m in maxima.values()
    )
    scales = onnx_model.smoothing_scales(weights, maxima, layers)
    assert len(scales) == 3 * layers and all((s > 0).all() for s in scales.values())
    # What smoothing is for: the widest channel of each smoothed input is much closer to the
    # typical one afterwards (one int8 range then covers them all with finer steps).
    for key, factors in scales.items():
        seen = maxima[key + ".query" if key.endswith(".self") else key]
        before = seen.max() / np.median(seen)
        after = (seen / factors).max() / np.median(seen / factors)
        assert after < before, key
    # The fp32 graph with the smoothing folded in computes the same function.
    texts = ["List the files in a directory.", "x", "Convert 20 euros to dollars."]
    reference = model.encode(texts)
    graph = onnx_model.build_graph(weights, config, "fp32", scales)
    session = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
    for text, expected in zip(texts, reference, strict=True):
        ids = np.array([model.tokenizer.encode(text).ids], dtype=np.int64)
        out = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
        assert np.abs(out - expected).max() < 1e-5
    with pytest.raises(ValueError, match="smoothing factors"):
        onnx_model.build_graph(weights, config, "smooth8")


def test_smoothing_factors_balance_the_input_against_its_weights(onnx_model: Any) -> None:
    import numpy as np

    # One layer, 4 input channels; channel 2 of the input is 100x the others.
    inputs = np.array([1.0, 2.0, 100.0, 0.0], dtype=np.float32)
    query = np.array([[0.5, 1.0, 0.2, 0.0], [0.1, 0.5, 0.1, 0.0]], dtype=np.float32)
    key = np.array([[2.0, 0.1, 0.1, 0.0]], dtype=np.float32)
    value = np.zeros((1, 4), dtype=np.float32)
    other = np.array([[1.0, 1.0, 1.0, 1.0]], dtype=np.float32)
    p = "encoder.layer.0."
    weights = {
        p + "attention.self.query.weight": query,
        p + "attention.self.key.weight": key,
        p + "attention.self.value.weight": value,
        p + "attention.output.dense.weight": other,
        p + "intermediate.dense.weight": other,
    }
    maxima = {
        p + "attention.self.query": inputs,
        p + "attention.output.dense": inputs,
        p + "intermediate.dense": inputs,
    }
    scales = onnx_model.smoothing_scales(weights, maxima, 1)
    a = onnx_model.SMOOTHING
    # query, key and value share their input, so one factor per channel, from the largest
    # weight of the three in that input column: 2.0, 1.0, 0.2; an all-zero column and an
    # input channel that never fired are floored, not divided by zero.
    shared = np.array([2.0, 1.0, 0.2, 1e-5])
    expected = np.maximum(inputs, 1e-5) ** a / shared ** (1 - a)
    assert np.allclose(scales[p + "attention.self"], expected, rtol=1e-5)
    assert np.allclose(scales[p + "intermediate.dense"], np.maximum(inputs, 1e-5) ** a, rtol=1e-5)
    assert set(scales) == {
        p + "attention.self",
        p + "attention.output.dense",
        p + "intermediate.dense",
    }
    # After smoothing, the largest input channel is far closer to the typical one.
    smoothed = inputs[:3] / scales[p + "intermediate.dense"][:3]
    assert smoothed.max() / smoothed.min() < (inputs[:3].max() / inputs[:3].min()) ** 0.5


def test_the_smooth8_recipe_keys_its_files_and_vectors(
    onnx_model: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from nexus_jupyter.core.search import embeddings
    from nexus_jupyter.core.search.embeddings import EmbeddingCache

    def forget() -> None:  # both are read once per process
        onnx_model.recipe.cache_clear()
        embeddings._vector_kind.cache_clear()

    assert onnx_model.recipe("fp32") == "" and onnx_model.recipe("block8") == ""
    before = onnx_model.recipe("smooth8")
    key_before = EmbeddingCache(tmp_path, "smooth8").key("list files")
    forget()
    monkeypatch.setattr(onnx_model, "SMOOTHING", 0.5)
    try:
        after = onnx_model.recipe("smooth8")
        key_after = EmbeddingCache(tmp_path, "smooth8").key("list files")
    finally:
        forget()
    assert len(before) == 8 and after != before
    assert key_after != key_before  # vectors of another calibration are not reused


@needs_model
def test_building_a_quantised_graph_quiets_only_the_quantiser(
    onnx_model: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # ONNX Runtime's quantiser logs advice on the root logger while the graph is built; the
    # build hides those records and nothing else, and leaves the root logger as it was.
    root = logging.getLogger()
    filters = list(root.filters)
    with caplog.at_level(logging.INFO):
        onnx_model.model_file(_packaged(), "int8", tmp_path)
        logging.getLogger().warning("the application's own warning")
    assert not [r for r in caplog.records if "quantization" in Path(r.pathname).parts]
    assert "the application's own warning" in caplog.text
    assert root.filters == filters


def test_block_quantize_round_trips_within_half_a_step(onnx_model: Any) -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    matrix = rng.normal(0, 0.05, (6, 64)).astype(np.float32)
    matrix[1, :32] = 0.0  # an all-zero block must not divide by zero
    values, scales = onnx_model.block_quantize(matrix, block=32)
    assert values.dtype == np.uint8 and values.shape == (6, 2, 32) and scales.shape == (12,)
    restored = (values.astype(np.float32) - 128) * scales.reshape(6, 2, 1)
    step = scales.reshape(6, 2, 1)
    assert (np.abs(restored - matrix.reshape(6, 2, 32)) <= step / 2 + 1e-7).all()
    assert values.min() >= 1 and values.max() <= 255  # symmetric: -127..127 around 128
    with pytest.raises(ValueError, match="blocks of 32"):
        onnx_model.block_quantize(matrix[:, :40], block=32)


def test_a_runtime_without_the_int8_block_kernel_falls_back_to_fp32(
    onnx_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    import onnxruntime as ort

    from nexus_jupyter.core.search import embeddings
    from nexus_jupyter.core.search.dense import DenseIndex

    assert onnx_model.block8_missing() is None  # this machine's ONNX Runtime runs it
    real = ort.InferenceSession

    def old_runtime(model: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(model, bytes):  # the one-node probe
            raise RuntimeError("Could not find an implementation for MatMulNBits(1) node")
        return real(model, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", old_runtime)
    monkeypatch.setattr(onnx_model, "_probe", [])
    monkeypatch.setattr(onnx_model, "_fallback_said", False)
    monkeypatch.setattr(embeddings, "_shared", {})
    assert "MatMulNBits" in (onnx_model.block8_missing() or "")
    with caplog.at_level(logging.WARNING):
        model = onnx_model.OnnxMiniLM(_packaged(), cache_root=tmp_path)
    assert model.variant == "fp32" and model.file.name.endswith("fp32.onnx")
    assert "pip install -U onnxruntime" in caplog.text and "MatMulNBits" in caplog.text
    # An index keys its disk cache by the vectors it will really get, before the model loads:
    # a second index finds every vector the first one embedded.
    first = DenseIndex(tmp_path / "cache")
    first.upsert("t", ("A tool that lists files.", "Lists files."))
    first.flush()
    assert first.variant == "fp32" and first.encoded == 2
    second = DenseIndex(tmp_path / "cache")
    second.upsert("t", ("A tool that lists files.", "Lists files."))
    second.flush()
    assert second.encoded == 0
    first.close()
    second.close()


@needs_model
def test_int8_is_opt_in_and_its_vectors_are_cached_apart(onnx_model: Any, tmp_path: Path) -> None:
    from nexus_jupyter.core.search.embeddings import EmbeddingCache

    variants = ("int8", "fp32", "block8", "smooth8")
    keys = {EmbeddingCache(tmp_path, v).key("t") for v in variants}
    assert len(keys) == 4
    full = SearchIndex("hybrid", cache_dir=tmp_path / "a")
    small = SearchIndex({"mode": "hybrid", "quantized": True}, cache_dir=tmp_path / "b")
    assert full._dense is not None and small._dense is not None
    assert (full._dense.variant, small._dense.variant) == ("smooth8", "int8")
    assert (full._dense.cache.variant, small._dense.cache.variant) == ("smooth8", "int8")
    assert small._dense.model.variant == "int8" and full._dense.model.variant == "smooth8"
    # `precision` picks any graph; its vectors are keyed apart too.
    exact = SearchIndex({"mode": "hybrid", "precision": "fp32"}, cache_dir=tmp_path / "c")
    assert exact._dense is not None and exact._dense.variant == "fp32"
    assert exact._dense.model.variant == "fp32" and exact._dense.model.file.name.endswith(
        "fp32.onnx"
    )
    for index in (full, small, exact):
        index.close()


def _copy_model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in MODEL_FILES:
        os.symlink(_packaged() / name, folder / name)
    return folder


@needs_model
def test_the_model_is_found_in_the_hugging_face_cache_and_at_a_configured_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub = tmp_path / "hub"
    snapshot = hub / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / "abc123"
    _copy_model(snapshot)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    assert find_model() == snapshot
    own = _copy_model(tmp_path / "mine")
    assert find_model(own) == own
    idx = SearchIndex({"mode": "hybrid", "model_path": str(own)}, cache_dir=tmp_path / "emb")
    assert idx.mode == "hybrid"
    idx.close()


def test_a_configured_path_without_the_files_is_named_in_one_message(tmp_path: Path) -> None:
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    reason = semantic_missing(empty)
    assert reason is not None and str(empty) in reason and "model.safetensors" in reason
    with pytest.raises(ConfigError, match="'hybrid' cannot run: the model folder"):
        SearchIndex({"mode": "hybrid", "model_path": str(empty)})


def test_no_model_anywhere_names_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("nexus_jupyter.core.search.model_files._PACKAGE", "no_such_model_package")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path / "st"))
    monkeypatch.delenv("NEXUS_MODEL_PATH", raising=False)
    reason = semantic_missing()
    assert reason is not None and MODEL_COMMAND in reason and reason.count("`") == 2


def _hide_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("nexus_jupyter.core.search.model_files._PACKAGE", "no_such_model_package")
    monkeypatch.setattr("nexus_jupyter.core.search.model_files._fetch_failed", [])
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path / "st"))
    monkeypatch.delenv("NEXUS_MODEL_PATH", raising=False)


def test_auto_says_once_when_it_falls_back_to_keyword(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _hide_the_model(tmp_path, monkeypatch)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no download either
    monkeypatch.setattr(search_index, "_fallback_said", False)
    with caplog.at_level(logging.WARNING, logger=search_index.__name__):
        assert SearchIndex("auto").mode == "keyword"
        assert SearchIndex("auto").mode == "keyword"
    said = [r.getMessage() for r in caplog.records if "keyword mode" in r.getMessage()]
    assert len(said) == 1 and MODEL_COMMAND in said[0], said


class _Hub(http.server.BaseHTTPRequestHandler):
    """Answers the hub's ``/{repo}/resolve/{revision}/{file}`` like the hub does, from a folder."""

    folder: Path
    served: list[str]

    def _file(self) -> Path | None:
        prefix = "/sentence-transformers/all-MiniLM-L6-v2/resolve/main/"
        name = self.path.split("?")[0].removeprefix(prefix)
        path = self.folder / name
        return path if self.path.startswith(prefix) and path.is_file() else None

    def _head(self) -> Path | None:
        path = self._file()
        if path is None:
            self.send_error(404)
            return None
        self.send_response(200)
        self.send_header("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
        self.send_header("ETag", f'"{path.name}-{path.stat().st_size}"')
        self.send_header("Content-Length", str(path.stat().st_size))
        self.end_headers()
        return path

    def do_HEAD(self) -> None:
        self._head()

    def do_GET(self) -> None:
        path = self._head()
        if path is not None:
            self.served.append(path.name)
            self.wfile.write(path.read_bytes())

    def log_message(self, *args: Any) -> None:
        pass


@needs_model
def test_a_missing_model_is_downloaded_once_into_the_hugging_face_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The real huggingface_hub client, against a loopback server that answers as the hub does
    # (this machine reaches no hub), serving the packaged files.
    packaged = _packaged()
    handler = type("Hub", (_Hub,), {"folder": packaged, "served": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _hide_the_model(tmp_path, monkeypatch)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        # huggingface_hub reads HF_HUB_OFFLINE once, at import: another test of this process
        # may have imported it while the suite's HF_HUB_OFFLINE=1 was set
        import huggingface_hub.constants

        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_address[1]}")
        assert find_model() is None
        with caplog.at_level(logging.WARNING):
            idx = SearchIndex("auto", cache_dir=tmp_path / "emb")
        assert idx.mode == "hybrid"
        assert sorted(handler.served) == sorted(MODEL_FILES)
        found = find_model()
        assert found is not None and found.is_relative_to(tmp_path / "hub")
        assert any("downloading" in r.getMessage() for r in caplog.records)
        idx.close()
        again = SearchIndex("auto", cache_dir=tmp_path / "emb")  # found in the cache now
        assert again.mode == "hybrid" and sorted(handler.served) == sorted(MODEL_FILES)
        again.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_failed_download_is_named_in_the_one_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _hide_the_model(tmp_path, monkeypatch)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: refused
    with pytest.raises(ConfigError) as info:
        SearchIndex("hybrid")
    message = str(info.value)
    assert "the download failed" in message and MODEL_COMMAND in message


def test_seven_bit_weights_follow_the_cpu_or_the_environment_and_key_the_cache(
    onnx_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fresh() -> None:
        onnx_model.seven_bit_weights.cache_clear()
        onnx_model.recipe.cache_clear()

    recipes = {}
    for bits in ("7", "8"):
        monkeypatch.setenv("NEXUS_INT8_WEIGHTS", bits)
        fresh()
        assert onnx_model.seven_bit_weights() is (bits == "7")
        recipes[bits] = (onnx_model.recipe("smooth8"), onnx_model.recipe("int8"))
    assert recipes["7"][0] != recipes["8"][0]  # cached graphs and vectors of one are not reused
    assert recipes["7"][1] == "w7" and recipes["8"][1] == ""  # int8's key as before with 8 bits
    monkeypatch.delenv("NEXUS_INT8_WEIGHTS")
    fresh()
    flags = (
        next((line for line in open("/proc/cpuinfo") if line.startswith("flags")), "")
        if os.path.exists("/proc/cpuinfo")
        else ""
    )
    vnni = any(f in flags.split() for f in ("avx512_vnni", "avx_vnni", "amx_int8"))
    x86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")
    assert onnx_model.seven_bit_weights() is (x86 and not vnni)
    fresh()
