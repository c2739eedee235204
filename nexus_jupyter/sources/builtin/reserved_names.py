"""Names an agent cannot take with ``create_dynamic_tool``.

A new tool named ``read`` would not replace the built-in (the registry never lets a file take
a built-in's name), but it would sit there shadowed, and a later ``allow_overrides`` would
make it live without anyone having looked at it; a new tool named like a notebook, MCP or
toolset tool would silently take or lose that name. So ``create_dynamic_tool`` refuses:

- every built-in tool name (:data:`~nexus_jupyter.core.toolsets.settings.BUILTIN_TOOLSETS`
  and whatever the ``builtin`` source lists);
- any name a tool of another source already has (the same file may be rewritten with
  ``overwrite``),

unless ``allow_overrides`` in nex.yaml lists the name (globs).

Agent-created files follow a naming convention: with an ``agent_id`` the file is
``agent_<agent id>_<tool>.py`` and its header records the agent and the principal.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

from ...core.errors import ExportError
from ...core.toolsets.settings import BUILTIN_TOOLSETS

__all__ = ["agent_file_stem", "refuse_reserved"]

_AGENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


def agent_file_stem(name: str, agent_id: str | None) -> str:
    """The file name (without ``.py``) for tool ``name`` made by ``agent_id``."""
    if agent_id is None:
        return name
    if not _AGENT_ID.fullmatch(agent_id):
        raise ExportError(
            f"Invalid agent_id {agent_id!r}: use letters, digits, '_' and '-', at most 32 "
            "characters."
        )
    return f"agent_{agent_id}_{name}"


def _allowed(name: str, registry: Any) -> bool:
    settings = getattr(registry, "settings", None)
    globs = getattr(settings, "allow_overrides", None) or ()
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def refuse_reserved(name: str, registry: Any, path: Path) -> None:
    """Raise :class:`ExportError` when ``name`` is reserved for another tool (see above)."""
    if registry is None or _allowed(name, registry):
        return
    builtin = {n for names in BUILTIN_TOOLSETS.values() for n in names}
    entry = registry._snapshot.entries.get(name) if hasattr(registry, "_snapshot") else None
    tools = [entry.tool, *entry.shadowed] if entry is not None else []
    if name in builtin or any(t.spec.source_kind == "builtin" for t in tools):
        raise ExportError(
            f"{name!r} is the name of a built-in tool and is reserved; choose another name."
        )
    for other in tools:
        if other.spec.origin and Path(other.spec.origin).resolve() == path.resolve():
            continue  # the same file: overwrite decides
        raise ExportError(
            f"A tool named {name!r} already comes from {other.spec.source or 'another source'}; "
            "choose another name (a new tool must not shadow or replace an existing one)."
        )
