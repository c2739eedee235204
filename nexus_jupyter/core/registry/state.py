"""The registry's state: immutable snapshots, entries, sources and change events.

Writers (sources publishing their sets) build a new :class:`Snapshot` under a lock and swap
it in with one attribute assignment; readers take the current snapshot and never lock. A
reader therefore sees the old set or the new one, never a mix.
"""

from __future__ import annotations

import fnmatch
import threading
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from ..tools.spec import SOURCE_KINDS, SourceKind, permission_rank
from ..tools.tool import Tool

__all__ = [
    "RegistryChanged",
    "Snapshot",
    "SourceState",
    "ToolEntry",
    "ToolStatus",
]

ToolStatus = Literal["ok", "unavailable", "error"]
_RANK = {kind: i for i, kind in enumerate(SOURCE_KINDS)}
_PERSON_KINDS = frozenset({"notebook"})


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One name in the registry: the tool that wins it, plus the tools it shadows."""

    tool: Tool
    status: ToolStatus = "ok"
    reason: str | None = None
    shadowed: tuple[Tool, ...] = ()

    @property
    def name(self) -> str:
        return self.tool.spec.name

    @property
    def spec(self) -> Any:
        return self.tool.spec

    @property
    def available(self) -> bool:
        return self.status == "ok"

    @property
    def conflicting(self) -> tuple[Tool, ...]:
        """The tools of sources as strong as the winner's that define this name too (a
        conflict: the name is in error, no call by name alone runs either)."""
        if self.status != "error":
            return ()
        kind = self.tool.spec.source_kind
        return tuple(t for t in self.shadowed if t.spec.source_kind == kind)

    def of_source(self, source: str) -> ToolEntry | None:
        """The tool ``source`` defines under this name, as an entry of its own (the winner,
        or one it shadows), or ``None``: what a call that names its source runs. A conflict
        is no obstacle to it (the call says which tool it means)."""
        if self.tool.spec.source == source:
            return self if self.status != "error" else ToolEntry(self.tool)
        found = next((t for t in self.shadowed if t.spec.source == source), None)
        return ToolEntry(found) if found is not None else None

    def to_dict(self) -> dict[str, Any]:
        out = self.tool.spec.to_dict()
        out["status"] = self.status
        out["reason"] = self.reason
        out["shadowed"] = [
            {
                "source": t.spec.source,
                "source_kind": t.spec.source_kind,
                "version": t.spec.version,
                "origin": t.spec.origin,
            }
            for t in self.shadowed
        ]
        return out


@dataclass(slots=True)
class SourceState:
    """What the registry knows of one source (mutable, guarded by the registry's lock).

    ``details_source`` is what the source published: a dict, or a function that builds one
    when read (see :data:`~nexus_jupyter.core.registry.publisher.Details`).
    """

    source: Any
    name: str
    kind: SourceKind
    namespace: str | None = None
    tools: dict[str, Tool] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    details_source: Any = None
    updated_at: float = field(default_factory=time.time)
    refresh_lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    #: The level :meth:`Registry.refresh` logged this source's last load failure at, until
    #: a load works again (its "works again" line pairs only with a failure it logged).
    failure_logged_at: int | None = None

    @property
    def details(self) -> dict[str, Any]:
        found = self.details_source
        if callable(found):
            found = found()
        return dict(found) if found else {}

    @property
    def status(self) -> str:
        return "error" if self.error else "ok"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "status": self.status,
            "error": self.error,
            "tools": sorted(self.tools),
            "unavailable": dict(self.unavailable),
            "details": self.details,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class RegistryChanged:
    """Sent to subscribers after every change.

    ``added``/``removed``/``updated`` are tool names; ``versions`` maps each added or updated
    name to its new version; ``sources`` names the sources whose set or status changed;
    ``tests`` names the tools whose test status changed (no snapshot changes with it).
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    versions: Mapping[str, str] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()

    @property
    def tools_changed(self) -> bool:
        return bool(self.added or self.removed or self.updated)

    def __bool__(self) -> bool:
        return self.tools_changed or bool(self.sources) or bool(self.tests)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "updated": list(self.updated),
            "versions": dict(self.versions),
            "sources": list(self.sources),
            "tests": list(self.tests),
        }


class Snapshot:
    """An immutable view of every entry, by name.

    It takes ownership of ``entries``: the writer builds a fresh dict for each snapshot and
    never touches it again, so readers need no lock and no copy is made twice.
    """

    __slots__ = ("_owned", "entries", "generation")

    def __init__(self, entries: dict[str, ToolEntry], generation: int) -> None:
        self._owned = entries
        self.entries: Mapping[str, ToolEntry] = MappingProxyType(entries)
        self.generation = generation

    def copy_entries(self) -> dict[str, ToolEntry]:
        """A new dict of the entries, for the writer building the next snapshot (a plain
        dict copy: copying through the read-only view would walk it key by key)."""
        return self._owned.copy()


def pick_entry(
    name: str, providers: Mapping[str, SourceState], allow_overrides: Collection[str] = ()
) -> ToolEntry | None:
    """The entry for ``name`` given the sources that provide it (strongest kind wins;
    among equals, the source added first).

    A tool of a file, a manifest, a toolset or an MCP server never takes a name from a
    built-in, nor from a tool of a stricter permission (a file tool ``bash`` declared
    ``read_only`` would run without approval), unless ``allow_overrides`` (in nex.yaml,
    name globs) lists the name; even then, never a built-in's name with a laxer permission.
    Notebook tools, defined by the person at the notebook, may take any name.
    """
    candidates = [(st, st.tools[name]) for st in providers.values() if name in st.tools]
    if not candidates:
        return None
    candidates.sort(key=lambda pair: _RANK.get(pair[0].kind, 99))
    allowed = any(fnmatch.fnmatchcase(name, glob) for glob in allow_overrides)
    passed: tuple[SourceState, Tool] | None = None
    chosen = candidates[0]
    for candidate in candidates:
        blocker = next((other for other in candidates if _blocks(other, candidate, allowed)), None)
        if blocker is None:
            chosen = candidate
            break
        passed = passed or candidate
    else:  # every candidate is blocked by another: the strictest one is the safe choice
        chosen = max(candidates, key=lambda pair: permission_rank(pair[1].spec.permission))
    winner_state, winner = chosen
    rest = [pair for pair in candidates if pair is not chosen]
    status: ToolStatus = "ok"
    reason = winner_state.unavailable.get(name)
    if reason is not None:
        status = "unavailable"
    elif rest and _RANK.get(rest[0][0].kind) == _RANK.get(winner_state.kind):
        status, reason = (
            "error",
            (
                f"conflict: {name!r} is defined by {winner_state.name} and {rest[0][0].name}; "
                "rename one of them"
            ),
        )
    elif passed is not None:
        reason = (
            f"{name!r} of {passed[0].name} ({passed[1].spec.permission}) is not used: it "
            f"would replace the {winner.spec.permission} tool of {winner_state.name}. List "
            "the name under allow_overrides in nex.yaml to let it."
        )
    return ToolEntry(tool=winner, status=status, reason=reason, shadowed=tuple(t for _, t in rest))


def _blocks(
    other: tuple[SourceState, Tool], candidate: tuple[SourceState, Tool], allowed: bool
) -> bool:
    """Whether ``other`` keeps ``candidate`` from taking the name (see :func:`pick_entry`)."""
    if other is candidate or _RANK.get(other[0].kind, 99) <= _RANK.get(candidate[0].kind, 99):
        return False  # only a tool the candidate would shadow can hold it back
    if candidate[0].kind in _PERSON_KINDS:
        return False  # the person at the notebook may redefine any name
    laxer = permission_rank(candidate[1].spec.permission) < permission_rank(
        other[1].spec.permission
    )
    if other[0].kind == "builtin":
        return not allowed or laxer
    return laxer and not allowed
