"""``Registry.default()``: the registry every face starts from.

Built-in tools, the watched tools folder (``tools/dynamic`` under the root, or what
``nex.yaml`` / ``NEXUS_TOOLS_DIR`` say), and the policy, credentials and MCP servers of the
merged configuration levels. Parts whose modules are not installed are skipped.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_TOOLS_DIR", "build_default_registry", "resolve_tools_dir"]

DEFAULT_TOOLS_DIR = "tools/dynamic"


def resolve_tools_dir(root: str | Path | None = None, configured: str | None = None) -> Path:
    """The tools folder: ``NEXUS_TOOLS_DIR``, else the configured one, else ``tools/dynamic``,
    relative to ``root`` (default: the current directory)."""
    base = Path(root) if root is not None else Path.cwd()
    chosen = os.environ.get("NEXUS_TOOLS_DIR") or configured or DEFAULT_TOOLS_DIR
    path = Path(chosen).expanduser()
    return path if path.is_absolute() else base / path


def build_default_registry(
    cls: Any,
    *,
    root: str | Path | None = None,
    config: Any = None,
    watch: bool = True,
    builtins: bool = True,
    mcp: bool = True,
    **kwargs: Any,
) -> Any:
    from .setup import configure_registry

    return configure_registry(
        cls, root=root, config=config, watch=watch, builtins=builtins, mcp=mcp, **kwargs
    )
