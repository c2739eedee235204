"""What ``%tool toolsets``, ``nexus-tools toolsets`` and the catalog show: one row per
toolset (its tools, where it comes from, whether it is on, its approval default, errors)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from .names import BUILTIN_TOOLSETS
from .settings import ToolsetSettings

__all__ = ["settings_problems", "toolset_rows"]


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
    advertised: frozenset[str] = getattr(registry, "advertised_toolsets", frozenset())
    names = set(tools) | set(configured) | set(errors) | set(BUILTIN_TOOLSETS)
    rows = []
    for name in sorted(names):
        entry = configured.get(name, ToolsetSettings())
        origin = "builtin" if name in BUILTIN_TOOLSETS else entry.module or "entry point"
        if origin == "entry point" and references.get(name):
            origin = f"entry point {references[name]}"
        elif origin == "entry point" and name not in references:
            origin = "-"  # named in nex.yaml only: the row's error says so
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
                "error": errors.get(name)
                or _settings_problem(
                    name,
                    entry,
                    tools.get(name, []),
                    name in references or name in advertised,
                    names,
                ),
            }
        )
    return rows


def settings_problems(registry: Any) -> list[str]:
    """What is wrong with nex.yaml's ``toolsets:`` (a misspelt name, a tool no toolset has),
    one sentence each, for the faces that check settings (``check``, ``list``). A toolset
    module that failed to load is not here: its source says so."""
    failed = {
        s.name.partition(":")[2]
        for s in registry.sources()
        if s.name.startswith("toolset:") and s.error is not None
    }
    return [
        f"toolsets.{row['toolset']}: {row['error']}"
        for row in toolset_rows(registry)
        if row["error"] and row["toolset"] not in failed
    ]


def _settings_problem(
    name: str, entry: ToolsetSettings, tools: list[str], loaded: bool, known: set[str]
) -> str | None:
    """What is wrong with ``toolsets.<name>`` in nex.yaml that would otherwise go unnoticed:
    a toolset that exists nowhere (a misspelt name), or a tool name in ``tools:`` or in the
    approval map that no tool of the toolset has (a misspelt ``blocked`` entry blocks
    nothing). ``loaded``: a package advertises it or it loaded. A switched-off toolset is
    never loaded, so only its name can be checked: one no package advertises, one slip from
    a built-in toolset's name, is a misspelt switch."""
    if not entry.enabled:
        # an installed package's toolset switched off is fine; a name one slip from a
        # built-in one is a misspelt switch that leaves the one meant on
        close = difflib.get_close_matches(name, sorted(BUILTIN_TOOLSETS), n=1)
        if name in BUILTIN_TOOLSETS or entry.module or loaded or not close:
            return None
        return (
            f"No toolset {name!r} to switch off: it is not built in, and no installed package "
            f"advertises it. Did you mean {close[0]!r}? ({close[0]!r} is still on.)"
        )
    if name not in BUILTIN_TOOLSETS and not entry.module and not loaded:
        others = sorted(n for n in known if n != name)
        close = difflib.get_close_matches(name, others, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        return (
            f"No toolset {name!r}: it is not built in, no installed package advertises it, "
            f"and toolsets.{name} in nex.yaml has no `module:`.{hint}"
        )
    if name in BUILTIN_TOOLSETS:
        offered = set(BUILTIN_TOOLSETS[name])
    elif loaded and entry.tools is None:
        offered = {t[len(entry.prefix) :] if t.startswith(entry.prefix) else t for t in tools}
    else:
        return None  # an external toolset not loaded (its error shows) or narrowed by tools:
    unknown = [t for t in entry.tools or () if t not in offered]
    unknown += [
        key
        for key in entry.approval
        if key != "default"
        and key not in offered
        and key not in {entry.prefix + t for t in offered}
    ]
    if not unknown:
        return None
    listed = ", ".join(sorted(offered)) or "none"
    return (
        f"toolsets.{name} in nex.yaml names {', '.join(map(repr, unknown))}, which "
        f"{'is' if len(unknown) == 1 else 'are'} not a tool of this toolset (its tools: "
        f"{listed})."
    )
