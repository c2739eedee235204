"""The sentence encoder and the dense index behind hybrid search (the ``semantic`` extra)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter.core.search.index import semantic_missing

pytestmark = pytest.mark.skipif(
    semantic_missing() is not None,
    reason=f"semantic extra missing ({semantic_missing()}): pip install nexus-jupyter[semantic]",
)


@pytest.mark.parametrize(
    "backend", ["numpy", "onnx fp32", "onnx smooth8", "onnx block8", "onnx int8"]
)
def test_minilm_matches_reference_embeddings(backend: str, tmp_path: Path) -> None:
    import numpy as np

    from nexus_jupyter.core.search.embeddings import MiniLM, model_dir

    if backend == "numpy":
        model: Any = MiniLM(model_dir())
    else:
        onnx_model = pytest.importorskip("nexus_jupyter.core.search.onnx_model")
        if onnx_model.onnx_missing():
            pytest.skip(f"{onnx_model.onnx_missing()} not installed")
        model = onnx_model.OnnxMiniLM(
            model_dir(), precision=backend.split()[1], cache_root=tmp_path
        )
    # int8 weights and activations move each dimension by up to about 0.01; smoothed or in
    # blocks of 32, by up to about 0.004.
    atol = {"onnx int8": 0.02, "onnx block8": 0.006, "onnx smooth8": 0.006}.get(backend, 1e-4)
    # First dimensions of sentence-transformers' all-MiniLM-L6-v2 output for these texts.
    reference = {
        "List the files in a directory.": [0.02801, 0.07483, -0.10769, -0.00772, 0.09111],
        "Get current weather for a location.": [0.06016, 0.00127, 0.08934, 0.04406, 0.04098],
    }
    vectors = model.encode(list(reference))
    assert vectors.shape == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    for vec, expected in zip(vectors, reference.values(), strict=True):
        assert np.allclose(vec[:5], expected, atol=atol)


def test_paraphrases_are_closer_than_unrelated_text() -> None:
    from nexus_jupyter.core.search.embeddings import shared_model

    a, b, c = shared_model().encode(
        [
            "Show the files in a folder.",
            "List the contents of a directory.",
            "The weather is sunny in Lisbon.",
        ]
    )
    assert float(a @ b) > 0.6
    assert float(a @ c) < 0.2


def test_dense_similarity_is_the_best_view_and_survives_removal(tmp_path: Path) -> None:
    import numpy as np

    from nexus_jupyter.core.search.dense import DenseIndex
    from nexus_jupyter.core.search.embeddings import shared_model

    dense = DenseIndex(tmp_path)
    dense.upsert("weather", ("Stock market prices.", "Forecast of rain and sun."))
    dense.upsert("cooking", ("Recipes for dinner.", "Bake bread at home."))
    dense.upsert("music", ("Play a song.", "Make a playlist."))
    query = "will it rain tomorrow"
    q = shared_model().encode([query])[0]
    got = dict(zip(dense.names, dense.similarities(query).tolist(), strict=True))
    views = shared_model().encode(["Stock market prices.", "Forecast of rain and sun."])
    assert got["weather"] == pytest.approx(float((views @ q).max()), abs=1e-5)
    assert max(got, key=got.__getitem__) == "weather"
    dense.remove("weather")  # the last row moves into the hole
    after = dict(zip(dense.names, dense.similarities(query).tolist(), strict=True))
    assert set(after) == {"cooking", "music"}
    assert after == pytest.approx({k: got[k] for k in after}, abs=1e-6)
    assert np.isfinite(list(after.values())).all()
    with pytest.raises(ValueError, match="has 1 views"):
        dense.upsert("odd", "one view only")
    dense.close()


def test_a_large_index_splits_similarities_over_two_threads_with_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nexus_jupyter.core.search import dense as dense_module
    from nexus_jupyter.core.search.dense import DenseIndex

    dense = DenseIndex(tmp_path)
    for i in range(11):  # an odd count: the halves differ in size
        dense.upsert(f"t{i}", (f"Tool number {i} reads files.", f"Sends message {i}."))
    query = "send a message"
    whole = dense.similarities(query).copy()
    monkeypatch.setattr(dense_module, "SPLIT_AT", 4)
    seen: list[str] = []
    real = dense_module._second_thread

    def counted() -> object:
        pool = real()
        seen.append("split" if pool is not None else "one core")
        return pool

    monkeypatch.setattr(dense_module, "_second_thread", counted)
    split = dense.similarities(query)
    assert seen  # the split path ran
    assert split.tolist() == pytest.approx(whole.tolist(), abs=1e-6)
    dense.close()


def test_encoding_leaves_numpy_threads_as_they_were() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from nexus_jupyter.core.search.embeddings import shared_model

    before = [lib["num_threads"] for lib in threadpoolctl.threadpool_info()]
    shared_model().encode(["a short sentence"])
    assert [lib["num_threads"] for lib in threadpoolctl.threadpool_info()] == before


def test_concurrent_encoding_restores_numpy_threads(tmp_path: Path) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from nexus_jupyter.core.search.dense import DenseIndex
    from nexus_jupyter.core.search.embeddings import MiniLM, shared_model

    before = [lib["num_threads"] for lib in threadpoolctl.threadpool_info()]
    # Two encoders (separate locks) and an index's similarity product, all at once.
    models = [shared_model(), MiniLM()]
    dense = DenseIndex(tmp_path, model=models[0])
    dense.upsert("t", ("A tool.",))
    dense.flush()  # DenseIndex is not thread-safe for writes (SearchIndex locks around it)
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(5):
                models[k % 2].encode([f"sentence {k} {i}"])
                dense.similarities(f"query {k} {i}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [lib["num_threads"] for lib in threadpoolctl.threadpool_info()] == before
