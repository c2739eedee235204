"""A registry's tool tests: their cases, their status and the runs after every change.

``registry.tests`` is a :class:`ToolTests`::

    reg.tests.save("add", TestCase("add", {"a": 1, "b": 2}, Expectation("equals", 3)))
    reg.tests.run(["add"])              # a TestReport; the statuses follow it
    reg.test_status("add").state        # "passed"
    reg.tests.watch()                   # live: re-run a tool's cases whenever it changes

**Live regression.** Once :meth:`ToolTests.watch` is on (the kernel, the Jupyter server and
``nexus-tools serve`` turn it on), every tool that is added or changes (a tool file saved and
hot-reloaded, a cell re-run) has its cases run again, as does a tool whose cases were edited
or saved. Runs happen on a loop of their own (``nexus-tests``), never on the watcher's thread
or the registry's loop, so publishing a change is never delayed by its tests; a tool changed
again while its cases run is run once more afterwards. Each status change (``running``, then
the result) reaches every subscriber of the registry as ``RegistryChanged(tests=(name,))``.

Tools whose source tests them where they run (a live kernel's tools, on the Jupyter server)
show that status (:class:`~.stores.MirroredStatus`) and are not run here.

**Every case.** A run of every tool (``run()`` without names) also reads the case files of
the stores that list them (:class:`~.stores.CaseFiles`) whole: a case that no tool's own
cases include (its tool does not exist, it names none) is run too, so it is reported as an
error rather than left out, and a file that cannot be read is reported once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import TestCaseError, ToolNotFound
from ..registry.loop import BackgroundLoop
from ..registry.state import RegistryChanged
from .cases import TestCase
from .outcomes import CaseOutcome, TestReport, TestStatus
from .runner import TEST_CALLER, request_for_tests, run_cases, run_cases_sync
from .stores import CaseFiles, CaseStore, MirroredStatus, WatchedCases

if TYPE_CHECKING:
    from ..registry.registry import Registry
    from ..tools.context import Caller
    from ..tools.spec import ToolSpec

__all__ = ["ToolTests"]

log = logging.getLogger(__name__)
#: Set (true) on a log record whose news every face already shows as a tool's test status.
SHOWN_AS_STATUS = "nexus_shown_as_status"
#: Tools whose cases run at the same time in live mode.
LIVE_CONCURRENCY = 4


def _fingerprint(version: str, cases: Sequence[TestCase]) -> str:
    listed = [{**c.to_dict(), "problem": c.problem} for c in cases]
    return version + json.dumps(listed, sort_keys=True, default=repr)


def _once(files: dict[str, str], by_tool: dict[str, str]) -> dict[str, str]:
    """Unreadable cases, each reported once: by file when the file is known (``files``:
    path -> why, the file's name dropped from the front of why), else under the names of
    the tools that share the same problem."""
    out = {
        path: problem.removeprefix(f"{os.path.basename(path)}: ").removeprefix(f"{path}: ")
        for path, problem in files.items()
    }
    known = set(files.values())
    shared: dict[str, list[str]] = {}
    for tool, problem in by_tool.items():
        if problem not in known:
            shared.setdefault(problem, []).append(tool)
    out.update({", ".join(tools): problem for problem, tools in shared.items()})
    return out


class ToolTests:
    """The test cases, statuses and live runs of one registry (``registry.tests``)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._stores: list[CaseStore] = []
        self._statuses: dict[str, TestStatus] = {}
        self._tested: dict[str, str] = {}  # name -> fingerprint of what its status is about
        self._last_run: dict[str, TestStatus] = {}  # name -> its last finished run
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        self._busy: set[str] = set()  # names running (or about to)
        self._again: set[str] = set()  # names changed while running
        self._loop: BackgroundLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._stops: list[Callable[[], None]] = []
        self._followed: set[str] = set()  # folders whose case files are watched
        self._mirror_seen: dict[str, Any] = {}  # name -> (state, summary) a source reported
        self.live = False

    # -- where cases live -----------------------------------------------------------------

    def add_store(self, store: CaseStore) -> CaseStore:
        """Consult ``store`` for tools no earlier store (nor the tool's source) claims."""
        with self._lock:
            if store not in self._stores:
                self._stores.append(store)
                if self.live:
                    self._follow_edits(store)
        return store

    def _stores_for(self, spec: ToolSpec) -> list[Any]:
        source = self._source_of(spec)
        own = [source] if source is not None and hasattr(source, "cases_for") else []
        return [*own, *self._stores]

    def cases(self, name: str) -> list[TestCase]:
        """The cases of tool ``name``, in order (``[]`` when it has none). Raises
        :class:`ToolNotFound`, or :class:`TestCaseError` when its case file is unreadable."""
        spec = self.registry.get(name).spec
        for store in self._stores_for(spec):
            found = store.cases_for(spec)
            if found is not None:
                return [c for c in found if c.tool == name]
        return []

    def save(self, name: str, case: TestCase) -> str:
        """Add ``case`` to tool ``name``'s cases where they live; returns where (a path, a
        notebook). In live mode the tool's cases then run."""
        spec = self.registry.get(name).spec
        if case.tool != name:
            raise TestCaseError(
                f"The case calls {case.tool!r}, not {name!r}; save it for the tool it calls."
            )
        for store in self._stores_for(spec):
            where = store.save_case(spec, case)
            if where is not None:
                if self.live:
                    self.schedule([name])
                return where
        raise TestCaseError(
            f"No place to keep test cases of {name!r} (from {spec.source or 'the session'}): "
            "tool files keep them beside the file, notebooks in their metadata, other tools in "
            "the tools folder of Registry.default(); this registry has none of those."
        )

    # -- status ---------------------------------------------------------------------------

    def status(self, name: str) -> TestStatus:
        """Where tool ``name``'s tests stand (see :class:`TestStatus`); state ``none`` when
        it has no cases, ``pending`` when they have not run yet."""
        entry = self.registry.snapshot.entries.get(name)
        if entry is None:
            raise self.registry.not_found(name)
        mirrored = self._mirrored(entry.spec)
        if mirrored is not None:
            return mirrored
        with self._lock:
            known = self._statuses.get(name)
        if known is not None and (known.state != "pending" or known.problem):
            return known
        try:
            count = len(self.cases(name))
        except TestCaseError as exc:
            return TestStatus(name, "error", problem=str(exc))
        except ToolNotFound:
            raise
        return TestStatus(name, "pending" if count else "none", cases=count)

    def _source_of(self, spec: ToolSpec) -> Any:
        try:
            return self.registry.source(spec.source)
        except Exception:
            return None

    def _mirrored(self, spec: ToolSpec) -> TestStatus | None:
        source = self._source_of(spec)
        if isinstance(source, MirroredStatus):
            return source.test_status(spec)
        return None

    def statuses(self) -> dict[str, TestStatus]:
        """The status of every tool that has cases (or unreadable ones), by name."""
        out = {}
        for name in self.registry.names():
            try:
                status = self.status(name)
            except ToolNotFound:
                continue
            if status.state != "none":
                out[name] = status
        return out

    def _set(self, name: str, status: TestStatus | None) -> None:
        with self._lock:
            before = self._statuses.get(name)
            if status is None:
                self._statuses.pop(name, None)
                self._tested.pop(name, None)
                self._last_run.pop(name, None)
            else:
                self._statuses[name] = status
        if before != status:
            self.registry.announce(RegistryChanged(tests=(name,)))

    # -- running on demand ----------------------------------------------------------------

    def _collect(
        self, names: Iterable[str] | None
    ) -> tuple[dict[str, list[TestCase]], dict[str, str]]:
        """Cases by tool name, and the tools whose cases cannot be read (tool -> why)."""
        wanted = list(names) if names is not None else self.registry.names()
        cases: dict[str, list[TestCase]] = {}
        problems: dict[str, str] = {}
        for name in wanted:
            try:
                found = self.cases(name)
            except TestCaseError as exc:
                problems[name] = str(exc)
                self._set(name, TestStatus(name, "error", problem=str(exc)))
                continue
            if found:
                cases[name] = found
        return cases, problems

    def run(
        self,
        names: Iterable[str] | None = None,
        *,
        approved: bool = False,
        caller: Caller | None = None,
        principal: str | None = None,
        strays: bool = True,
    ) -> TestReport:
        """Run the cases of ``names`` (every tool with cases when ``None``) here, now, and
        update their statuses. ``approved=True`` runs cases that need approval; ``caller``
        and ``principal`` say who asked (the face, the user), which policy sees. A run of
        every tool also runs the cases no tool's list holds (a case naming a missing tool
        is an error) unless ``strays=False``: a caller that reads only the statuses. Raises
        :class:`ToolNotFound` for a name that is not a tool."""
        started = time.perf_counter()
        named = list(names) if names is not None else None
        for name in named or ():
            self.registry.get(name)  # ToolNotFound with "did you mean"
        by_tool, problems = self._collect(named)
        listed = [case for cases in by_tool.values() for case in cases]  # run here or there
        outcomes: list[CaseOutcome] = []
        for name in list(by_tool):
            spec = self.registry.get(name).spec
            source = self._source_of(spec)
            if isinstance(source, MirroredStatus) and hasattr(source, "run_tests"):
                outcomes += source.run_tests(spec).outcomes  # run where the tool lives
                del by_tool[name]
        request = (
            request_for_tests(caller or TEST_CALLER, principal)
            if caller is not None or principal is not None
            else None
        )
        for name, cases in by_tool.items():
            found = run_cases_sync(self.registry, cases, approved=approved, request=request)
            self._finished(name, cases, found)
            outcomes += found
        unreadable: dict[str, str] = {}
        if named is None and strays:  # also the cases no tool's list holds, file by file
            stray, unreadable = self._strays(listed)
            outcomes += run_cases_sync(self.registry, stray, approved=approved, request=request)
        return TestReport(
            tuple(outcomes), _once(unreadable, problems), time.perf_counter() - started
        )

    def _case_files(self) -> dict[str, tuple[CaseFiles, str]]:
        """Every case file the stores and sources keep: its real path -> (store, path)."""
        holders = [*self._stores, *(state.source for state in self.registry.sources())]
        files: dict[str, tuple[CaseFiles, str]] = {}
        for holder in holders:
            if isinstance(holder, CaseFiles):
                for path in holder.case_files():
                    files.setdefault(os.path.realpath(path), (holder, path))
        return files

    def _strays(self, listed: Sequence[TestCase]) -> tuple[list[TestCase], dict[str, str]]:
        """The cases of the case files that no tool's own cases include (one calling a tool
        that does not exist, a malformed case naming none, a case of a tool whose own cases
        live in another file), and the files that cannot be read (path -> why)."""
        seen = {(os.path.realpath(c.file), c.line) for c in listed if c.file}
        strays: list[TestCase] = []
        unreadable: dict[str, str] = {}
        for real, (store, path) in self._case_files().items():
            try:
                cases = store.read_cases(path)
            except TestCaseError as exc:
                unreadable[path] = str(exc)
                continue
            strays += [c for c in cases if (real, c.line) not in seen]
        return strays, unreadable

    def _finished(self, name: str, cases: Sequence[TestCase], outcomes: list[CaseOutcome]) -> None:
        entry = self.registry.snapshot.entries.get(name)
        version = outcomes[0].version if outcomes else (entry.spec.version if entry else "")
        with self._lock:
            before = self._last_run.get(name)
        status = TestStatus.finished(name, outcomes, version, before)
        if status.broke is not None:
            # also the tool's test status (list, info, the sidebar): a face that shows that
            # may drop this line (SHOWN_AS_STATUS), as a kernel does (no stray stderr in a cell)
            log.warning(
                "tool %s: its test broke after a change: %s",
                name,
                status.broke.describe(),
                extra={SHOWN_AS_STATUS: True},
            )
        with self._lock:
            self._last_run[name] = status
            self._tested[name] = _fingerprint(version, cases)
        self._set(name, status)

    # -- live regression ------------------------------------------------------------------

    def watch(self) -> ToolTests:
        """Go live (see the module docstring): run every tool's cases once in the
        background now, then after every change. Returns ``self``."""
        with self._lock:
            if self.live:
                return self
            self.live = True
            self._stops.append(self.registry.subscribe(self._on_change))
            for store in self._stores:
                self._follow_edits(store)
            self._follow_sources()
        self.schedule(self.registry.names())
        return self

    def _follow_edits(self, store: Any) -> None:
        """Watch ``store``'s cases for hand edits, once per folder (a folder source and the
        project store may share one)."""
        if not isinstance(store, WatchedCases):
            return
        folder = getattr(store, "root", None) or getattr(store, "folder", None)
        key = str(folder) if folder is not None else f"store:{id(store)}"
        if key in self._followed:
            return
        self._followed.add(key)
        self._stops.append(store.watch_cases(self.cases_changed))

    def _follow_sources(self) -> None:
        for state in self.registry.sources():
            self._follow_edits(state.source)

    def _on_change(self, change: RegistryChanged) -> None:
        if change.sources:
            with self._lock:
                self._follow_sources()  # a folder watched since
            self._mirrored_changes(change.sources)
        for name in change.removed:
            if name not in self.registry.snapshot.entries:
                self._set(name, None)
        changed = [*change.added, *change.updated]
        if changed:
            self.schedule(changed)

    def _mirrored_changes(self, sources: Iterable[str]) -> None:
        """Announce the tools whose reported status changed, of sources that test their
        tools where they run (a kernel relists them with a new status)."""
        changed = []
        for state in self.registry.sources():
            if state.name not in sources or not isinstance(state.source, MirroredStatus):
                continue
            for name, tool in state.tools.items():
                status = state.source.test_status(tool.spec)
                seen = (status.state, status.summary()) if status is not None else None
                with self._lock:
                    if self._mirror_seen.get(name) != seen:
                        self._mirror_seen[name] = seen
                        changed.append(name)
        if changed:
            self.registry.announce(RegistryChanged(tests=tuple(changed)))

    def cases_changed(self, names: Iterable[str] | None = None) -> None:
        """Stores call this when cases were edited (``None``: any tool's may have been); in
        live mode the tools whose cases changed run again."""
        if self.live:
            self.schedule(self.registry.names() if names is None else names)

    def schedule(self, names: Iterable[str]) -> None:
        """Run the cases of ``names`` in the background when what they test (the tool's
        version, its cases) changed since their last run."""
        for name in names:
            try:
                due = self._due(name)
            except Exception:  # a store failing must not stop the others
                log.exception("checking the test cases of %s failed", name)
                continue
            if not due:
                continue
            with self._lock:
                if name in self._busy:
                    self._again.add(name)
                    continue
                self._busy.add(name)
            self._tests_loop().submit(self._run_live(name))

    def _due(self, name: str) -> bool:
        entry = self.registry.snapshot.entries.get(name)
        if entry is None or self._mirrored(entry.spec) is not None:
            return False
        try:
            cases = self.cases(name)
        except TestCaseError as exc:
            self._set(name, TestStatus(name, "error", problem=str(exc)))
            return False
        except ToolNotFound:
            return False
        if not cases:
            if name in self._statuses:
                self._set(name, None)
            return False
        return self._tested.get(name) != _fingerprint(entry.spec.version, cases)

    def _tests_loop(self) -> BackgroundLoop:
        with self._lock:
            if self._loop is None:
                self._loop = BackgroundLoop(name="nexus-tests")
            return self._loop

    async def _run_live(self, name: str) -> None:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(LIVE_CONCURRENCY)
        while True:
            try:
                async with self._semaphore:
                    await self._run_once(name)
            except Exception as exc:  # shown as the tool's test status, never "running"
                log.exception("running the test cases of %s failed", name)
                problem = f"running its cases failed: {type(exc).__name__}: {exc}"
                self._set(name, TestStatus(name, "error", problem=problem))
            # A change that came while this run ran asks for another one; checked and
            # cleared under the lock that schedule() takes, so none is lost in between.
            with self._idle:
                if name not in self._again:
                    self._busy.discard(name)
                    self._idle.notify_all()
                    return
                self._again.discard(name)

    async def _run_once(self, name: str) -> None:
        entry = self.registry.snapshot.entries.get(name)
        if entry is None:
            return
        try:
            cases = self.cases(name)
        except (TestCaseError, ToolNotFound):
            return
        if not cases:
            return
        with self._lock:
            before = self._statuses.get(name) or TestStatus(name, "pending", cases=len(cases))
        self._set(name, before.with_state("running", len(cases)))
        outcomes = await run_cases(self.registry, cases)
        self._finished(name, cases, outcomes)

    def wait_idle(self, timeout: float = 30.0, name: str | None = None) -> bool:
        """Block until no live run is pending (``False`` after ``timeout`` s), or, with
        ``name``, no live run of that tool: scripts and tests use it, and so does a face whose
        answer must agree with a run it did not start (REST ``tests/run`` after a save)."""
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._busy if name is None else name in self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._idle.wait(left)
        return True

    def wait_settled(self, name: str, timeout: float) -> TestStatus:
        """Tool ``name``'s test status once no run of its cases is pending or running, here
        (:meth:`wait_idle`) or where it is tested (a kernel's tool, whose status its kernel
        reports), waiting on the registry's events at most ``timeout`` s; the status as it
        stands then. Raises :class:`ToolNotFound`."""
        deadline = time.monotonic() + timeout
        self.wait_idle(timeout, name)
        changed = threading.Event()
        unsubscribe = self.registry.subscribe(lambda _change: changed.set())
        try:
            while True:
                status = self.status(name)
                left = deadline - time.monotonic()
                if status.state not in ("pending", "running") or left <= 0:
                    return status
                changed.wait(left)
                changed.clear()
        finally:
            unsubscribe()

    def close(self) -> None:
        """Stop live runs and the watchers of the stores."""
        with self._lock:
            stops, self._stops = self._stops, []
            loop, self._loop = self._loop, None
            self._followed.clear()
            self.live = False
        for stop in stops:
            try:
                stop()
            except Exception:
                log.exception("stopping a test-case watcher failed")
        if loop is not None:
            loop.stop()
