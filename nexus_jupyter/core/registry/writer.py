"""The writing half of the registry: sources' states, publishing, and change events.

Every write takes the registry's lock, applies what changed to the sources' states, swaps in a
new snapshot for the affected names only (:mod:`.changes`) and queues the change for every
subscriber (:mod:`.events`). :class:`~nexus_jupyter.core.registry.registry.Registry` adds
sources' lifecycles, the session's own tools and calls on top.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import SourceError
from ..tools.tool import Tool
from .changes import details_changed, rebuild, stamp_all, unavailable_with, update_tools
from .departures import Departures
from .events import EventHub, Subscriber
from .publisher import UNCHANGED, Details
from .reader import RegistryReader
from .state import RegistryChanged, SourceState

if TYPE_CHECKING:
    from ..policy.protocols import Credentials
    from ..search.options import SearchSetting

__all__ = ["RegistryWriter"]


class RegistryWriter(RegistryReader):
    """Sources' states and the one way they change (see the module docstring)."""

    def __init__(
        self,
        *,
        search: SearchSetting = "auto",
        search_threshold: float | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        super().__init__(search=search, search_threshold=search_threshold, credentials=credentials)
        self._states: dict[str, SourceState] = {}
        self._events = EventHub()
        self._allow_overrides: tuple[str, ...] = ()
        #: tools that left, and from which source (see :meth:`RegistryReader.not_found`)
        self._departures = Departures()

    def sources(self) -> list[SourceState]:
        with self._lock:  # add_source/remove_source change the dict
            return list(self._states.values())

    def status(self) -> dict[str, Any]:
        """Every source's status (errors, per-file details, MCP states), and subscribers
        whose callbacks raised, as a dict."""
        return {
            "sources": [st.to_dict() for st in self.sources()],
            "tools": len(self._snapshot.entries),
            "subscribers": [f.to_dict() for f in self._events.failures()],
        }

    def publish(
        self,
        name: str,
        tools: Iterable[Tool],
        *,
        error: str | None = None,
        details: Details | None = None,
        unavailable: Mapping[str, str] | None = None,
    ) -> RegistryChanged:
        """Swap in the complete current set of source ``name`` atomically.

        Tools whose version did not change are recognised, so the work after the swap (the
        snapshot, the search index, the event) covers only what changed. ``unavailable``
        maps tool names (before namespacing) to a reason they cannot run now.
        """
        with self._lock:
            state = self._state(name)
            prefix = f"{state.namespace}__" if state.namespace else ""
            new_tools, affected = stamp_all(state, tools)
            new_unavailable = {prefix + k: v for k, v in (unavailable or {}).items()}
            affected |= {
                n
                for n in set(new_unavailable) | set(state.unavailable)
                if new_unavailable.get(n) != state.unavailable.get(n)
            }
            status_changed = (
                state.error != error
                or details_changed(state.details_source, details)
                or new_unavailable != state.unavailable
            )
            state.tools = new_tools
            state.unavailable = new_unavailable
            state.error = error
            if details is not None:
                state.details_source = details
            return self._commit(state, affected, status_changed)

    def update(
        self,
        name: str,
        *,
        upserts: Iterable[Tool] = (),
        removals: Iterable[str] = (),
        unavailable: Mapping[str, str | None] | None = None,
        error: Any = UNCHANGED,
        details: Details | None = None,
    ) -> RegistryChanged:
        """Change some tools of source ``name``: add or replace ``upserts``, drop the tools
        named in ``removals`` (names before namespacing). ``unavailable`` sets or clears
        (``None``) reasons; ``error`` stays as it was unless given. Costs what changed."""
        with self._lock:
            state = self._state(name)
            removals = list(removals)
            affected = update_tools(state, upserts, removals)
            status_changed = False
            prefix = f"{state.namespace}__" if state.namespace else ""
            gone = [r for r in removals if prefix + r in state.unavailable]
            if gone:  # a removed tool's reason goes with it, unless this call sets it again
                unavailable = {**dict.fromkeys(gone), **(unavailable or {})}
            if unavailable:
                prefix = f"{state.namespace}__" if state.namespace else ""
                state.unavailable, touched = unavailable_with(
                    state.unavailable, prefix, unavailable
                )
                affected |= touched
                status_changed = bool(touched)
            if error is not UNCHANGED and error != state.error:
                state.error = error
                status_changed = True
            if details is not None:
                status_changed |= details_changed(state.details_source, details)
                state.details_source = details
            return self._commit(state, affected, status_changed)

    def set_status(
        self, name: str, *, error: Any = UNCHANGED, details: Details | None = None
    ) -> RegistryChanged:
        """Record a source's error (``None`` clears it) and details without changing its
        tools (the last good set stays); what is not given stays as it was."""
        with self._lock:
            state = self._state(name)
            changed = False
            if error is not UNCHANGED and error != state.error:
                state.error = error
                changed = True
            if details is not None:
                changed |= details_changed(state.details_source, details)
                state.details_source = details
            return self._commit(state, set(), changed)

    @property
    def allow_overrides(self) -> tuple[str, ...]:
        """Built-in names (globs) other sources may take (``allow_overrides`` in nex.yaml)."""
        return self._allow_overrides

    @allow_overrides.setter
    def allow_overrides(self, names: Iterable[str]) -> None:
        # Re-decide every name two sources provide: who wins may have changed.
        with self._lock:
            self._allow_overrides = tuple(names)
            seen: set[str] = set()
            contested: set[str] = set()
            for state in self._states.values():
                contested |= seen & state.tools.keys()
                seen |= state.tools.keys()
            snapshot, change = rebuild(
                self._snapshot, self._states, contested, (), self._allow_overrides
            )
            self._snapshot = snapshot
            self._index_changes(change)
            self._events.publish(change)

    def _state(self, name: str) -> SourceState:
        state = self._states.get(name)
        if state is None:
            raise SourceError(f"No source named {name!r}; add it with add_source() first.")
        return state

    def _commit(
        self, state: SourceState, affected: set[str], status_changed: bool
    ) -> RegistryChanged:
        """Swap in the snapshot for ``affected`` and queue the event (under ``_lock``, so
        subscribers' queues hold changes in the order the snapshots were swapped)."""
        state.updated_at = time.time()
        sources = (state.name,) if status_changed else ()
        before = self._snapshot.entries
        snapshot, change = rebuild(
            self._snapshot, self._states, affected, sources, self._allow_overrides
        )
        self._snapshot = snapshot
        if change.added or change.removed:
            self._departures.note(change, before)
        self._index_changes(change)
        self._events.publish(change)
        return change

    def _index_changes(self, change: RegistryChanged) -> None:
        if self._index is not None and change.tools_changed:
            entries = self._snapshot.entries
            self._index.update(
                upserts=[entries[n].tool.spec for n in (*change.added, *change.updated)],
                removals=change.removed,
            )

    # -- events ---------------------------------------------------------------------------

    def subscribe(
        self, callback: Subscriber, *, loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        """Call ``callback(RegistryChanged)`` after every change, in the order the changes
        were made; returns an unsubscribe function.

        Each subscriber has its own queue: callbacks run on a thread of the subscriber's
        own, or on ``loop`` when given, never on the thread that changed the registry, so a
        slow callback delays only itself. A callback may change the registry; that change is
        delivered after the current one. A callback that raises is recorded in
        :meth:`status` (``subscribers``) and keeps receiving changes.
        """
        return self._events.subscribe(callback, loop=loop)

    def announce(self, change: RegistryChanged) -> None:
        """Deliver ``change`` to every subscriber without swapping a snapshot: news about
        tools that is not part of them (``tests``: their test status changed)."""
        with self._lock:  # in order with the changes writers queue
            self._events.publish(change)

    def wait_for_events(self, timeout: float = 5.0) -> bool:
        """Block until every thread-delivered subscriber has handled every change made so
        far (``False`` after ``timeout`` seconds). Scripts and tests use it to observe a
        change's effects; the faces never need to."""
        return self._events.wait_idle(timeout)
