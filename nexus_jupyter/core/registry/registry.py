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

Writes cost what changed: a source publishes a delta (:meth:`Registry.update`) or a complete
set whose unchanged tools are recognised (:meth:`Registry.publish`), and only the affected names
are recomputed (:mod:`.changes`). Changes reach subscribers through their own queues
(:mod:`.events`), never on the thread that made them.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..errors import SourceError
from ..tools.tool import Tool
from .calls import CallPipeline
from .loop import BackgroundLoop
from .publisher import SourcePublisher
from .source import MutableSource, ToolSource, recovered_note
from .state import RegistryChanged, SourceState
from .wiring import installed_wiring
from .writer import RegistryWriter

if TYPE_CHECKING:
    from ..policy.protocols import Approver, AuditSink, CallPolicy, Credentials
    from ..search.options import SearchSetting
    from ..telemetry.stats import ToolStats
    from ..tools.context import CancellationToken, ProgressCallback, RequestInfo
    from ..tools.result import ToolResult
    from ..tooltests.monitor import ToolTests
    from ..tooltests.outcomes import TestStatus
    from .running import HomeThread

__all__ = ["Registry"]

log = logging.getLogger(__name__)


class Registry(RegistryWriter):
    """Every tool the session can see, from every source, behind one API.

    ``Registry()`` is empty; :meth:`Registry.default` adds the built-in tools, the watched
    tools folder and the MCP servers of ``nex.yaml``. Reads are lock-free (immutable
    snapshots); writes are serialized and swapped in atomically.

    ``search`` is ``"keyword"``, ``"hybrid"`` or ``"auto"`` (hybrid when the ``semantic``
    extra is installed), or search options (a ``SearchOptions`` or a mapping like the
    ``search:`` section of ``nex.yaml``: mode, threshold, signals, services, abbreviations).
    ``policy``, ``credentials`` and ``audit`` are consulted on every call (any objects with
    the methods of :mod:`~nexus_jupyter.core.policy.protocols`), and so is ``approver`` when the
    policy asks and someone can answer where the call was made.

    ``quiet_load_failures=True`` is for a face that says each broken source itself (the
    ``list``, ``check`` and ``toolsets`` commands, ``serve``'s notices): this registry then
    logs a source's load failure at DEBUG, so the person reads it once, in that face's
    words. It applies to this registry only, from its first load on. Otherwise (a kernel,
    the Jupyter server) the registry's warning is the report.
    """

    def __init__(
        self,
        *,
        search: SearchSetting = "auto",
        policy: CallPolicy | None = None,
        credentials: Credentials | None = None,
        audit: AuditSink | None = None,
        search_threshold: float | None = None,
        quiet_load_failures: bool = False,
    ) -> None:
        super().__init__(search=search, search_threshold=search_threshold, credentials=credentials)
        self.policy = policy
        self.audit = audit
        self.quiet_load_failures = quiet_load_failures
        self.approver: Approver | None = None
        self._calls = CallPipeline(self)
        self._settings: Any = None
        self.root: Path | None = None  # the project root, when built by Registry.default
        #: the toolsets installed packages advertise (``Registry.default`` fills it in): a
        #: setting that switches one of them off names a real toolset, though none loads
        self.advertised_toolsets: frozenset[str] = frozenset()
        # (entry, request, approved) -> installed?; set when nex.yaml says auto_install
        self.auto_installer: Callable[[Any, Any, bool], bool] | None = None
        self._bg: BackgroundLoop | None = None
        self._tests: ToolTests | None = None
        self._closed = False
        self._notebook = MutableSource("notebook", "notebook")
        self.add_source(self._notebook)

    @property
    def settings(self) -> Any:
        """The merged configuration (``Registry.default`` sets it); setting it applies its
        ``allow_overrides``."""
        return self._settings

    @settings.setter
    def settings(self, value: Any) -> None:
        self._settings = value
        self.allow_overrides = tuple(getattr(value, "allow_overrides", None) or ())

    @classmethod
    def default(
        cls, *, root: str | Path | None = None, config: Any = None, **kwargs: Any
    ) -> Registry:
        """A registry with the built-in tools, the tools folder of ``root`` (watched) and the
        MCP servers, policy and credentials of the merged ``nex.yaml`` levels."""
        return installed_wiring().default_registry(cls, root=root, config=config, **kwargs)

    # -- calls ----------------------------------------------------------------------------

    def call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        request: RequestInfo | None = None,
        principal: str | None = None,
        timeout: float | None = None,
        approved: bool = False,
        progress: ProgressCallback | None = None,
        cancellation: CancellationToken | None = None,
        source: str | None = None,
    ) -> Coroutine[Any, Any, ToolResult]:
        """Call tool ``name`` with ``arguments`` (a dict); ``await`` it for its :class:`ToolResult`.

        Raises :class:`ToolNotFound`, :class:`ToolValidationError`, :class:`PermissionDenied`,
        :class:`ApprovalRequired`, :class:`MissingCredential` or :class:`ToolUnavailable`
        before the tool runs; a tool that fails, times out or is cancelled gives a result
        with ``error`` set. ``request`` says who calls (its :class:`Caller`); ``approved=True``
        means a person approved this call in a UI. ``source``: call the tool of that source
        under this name, though another wins the name or two conflict over it (the sidebar
        tries each notebook's ``add`` of two).
        """
        return self._calls.call(
            name, arguments, request, principal, timeout, approved, progress, cancellation, source
        )

    def call_sync(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        request: RequestInfo | None = None,
        principal: str | None = None,
        timeout: float | None = None,
        approved: bool = False,
        progress: ProgressCallback | None = None,
        cancellation: CancellationToken | None = None,
        source: str | None = None,
    ) -> ToolResult:
        """:meth:`call` for code without ``await``: scripts, the CLI, a notebook cell or a
        widget callback (even while an event loop runs in this thread). Same options.

        A sync tool with no timeout runs right here; anything else runs on the registry's
        background loop while this thread waits, so no running loop is ever re-entered.
        """
        return self._calls.call_sync(
            name, arguments, request, principal, timeout, approved, progress, cancellation, source
        )

    def set_home_thread(self, source: str, home: HomeThread | None) -> None:
        """Run the sync tools of ``source`` on ``home`` instead of worker threads (a kernel
        pins its notebook tools to its main thread); tools marked ``@tool(threadsafe=True)``
        still use workers. ``None`` unpins."""
        homes = self._calls.runner.homes
        if home is None:
            homes.pop(source, None)
        else:
            homes[source] = home

    def observe_calls(
        self, observer: Callable[[Mapping[str, Any], ToolResult], Any]
    ) -> Callable[[], None]:
        """Call ``observer(arguments, result)`` after every call this registry finishes, however
        it was made (:meth:`call`, :meth:`call_sync`, a face), failed ones included; refusals
        (nothing ran) and test runs are not told. It runs on the thread that finished the call
        and must be quick; an exception in it is logged. Returns a function that stops it.

        >>> seen = []
        >>> stop = reg.observe_calls(lambda arguments, result: seen.append(result.tool))
        >>> reg.call_sync("add", {"a": 1, "b": 2}).structured, seen
        (3, ['add'])
        """
        calls = self._calls
        with self._lock:
            calls.observers = (*calls.observers, observer)
        # ``stop`` holds the registry weakly: whoever keeps it (a history that follows this
        # registry) must not keep a closed registry, and its search index, alive
        following = weakref.ref(self)

        def stop() -> None:
            registry = following()
            if registry is None:
                return  # the registry is gone, and its observers with it
            with registry._lock:
                calls = registry._calls
                calls.observers = tuple(o for o in calls.observers if o is not observer)

        return stop

    def stats(self) -> dict[str, ToolStats]:
        """Per-tool call figures since the registry started (calls, errors, refusals,
        p50/p95/max latency over the last calls), by tool name; see
        :mod:`~nexus_jupyter.core.telemetry.stats`."""
        return self._calls.stats.snapshot()

    def stats_of(self, name: str, source: str | None = None) -> ToolStats | None:
        """The call figures a view of tool ``name`` shows (``None`` before its first call):
        those of ``source``'s definition when another source defines the name too (a
        conflict, or one shadowing the other), else the name's (:meth:`stats`)."""
        entry = self._snapshot.entries.get(name)
        if source is not None and entry is not None and entry.shadowed:
            return self._calls.stats.by_source(name).get(source)
        return self._calls.stats.snapshot().get(name)

    def stats_by_source(self, name: str) -> dict[str, ToolStats]:
        """:meth:`stats` of tool ``name``, one row per source whose definition of it was
        called (two notebooks' ``add`` apart; ``""``: calls refused before a definition was
        chosen, as a call by name alone over a conflict is)."""
        return self._calls.stats.by_source(name)

    def call_counts(self) -> dict[str, tuple[int, int]]:
        """``(calls, refusals)`` per called tool: :meth:`stats` without the percentiles,
        cheap enough to poll for which tools were called since the last look."""
        return self._calls.stats.counts()

    # -- tool tests -----------------------------------------------------------------------

    @property
    def tests(self) -> ToolTests:
        """The tools' saved test cases: save, run, statuses, live runs after every change
        (:class:`~nexus_jupyter.core.tooltests.monitor.ToolTests`)."""
        if self._tests is None:
            with self._lock:
                if self._tests is None:
                    from ..tooltests.monitor import ToolTests

                    self._tests = ToolTests(self)
        return self._tests

    def test_status(self, name: str) -> TestStatus:
        """Where tool ``name``'s test cases stand: ``none``, ``pending``, ``running``,
        ``passed``, ``failed`` (with the first difference), ``error`` or ``skipped`` (with
        the reason). Raises :class:`ToolNotFound`."""
        return self.tests.status(name)

    # -- background loop ------------------------------------------------------------------

    @property
    def loop(self) -> BackgroundLoop:
        """The registry's background loop (started on first use)."""
        if self._bg is None:
            with self._lock:
                if self._bg is None:
                    self._bg = BackgroundLoop(name="nexus-registry")
        return self._bg

    def close(self, *, search_wait: float | None = None) -> None:
        """Stop every source's background work and the background loop. ``search_wait``:
        how long to wait for the search warm-up's current step (default 3 s; a process
        that then ends with ``os._exit``, as ``nexus-tools serve`` does, passes 0)."""
        if self._closed:
            return
        self._closed = True
        if self._tests is not None:
            self._tests.close()
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
            self._index.close() if search_wait is None else self._index.close(search_wait)
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

        ``options`` are ``@tool`` options that override the decorator's. Registering one
        tool costs the same in a registry of ten or ten thousand; to register many at once,
        :meth:`add_many` publishes them in one change.
        """
        tool = self._as_tool(obj, name=name, origin=origin, source_code=source_code, **options)
        with self._lock:  # the session's source and the snapshot change together
            self._notebook.put(tool)
            self.update(self._notebook.name, upserts=[tool])
        return self.find(tool.spec.name) or tool

    def add_many(self, objects: Iterable[Any], **options: Any) -> list[Tool]:
        """Register many tools (functions or :class:`Tool` objects) in one change: one
        snapshot, one index update, one event. ``options`` apply to every function."""
        tools = [self._as_tool(obj, **options) for obj in objects]
        with self._lock:
            for tool in tools:
                self._notebook.put(tool)
            self.update(self._notebook.name, upserts=tools)
        return [self.find(t.spec.name) or t for t in tools]

    def _as_tool(
        self,
        obj: Any,
        *,
        name: str | None = None,
        origin: str = "",
        source_code: str | None = None,
        **options: Any,
    ) -> Tool:
        if isinstance(obj, Tool):
            return obj.with_spec(name=name) if name else obj
        return Tool.from_function(
            obj,
            name=name,
            origin=origin,
            source_code=source_code,
            source="notebook",
            source_kind="notebook",
            **options,
        )

    def remove(self, name: str) -> None:
        """Remove a tool added with :meth:`add`. Raises :class:`ToolNotFound`."""
        with self._lock:
            if self._notebook.discard(name):
                self.update(self._notebook.name, removals=[name])
                return
        entry = self._snapshot.entries.get(name)
        if entry is not None:
            raise SourceError(
                f"Tool {name!r} comes from {entry.tool.spec.source!r}, not from this session; "
                "remove it there (delete the file, or remove the MCP server)."
            )
        raise self.not_found(name)

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
        publisher = SourcePublisher(self, source.name)
        attach = getattr(source, "attach", None)
        if attach is not None:  # a source that publishes details (per-file status) itself
            attach(publisher)
        self.refresh(source.name)
        if start and hasattr(source, "start"):
            future = self.loop.submit(source.start(publisher))
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

    def refresh(self, name: str) -> RegistryChanged:
        """Ask source ``name`` for its complete set and swap it in. If ``load`` raises, the
        last good set stays and the error becomes the source's status.

        A source that publishes by itself (it has ``refresh()``, like a watched folder) is
        asked to republish instead, under its own lock, so a full set it loaded can never
        land after a newer change it published meanwhile."""
        state = self._states.get(name)
        if state is None:
            raise SourceError(f"No source named {name!r}.")
        own = getattr(state.source, "refresh", None)
        # One refresh of a source at a time: two overlapping ones could otherwise publish
        # their loads out of order and the older set would win.
        with state.refresh_lock:
            if callable(own):
                return cast(RegistryChanged, own())
            try:
                tools = list(state.source.load())
            except Exception as exc:
                level = logging.DEBUG if self.quiet_load_failures else logging.WARNING
                log.log(level, "source %s failed to load: %s", name, exc)
                state.failure_logged_at = level
                return self.set_status(name, error=f"{type(exc).__name__}: {exc}")
            if state.failure_logged_at is not None:  # the pair of a failure said above only
                back = recovered_note(state.source) or "works again"
                log.log(min(state.failure_logged_at, logging.INFO), "source %s: %s", name, back)
                state.failure_logged_at = None
            return self.publish(name, tools, error=None)

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
