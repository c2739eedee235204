"""The registry: one name -> tool map fed by many sources, searched and called by every face.

>>> from nexus_jupyter import Registry, tool
>>> @tool
... def add(a: int, b: int) -> int:
...     "Add two integers."
...     return a + b
>>> reg = Registry()
>>> reg.add(add)
<Tool 'add' from notebook (read_only) v...>
>>> reg.call_sync("add", {"a": 1, "b": 2}).structured
3
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import SourceError, ToolNotFound
from ..tools.tool import Tool
from .calls import CallRunner
from .loop import BackgroundLoop
from .reader import RegistryReader
from .source import MutableSource, ToolSource
from .state import RegistryChanged, Snapshot, SourceState, pick_entry
from .wiring import installed_wiring

if TYPE_CHECKING:
    from ..search.index import SearchIndex

__all__ = ["Registry"]

log = logging.getLogger(__name__)
Subscriber = Callable[[RegistryChanged], Any]


class Registry(RegistryReader, CallRunner):
    """Every tool the session can see, from every source, behind one API.

    ``Registry()`` is empty; :meth:`Registry.default` adds the built-in tools, the watched
    tools folder and the MCP servers of ``nex.yaml``. Reads are lock-free (immutable
    snapshots); writes are serialized and swapped in atomically.

    ``search`` is ``"keyword"``, ``"hybrid"`` or ``"auto"`` (hybrid when the ``semantic``
    extra is installed). ``policy``, ``credentials`` and ``audit`` are consulted on every call.
    """

    def __init__(
        self,
        *,
        search: str = "auto",
        policy: Any = None,
        credentials: Any = None,
        audit: Any = None,
        search_threshold: float | None = None,
    ) -> None:
        self.search_mode = search
        self.search_threshold = search_threshold
        self.policy = policy
        self.credentials = credentials
        self.audit = audit
        self.approver: Callable[..., Any] | None = None
        self.settings: Any = None  # the merged configuration, when built by Registry.default
        self.root: Path | None = None  # the project root, when built by Registry.default
        self._lock = threading.RLock()
        self._notify_lock = threading.Lock()
        self._changes: deque[RegistryChanged] = deque()
        self._draining: int | None = None  # the thread delivering changes, if any
        self._states: dict[str, SourceState] = {}
        self._providers: dict[str, dict[str, SourceState]] = {}
        self._snapshot = Snapshot({}, 0)
        self._subscribers: list[Subscriber] = []
        self._index: SearchIndex | None = None
        self._bg: BackgroundLoop | None = None
        self._closed = False
        self._notebook = MutableSource("notebook", "notebook")
        self.add_source(self._notebook)

    @classmethod
    def default(
        cls, *, root: str | Path | None = None, config: Any = None, **kwargs: Any
    ) -> Registry:
        """A registry with the built-in tools, the tools folder of ``root`` (watched) and the
        MCP servers, policy and credentials of the merged ``nex.yaml`` levels."""
        return installed_wiring().default_registry(cls, root=root, config=config, **kwargs)

    # -- background loop ------------------------------------------------------------------

    @property
    def loop(self) -> BackgroundLoop:
        """The registry's background loop (started on first use)."""
        if self._bg is None:
            with self._lock:
                if self._bg is None:
                    self._bg = BackgroundLoop(name="nexus-registry")
        return self._bg

    def close(self) -> None:
        """Stop every source's background work and the background loop."""
        if self._closed:
            return
        self._closed = True
        if self._bg is not None and self._bg.running:
            for state in list(self._states.values()):
                stop = getattr(state.source, "stop", None)
                if stop is not None:
                    try:
                        self._bg.run(stop(), timeout=10)
                    except Exception:
                        log.exception("stopping source %s failed", state.name)
            self._bg.stop()
        if self._index is not None:
            self._index.close()
        close_audit = getattr(self.audit, "close", None)
        if close_audit is not None:
            close_audit()

    def __enter__(self) -> Registry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- adding and removing tools --------------------------------------------------------

    def add(
        self,
        obj: Any,
        *,
        name: str | None = None,
        origin: str = "",
        source_code: str | None = None,
        **options: Any,
    ) -> Tool:
        """Register a ``@tool`` function, a plain annotated function, or a :class:`Tool`
        in the session's ``notebook`` source (highest precedence). Returns the tool.

        ``options`` are ``@tool`` options that override the decorator's.
        """
        if isinstance(obj, Tool):
            tool = obj.with_spec(name=name) if name else obj
        else:
            tool = Tool.from_function(
                obj,
                name=name,
                origin=origin,
                source_code=source_code,
                source="notebook",
                source_kind="notebook",
                **options,
            )
        self._notebook.put(tool)
        self.refresh(self._notebook.name)
        return self.get(tool.name) if self.find(tool.name) is not None else tool

    def remove(self, name: str) -> None:
        """Remove a tool added with :meth:`add`. Raises :class:`ToolNotFound`."""
        if not self._notebook.discard(name):
            entry = self._snapshot.entries.get(name)
            if entry is not None:
                raise SourceError(
                    f"Tool {name!r} comes from {entry.tool.spec.source!r}, not from this session; "
                    "remove it there (delete the file, or remove the MCP server)."
                )
            raise ToolNotFound(name, self.suggest(name))
        self.refresh(self._notebook.name)

    # -- sources --------------------------------------------------------------------------

    def add_source(self, source: ToolSource, *, start: bool = True) -> Any:
        """Add a source: load its set now, then start its background work (if any)."""
        with self._lock:
            if source.name in self._states:
                raise SourceError(
                    f"A source named {source.name!r} is already registered; remove it first."
                )
            self._states[source.name] = SourceState(
                source=source,
                name=source.name,
                kind=source.kind,
                namespace=getattr(source, "namespace", None),
            )
        attach = getattr(source, "attach", None)
        if attach is not None:  # a source that publishes details (per-file status) itself
            attach(self)
        self.refresh(source.name)
        if start and hasattr(source, "start"):
            future = self.loop.submit(source.start(self))
            future.add_done_callback(lambda f: self._start_failed(source.name, f))
        return source

    def _start_failed(self, name: str, future: Any) -> None:
        if future.cancelled() or future.exception() is None:
            return
        exc = future.exception()
        log.error("source %s failed to start: %s", name, exc)
        self.set_status(name, error=f"failed to start: {type(exc).__name__}: {exc}")

    def remove_source(self, name: str) -> None:
        """Remove a source and its tools (stopping its background work)."""
        state = self._states.get(name)
        if state is None:
            raise SourceError(f"No source named {name!r}; sources: {', '.join(self._states)}.")
        stop = getattr(state.source, "stop", None)
        if stop is not None and self._bg is not None and self._bg.running:
            try:
                if self._bg.in_loop_thread():
                    self._bg.loop.create_task(stop())
                else:
                    self._bg.run(stop(), timeout=10)
            except Exception:
                log.exception("stopping source %s failed", name)
        self.publish(name, [])
        with self._lock:
            self._states.pop(name, None)

    def source(self, name: str) -> Any:
        state = self._states.get(name)
        if state is None:
            raise SourceError(f"No source named {name!r}; sources: {', '.join(self._states)}.")
        return state.source

    def sources(self) -> list[SourceState]:
        return list(self._states.values())

    def status(self) -> dict[str, Any]:
        """Every source's status (errors, per-file details, MCP states) as a dict."""
        return {
            "sources": [st.to_dict() for st in self._states.values()],
            "tools": len(self._snapshot.entries),
        }

    def refresh(self, name: str) -> RegistryChanged:
        """Ask source ``name`` for its complete set and swap it in. If ``load`` raises, the
        last good set stays and the error becomes the source's status."""
        state = self._states.get(name)
        if state is None:
            raise SourceError(f"No source named {name!r}.")
        # One refresh of a source at a time: two overlapping ones could otherwise publish
        # their loads out of order and the older set would win.
        with state.refresh_lock:
            try:
                tools = list(state.source.load())
            except Exception as exc:
                log.warning("source %s failed to load: %s", name, exc)
                return self.set_status(name, error=f"{type(exc).__name__}: {exc}")
            return self.publish(name, tools, error=None)

    def publish(
        self,
        name: str,
        tools: Iterable[Tool],
        *,
        error: str | None = None,
        details: Mapping[str, Any] | None = None,
        unavailable: Mapping[str, str] | None = None,
    ) -> RegistryChanged:
        """Swap in the complete current set of source ``name`` atomically.

        ``unavailable`` maps tool names (before namespacing) to a reason they cannot run now.
        """
        with self._lock:
            state = self._states.get(name)
            if state is None:
                raise SourceError(f"No source named {name!r}; add it with add_source() first.")
            prefix = f"{state.namespace}__" if state.namespace else ""
            new_tools: dict[str, Tool] = {}
            for tool in tools:
                final = prefix + tool.spec.name
                if (
                    tool.spec.name != final
                    or tool.spec.source != name
                    or tool.spec.source_kind != state.kind
                ):
                    tool = tool.with_spec(name=final, source=name, source_kind=state.kind)
                new_tools[final] = tool
            new_unavailable = {prefix + k: v for k, v in (unavailable or {}).items()}
            status_changed = (
                state.error != error
                or (details is not None and details != state.details)
                or new_unavailable != state.unavailable
            )
            affected = set(state.tools) | set(new_tools)
            state.tools = new_tools
            state.unavailable = new_unavailable
            state.error = error
            if details is not None:
                state.details = dict(details)
            state.updated_at = time.time()
            change = self._rebuild(affected, sources=(name,) if status_changed else ())
            self._queue(change)
        self._drain()
        return change

    def set_status(
        self, name: str, *, error: str | None = None, details: Mapping[str, Any] | None = None
    ) -> RegistryChanged:
        """Record a source's status without changing its tools (last good set kept)."""
        with self._lock:
            state = self._states.get(name)
            if state is None:
                raise SourceError(f"No source named {name!r}.")
            state.error = error
            if details is not None:
                state.details = dict(details)
            state.updated_at = time.time()
            change = RegistryChanged(sources=(name,))
            self._queue(change)
        self._drain()
        return change

    def _allowed_overrides(self) -> list[str]:
        """Names other sources may take from built-ins (``allow_overrides`` in nex.yaml)."""
        return list(getattr(getattr(self, "settings", None), "allow_overrides", None) or ())

    def _rebuild(self, affected: set[str], sources: tuple[str, ...]) -> RegistryChanged:
        old = self._snapshot.entries
        entries = dict(old)
        added, removed, updated, versions = [], [], [], {}
        for tool_name in affected:
            providers = {n: st for n, st in self._states.items() if tool_name in st.tools}
            entry = pick_entry(tool_name, providers, self._allowed_overrides())
            before = old.get(tool_name)
            if entry is None:
                if before is not None:
                    del entries[tool_name]
                    removed.append(tool_name)
                continue
            entries[tool_name] = entry
            if before is None:
                added.append(tool_name)
                versions[tool_name] = entry.tool.spec.version
            elif (
                (
                    before.tool is not entry.tool
                    and (
                        before.tool.spec.version != entry.tool.spec.version
                        or before.tool.spec.source != entry.tool.spec.source
                    )
                )
                or before.status != entry.status
                or [t.spec.version for t in before.shadowed]
                != [t.spec.version for t in entry.shadowed]
            ):
                updated.append(tool_name)
                versions[tool_name] = entry.tool.spec.version
        self._snapshot = Snapshot(entries, self._snapshot.generation + 1)
        if self._index is not None and (added or removed or updated):
            self._index.update(
                upserts=[entries[n].tool.spec for n in (*added, *updated)], removals=removed
            )
        return RegistryChanged(
            tuple(sorted(added)), tuple(sorted(removed)), tuple(sorted(updated)), versions, sources
        )

    # -- events ---------------------------------------------------------------------------

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback(RegistryChanged)`` after every change, in the order the changes
        were made; returns an unsubscribe function. Callbacks run on a thread that changed
        the registry; keep them short. A callback may change the registry itself: that
        change is delivered after the current one, never re-entrantly."""
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def _queue(self, change: RegistryChanged) -> None:
        """Queue ``change`` for subscribers (called under ``_lock``, so the queue holds the
        changes in the order the snapshots were swapped)."""
        if change:
            self._changes.append(change)

    def _drain(self) -> None:
        """Deliver queued changes in order. A thread already delivering (a subscriber that
        changed the registry) returns at once: its own loop delivers the new change next."""
        me = threading.get_ident()
        if self._draining == me:
            return
        with self._notify_lock:
            self._draining = me
            try:
                while self._changes:
                    change = self._changes.popleft()
                    for callback in list(self._subscribers):
                        try:
                            callback(change)
                        except Exception:
                            log.exception("registry subscriber %r failed", callback)
            finally:
                self._draining = None

    # -- folders --------------------------------------------------------------------------

    def watch(self, path: str | Path, **options: Any) -> Any:
        """Load every ``*.py`` tool file in ``path`` and hot-reload it on change.

        Returns the :class:`~nexus_jupyter.sources.directory.DirectorySource` (its
        ``status`` shows per-file errors). Watching the same folder twice returns the
        existing source.
        """
        source = installed_wiring().folder_source(path, **options)
        existing = self._states.get(source.name)
        if existing is not None:
            return existing.source
        return self.add_source(source)
