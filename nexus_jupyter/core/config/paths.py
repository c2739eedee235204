"""Where the watched tools folder is: ``NEXUS_TOOLS_DIR``, ``nex.yaml``, or ``tools/dynamic``."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEFAULT_TOOLS_DIR", "resolve_tools_dir"]

DEFAULT_TOOLS_DIR = "tools/dynamic"


def resolve_tools_dir(root: str | Path | None = None, configured: str | None = None) -> Path:
    """The tools folder: ``NEXUS_TOOLS_DIR``, else the configured one, else ``tools/dynamic``,
    relative to ``root`` (default: the current directory)."""
    base = Path(root) if root is not None else Path.cwd()
    chosen = os.environ.get("NEXUS_TOOLS_DIR") or configured or DEFAULT_TOOLS_DIR
    path = Path(chosen).expanduser()
    return path if path.is_absolute() else base / path
