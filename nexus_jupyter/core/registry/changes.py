"""How a published set becomes a new snapshot, at a cost proportional to what changed.

A source's tools are stamped (namespaced, their source recorded) and compared with what the
source had: only names whose tool changed are *affected*. :func:`rebuild` then recomputes
those names' entries (who wins, who is shadowed) and derives the change event. Nothing here
walks every tool of a source or of the registry, except :func:`stamp_all` for a source that
hands over a complete set (and even then only dictionary lookups per tool).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..tools.tool import Tool
from .state import RegistryChanged, Snapshot, SourceState, ToolEntry, pick_entry

__all__ = ["rebuild", "stamp", "stamp_all", "update_tools"]


def stamp(state: SourceState, tool: Tool) -> Tool:
    """``tool`` as this source's: namespaced and with its source and kind recorded."""
    final = f"{state.namespace}__{tool.spec.name}" if state.namespace else tool.spec.name
    spec = tool.spec
    if spec.name != final or spec.source != state.name or spec.source_kind != state.kind:
        return tool.with_spec(name=final, source=state.name, source_kind=state.kind)
    return tool


def _same(before: Tool | None, after: Tool) -> bool:
    """Whether ``after`` is, as far as callers can see, the tool already published (same
    content, same source, same file: a rename is a change). Such a replacement still swaps
    in the new object (its code may close over other values) but is not announced."""
    return before is after or (
        before is not None
        and before.spec.version == after.spec.version
        and before.spec.source == after.spec.source
        and before.spec.origin == after.spec.origin
    )


def stamp_all(state: SourceState, tools: Iterable[Tool]) -> tuple[dict[str, Tool], set[str]]:
    """The source's new complete set and the names whose tool object changed (added,
    replaced or gone). Only those names are recomputed; whether a replacement is announced
    as an update is decided there (:func:`rebuild`)."""
    new: dict[str, Tool] = {}
    affected: set[str] = set()
    old = state.tools
    for tool in tools:
        stamped = stamp(state, tool)
        name = stamped.spec.name
        new[name] = stamped
        if old.get(name) is not stamped:
            affected.add(name)
    affected.update(name for name in old if name not in new)
    return new, affected


def update_tools(state: SourceState, upserts: Iterable[Tool], removals: Iterable[str]) -> set[str]:
    """Apply a delta to ``state.tools`` in place (under the registry's lock); returns the
    affected names. ``removals`` are names before namespacing, like the tools' own names."""
    affected: set[str] = set()
    prefix = f"{state.namespace}__" if state.namespace else ""
    tools = state.tools.copy()  # status() and the faces read it without the lock
    for raw in removals:
        name = prefix + raw
        if tools.pop(name, None) is not None:
            affected.add(name)
    for tool in upserts:
        stamped = stamp(state, tool)
        name = stamped.spec.name
        if tools.get(name) is not stamped:
            tools[name] = stamped
            affected.add(name)
    state.tools = tools
    return affected


def rebuild(
    snapshot: Snapshot,
    states: Mapping[str, SourceState],
    affected: Iterable[str],
    sources: tuple[str, ...],
    allow_overrides: Collection[str] = (),
) -> tuple[Snapshot, RegistryChanged]:
    """The snapshot after ``affected`` names changed, and the event that says so.
    ``allow_overrides`` are the names other sources may take from built-ins (nex.yaml)."""
    old = snapshot.entries
    entries: dict[str, ToolEntry] | None = None
    added: list[str] = []
    removed: list[str] = []
    updated: list[str] = []
    versions: dict[str, str] = {}
    for name in affected:
        providers = {n: st for n, st in states.items() if name in st.tools}
        entry = pick_entry(name, providers, allow_overrides)
        before = old.get(name)
        if entry is None and before is None:
            continue
        if entries is None:
            entries = snapshot.copy_entries()
        if entry is None:
            del entries[name]
            removed.append(name)
            continue
        entries[name] = entry
        if before is None:
            added.append(name)
            versions[name] = entry.tool.spec.version
        elif _entry_changed(before, entry):
            updated.append(name)
            versions[name] = entry.tool.spec.version
    if entries is not None:
        snapshot = Snapshot(entries, snapshot.generation + 1)
    change = RegistryChanged(
        tuple(sorted(added)), tuple(sorted(removed)), tuple(sorted(updated)), versions, sources
    )
    return snapshot, change


def _entry_changed(before: ToolEntry, after: ToolEntry) -> bool:
    if before.tool is not after.tool and not _same(before.tool, after.tool):
        return True
    if before.status != after.status or before.reason != after.reason:
        return True
    return [t.spec.version for t in before.shadowed] != [t.spec.version for t in after.shadowed]


def unavailable_with(
    current: Mapping[str, str], prefix: str, changes: Mapping[str, str | None]
) -> tuple[dict[str, str], set[str]]:
    """``current`` reasons with ``changes`` applied (``None`` clears); and the names whose
    reason changed."""
    out = dict(current)
    touched: set[str] = set()
    for raw, reason in changes.items():
        name = prefix + raw
        if reason is None:
            if out.pop(name, None) is not None:
                touched.add(name)
        elif out.get(name) != reason:
            out[name] = reason
            touched.add(name)
    return out, touched


def details_changed(before: Any, after: Any) -> bool:
    """Whether newly published details differ (a function that builds them always counts:
    the source calls with one when something it shows has changed)."""
    if after is None:
        return False
    if callable(after) or callable(before):
        return True
    return dict(after) != dict(before or {})
