"""What ``%tool toolsets``, ``nexus-tools toolsets`` and the catalog show: one row per
toolset (its tools, where it comes from, whether it is on, its approval default, errors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .names import BUILTIN_TOOLSETS
from .settings import ToolsetSettings

__all__ = ["toolset_rows"]


def toolset_rows(registry: Any) -> list[dict[str, Any]]:
    """A row per toolset of ``registry``: built-in, configured and advertised ones, the
    disabled ones included (with no tools), sorted by name."""
    settings = getattr(registry, "settings", None)
    configured: Mapping[str, ToolsetSettings] = getattr(settings, "toolsets", None) or {}
    tools: dict[str, list[str]] = {}
    for entry in registry.entries():
        if entry.spec.toolset:
            tools.setdefault(entry.spec.toolset, []).append(entry.name)
    loaded = [s for s in registry.sources() if s.name.startswith("toolset:")]
    errors = {state.name.partition(":")[2]: state.error for state in loaded}
    references = {s.name.partition(":")[2]: getattr(s.source, "reference", None) for s in loaded}
    names = set(tools) | set(configured) | set(errors) | set(BUILTIN_TOOLSETS)
    rows = []
    for name in sorted(names):
        entry = configured.get(name, ToolsetSettings())
        origin = "builtin" if name in BUILTIN_TOOLSETS else entry.module or "entry point"
        if origin == "entry point" and references.get(name):
            origin = f"entry point {references[name]}"
        default = entry.approval.get("default")
        external = name not in BUILTIN_TOOLSETS
        rows.append(
            {
                "toolset": name,
                "enabled": entry.enabled,
                "origin": origin,
                "tools": sorted(tools.get(name, [])),
                "prefix": entry.prefix,
                "approval": (default.action if default and default.action else None)
                or ("ask" if external else "by permission"),
                "ceiling": entry.permission,
                "error": errors.get(name),
            }
        )
    return rows
