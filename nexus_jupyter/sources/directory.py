"""A folder of tool files, loaded and hot-reloaded: ``Registry.watch("tools/dynamic")``.

Each ``*.py`` file may define one or more ``@tool`` functions. Files load as fresh modules
(:mod:`.loader`); a change reloads only the files that changed and hands the registry just
the tools those files define (one atomic delta), so a save costs the same in a folder of
ten files or two thousand.

Per file, what a user sees in :attr:`DirectorySource.status` (and in the registry's source
details, ``details["files"]``):

- ``ok``: its tools are live;
- ``error``: it failed to load (syntax error, exception, ``SystemExit``, missing import, a
  half-written save, an empty file): its last good tools stay live, and ``message`` and
  ``line`` say what is wrong. The next good save clears it.

Deleting a file removes its tools; a rename moves them. Hidden files, editor temp files
(``~``, ``.swp``, ``#name#``, ``.tmp`` ...) and ``__pycache__`` are ignored. A tool name
defined by two files is listed as unavailable with the reason
``conflict: defined in a.py and b.py``, never silently resolved.

Half-written saves never replace the last good version: the watcher (:mod:`.watcher`)
waits ``step_ms`` of quiet after the last change (an editor's truncate-then-write lands in
one batch); a file whose size or mtime changes while it is read is skipped until its next
event; a file still open for writing, or written moments ago and ending mid-line or not
parsing, waits until it settles (:mod:`.settle`); an empty file keeps its tools; and a
partial file that does not parse keeps them too.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.errors import SourceError
from ..core.registry.publisher import SourcePublisher
from ..core.registry.state import RegistryChanged
from ..core.tools.spec import SourceKind
from ..core.tools.tool import Tool
from .folder_files import FolderFiles
from .loader import content_hash, load_tool_text
from .settle import mid_save_reason, top_level_functions
from .versions import note_loaded

__all__ = ["DEFAULT_DEBOUNCE_MS", "DEFAULT_STEP_MS", "DirectorySource", "is_tool_file"]

log = logging.getLogger(__name__)

#: Quiet time after the last change before a batch is reloaded. watchfiles yields 1-2 steps
#: after the last event; 6 ms gives ~17 ms save-to-callable (benchmarks/hot_reload.py) while
#: an editor's truncate-then-write (microseconds apart) still lands in one batch.
DEFAULT_STEP_MS = 6
#: The longest a stream of changes is grouped before it is reloaded anyway.
DEFAULT_DEBOUNCE_MS = 400
MAX_FILE_BYTES = 2_000_000
#: A file whose module body runs longer than this is reported as an error (see loader).
LOAD_TIMEOUT_S = 10.0
#: Top-level functions of a file that failed to load: "No tool named X" can name the file.
_TOP_LEVEL_DEF = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)", re.MULTILINE)
_TEMP_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".tmp", ".bak", ".orig", ".part")


def is_tool_file(path: Path, root: Path, *, recursive: bool = False) -> bool:
    """Whether ``path`` (under ``root``) is a tool file: ``*.py``, not hidden, not an editor
    temp file, not in ``__pycache__`` (and directly in ``root`` unless ``recursive``)."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        return False
    parts = rel.parts
    if not parts or (not recursive and len(parts) != 1):
        return False
    if any(p.startswith((".", "#", "~")) or p == "__pycache__" for p in parts):
        return False
    name = parts[-1]
    return name.endswith(".py") and not name.endswith(_TEMP_SUFFIXES)


class DirectorySource:
    """Tool files in ``path``, hot-reloaded while the registry runs.

    ``recursive`` includes sub-folders. ``debounce_ms`` / ``step_ms`` tune the watcher.
    ``versions`` keeps the contents a file loaded with (:mod:`.versions`; ``history``, a
    :class:`~nexus_jupyter.core.config.model.HistorySettings`, bounds them); a file whose
    import runs longer than ``load_timeout`` seconds is reported as an error.
    ``isolation="process"`` loads and runs the files in worker processes (:mod:`.isolation`).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        recursive: bool = False,
        debounce_ms: int = DEFAULT_DEBOUNCE_MS,
        step_ms: int = DEFAULT_STEP_MS,
        versions: bool = True,
        load_timeout: float = LOAD_TIMEOUT_S,
        history: Any = None,
        isolation: str = "thread",
    ) -> None:
        self.path = Path(path).expanduser()
        self.root = self.path.resolve()
        self.recursive = recursive
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.load_timeout = load_timeout
        self.kind: SourceKind = "directory"
        self.namespace: str | None = None
        self.name = f"directory:{_display(self.root)}"
        self._book = FolderFiles(self.root)
        self._files = self._book.files  # path -> FileState (the book's own dict)
        self._lock = threading.RLock()
        self._publisher: SourcePublisher | None = None
        self._last_details: dict[str, Any] = {}
        self._watcher: Any = None
        self._started = threading.Event()  # set once start() has made the watcher
        self._store: Any = None
        self._unrecorded: list[tuple[Path, str]] = []  # versions to keep once published
        self._isolation: Any = None
        if isolation == "process":  # files load and run in worker processes (.isolation)
            from .isolation import ProcessIsolation

            self._isolation = ProcessIsolation(self.name)
        if versions:
            from .versions import VersionStore

            limits = (
                {}
                if history is None
                else {"keep": history.keep, "max_age_days": history.max_age_days}
            )
            self._store = VersionStore(self.root, **limits)

    def __repr__(self) -> str:
        return f"<DirectorySource {str(self.path)!r} files={len(self._files)} errors={len(self.errors)}>"

    # -- the source protocol -------------------------------------------------------------

    def load(self) -> Iterable[Tool]:
        """Scan the whole folder (loading changed files) and return its tools."""
        with self._lock:
            self._rescan_locked()
            tools, _ = self._book.current()
            self._book.take_touched()  # the registry takes this complete set instead
            self._record_versions()
            return tools

    def attach(self, publisher: SourcePublisher) -> None:
        """Know where to publish before :meth:`start` runs, so :meth:`reload_file` and
        :meth:`rescan` publish at once (the registry calls this when adding the source)."""
        self._publisher = publisher

    async def start(self, publisher: SourcePublisher) -> None:
        """Publish the full status and start watching on the registry's loop."""
        from .watcher import FolderWatcher

        self._publisher = publisher
        self.publish()
        self._watcher = FolderWatcher(self, step_ms=self.step_ms, debounce_ms=self.debounce_ms)
        self._watcher.start()
        self._started.set()

    async def stop(self) -> None:
        """Stop watching; the source no longer publishes (the registry is dropping it)."""
        with self._lock:
            watcher, self._watcher = self._watcher, None
            if self._publisher is not None:
                self._publisher.offer(())
            self._publisher = None
            self._started.clear()
        if watcher is not None:
            await watcher.stop()
        if self._isolation is not None:
            self._isolation.close()

    def wait_ready(self, timeout: float = 5.0) -> bool:
        """Block until the watcher is watching; ``False`` after ``timeout`` seconds (or when
        the source was never started or is stopped)."""
        deadline = time.monotonic() + timeout
        if not self._started.wait(timeout):  # start() runs on the registry loop, soon
            return False
        watcher = self._watcher
        return watcher is not None and watcher.ready.wait(max(0.0, deadline - time.monotonic()))

    # -- reloading ------------------------------------------------------------------------

    def reload_file(self, path: str | Path, *, registry: Any = None) -> dict[str, Any]:
        """Reload one file now (or drop it, if it is gone) and publish; returns its status.
        ``registry`` publishes to that registry when the source is not attached to one."""
        file = Path(path).expanduser().resolve()
        with self._lock:
            changed = self._reload_locked(file)
            if changed:
                self._publish_touched(self._publisher_for(registry))
                self._record_versions()
            state = self._files.get(file)
            rel = self._rel(file)
            return (
                state.to_dict(rel)
                if state
                else {"file": rel, "status": "missing", "message": None, "line": None, "tools": []}
            )

    def rescan(self, *, registry: Any = None) -> RegistryChanged:
        """Rescan the whole folder now and publish its complete set (what
        ``Registry.refresh`` asks of this source)."""
        with self._lock:
            self._rescan_locked()
            change = self.publish(registry)
            self._record_versions()
            return change

    def refresh(self) -> RegistryChanged:
        """Republish under this source's lock (see ``Registry.refresh``)."""
        return self.rescan()

    def apply_changes(self, paths: Iterable[str | Path], defer: set[Path] | None = None) -> bool:
        """What the watcher calls with a batch of changed paths: reload those files (a
        change to a folder rescans). Files that look mid-save go into ``defer`` (the watcher
        retries them after :data:`SETTLE_MS`). Returns whether anything was published."""
        with self._lock:
            changed = False
            for raw in paths:
                path = Path(raw)
                for user in self._book.users_of(path):  # an edited helper: reload its users
                    self._book.state(user).hash = ""
                    changed |= self._reload_locked(user)
                if is_tool_file(path, self.root, recursive=self.recursive):
                    changed |= self._reload_locked(path, defer)
                elif path == self.root or path.is_dir() or self._tracks_below(path):
                    changed |= self._rescan_locked()
            if changed:
                self._publish_touched(self._publisher)
                self._record_versions()
            return changed

    def _tracks_below(self, folder: Path) -> bool:
        return any(folder in p.parents for p in self._files)

    def _scan(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        pattern = self.root.rglob("*.py") if self.recursive else self.root.glob("*.py")
        return sorted(p for p in pattern if is_tool_file(p, self.root, recursive=self.recursive))

    def _rescan_locked(self) -> bool:
        present = set(self._scan())
        changed = False
        for gone in [p for p in self._files if p not in present]:
            changed |= self._reload_locked(gone)
        for path in sorted(present):
            changed |= self._reload_locked(path)
        return changed

    def _reload_locked(self, path: Path, defer: set[Path] | None = None) -> bool:
        """Bring ``path``'s state up to date; returns whether anything visible changed.

        With ``defer`` (the watcher's calls), a file written moments ago whose content stops
        mid-line is put in ``defer`` instead of loaded: it is most likely a save in progress.
        """
        state = self._files.get(path)
        try:
            before = os.stat(path)
        except OSError:  # deleted (or renamed away): its tools go
            if self._isolation is not None:
                self._isolation.forget(path)
            return self._book.drop(path)
        if self.root not in Path(os.path.realpath(path)).parents:
            return self._refuse_outside_link(path)
        # No shortcut on an unchanged (size, mtime): mtime ticks are coarse, and two saves of
        # the same size within one tick would look alike. Hashing a small file is cheaper.
        stat = (before.st_size, before.st_mtime_ns)
        if before.st_size > MAX_FILE_BYTES:
            return self._set_error(path, f"file is larger than {MAX_FILE_BYTES} bytes", None, stat)
        try:
            raw = path.read_bytes()
            after = os.stat(path)
        except OSError:
            return False  # vanished mid-read: the deletion event follows
        if (after.st_size, after.st_mtime_ns) != stat or len(raw) != before.st_size:
            return False  # still being written: its next event reloads it
        known = self._book.files.get(path)  # not made here: a deferred file is not listed
        loaded = known.loaded_functions if known is not None else frozenset()
        if defer is not None and mid_save_reason(path, raw, before.st_mtime_ns, loaded) is not None:
            defer.add(path)  # a save in progress (see .settle): the watcher retries it
            return False
        state = self._book.state(path)
        digest = content_hash(raw)
        state.stat = stat
        if digest == state.hash:
            return False
        state.hash = digest
        if not raw.strip():
            if state.tools:  # truncate-then-write caught in between, or a save in progress
                return self._set_error(
                    path,
                    "the file is empty (a save in progress?); its last "
                    "good tools stay live. Delete the file to remove them.",
                    None,
                    stat,
                )
            changed = state.error is not None
            self._book.set_ok(path)
            return changed
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._set_error(
                path, f"the file is not UTF-8 (byte {exc.start}); save it as UTF-8", None, stat
            )
        load = self._isolation.load if self._isolation is not None else load_tool_text
        result = load(text, path, source=self.name, timeout=self.load_timeout)
        self._book.set_helpers(path, result.helpers)
        if result.ok:
            self._book.set_tools(
                path, result.tools, left=f"its file {self._book.rel(path)} no longer defines it"
            )
            self._book.set_ok(path)
            self._book.set_offers(path, result.offers)
            state.loaded_functions = top_level_functions(raw)
            note_loaded(path, text)  # the version that runs (versions.current_version)
        else:
            defines = tuple(_TOP_LEVEL_DEF.findall(text))
            self._book.set_error(path, result.error or "failed to load", result.line, defines)
            log.info("tool file %s failed to load: %s (line %s)", path, result.error, result.line)
        if self._store is not None and result.ok:  # history keeps versions that loaded
            self._unrecorded.append((path, text))
        return True

    def _refuse_outside_link(self, path: Path) -> bool:
        """A symlink to a file outside the folder: code nobody put in the folder would run."""
        message = (
            f"a symbolic link to {os.path.realpath(path)!r}, outside the tools folder; it is "
            "not loaded. Copy the file into the folder instead."
        )
        state = self._book.state(path)
        changed = bool(state.tools) or state.error != message
        self._book.set_tools(
            path,
            (),
            left=f"its file {self._book.rel(path)} is now a link to a file outside the folder, "
            "which is not loaded",
        )
        self._book.set_offers(path, ())
        self._book.set_error(path, message, None)
        state.hash = ""
        return changed

    def _record_versions(self) -> None:
        """Keep the versions loaded since the last call. Runs after publishing, so the
        history's file writes never delay a reload."""
        pending, self._unrecorded = self._unrecorded, []
        for path, text in pending:
            try:
                self._store.record(path, text, event="load")
            except OSError as exc:  # history is a convenience: never fail a reload over it
                log.warning("could not record a version of %s: %s", path, exc)

    def _set_error(self, path: Path, message: str, line: int | None, stat: tuple[int, int]) -> bool:
        changed = self._book.set_error(path, message, line)
        self._book.state(path).stat = stat
        return changed

    # -- publishing -----------------------------------------------------------------------

    def _rel(self, path: Path) -> str:
        return self._book.rel(path)

    def _publisher_for(self, registry: Any) -> SourcePublisher | None:
        if registry is not None:
            return SourcePublisher(registry, self.name)
        return self._publisher

    def publish(self, registry: Any = None) -> RegistryChanged:
        """Hand the registry the folder's complete set, status and per-file details."""
        publisher = self._publisher_for(registry)
        if publisher is None:
            return RegistryChanged()
        with self._lock:
            tools, conflicts = self._book.current()
            self._book.take_touched()
            try:
                change = publisher.replace(
                    tools,
                    error=self._book.error_summary(),
                    details=self._details_now,
                    unavailable=conflicts,
                )
            except SourceError:  # removed from the registry while a reload was in flight
                log.debug("%s is no longer in the registry; not publishing", self.name)
                return RegistryChanged()
            self._book.take_offers_changed()
            publisher.offer(self._book.offers())
            return change

    def _publish_touched(self, publisher: SourcePublisher | None) -> None:
        """Hand the registry only the tools whose names the last reloads touched."""
        touched = self._book.take_touched()
        if publisher is None:
            return
        upserts: list[Tool] = []
        removals: list[str] = []
        unavailable: dict[str, str | None] = {}
        for name in touched:
            tool, conflict = self._book.winner(name)
            if tool is None:
                removals.append(name)
            else:
                upserts.append(tool)
            unavailable[name] = conflict
        try:
            publisher.update(
                upserts=upserts,
                removals=removals,
                unavailable=unavailable,
                error=self._book.error_summary(),
                details=self._details_now,
            )
        except SourceError:
            log.debug("%s is no longer in the registry; not publishing", self.name)
            return
        if self._book.take_offers_changed():
            publisher.offer(self._book.offers())

    def _details_now(self) -> dict[str, Any]:
        """The per-file details, built when someone reads the status. While a file is being
        loaded (the lock is held, for as long as its import runs) the last map is returned
        rather than making ``Registry.status()`` wait for a slow import."""
        if not self._lock.acquire(blocking=False):
            last = self._last_details or self._shape()  # the same keys before the first map
            return {**last, "reloading": True}
        try:
            self._last_details = self._details(self._book.current()[1])
            return self._last_details
        finally:
            self._lock.release()

    def _details(self, conflicts: dict[str, str]) -> dict[str, Any]:
        return self._shape(self._book.per_file(), conflicts)

    def _shape(
        self, files: dict[str, Any] | None = None, conflicts: dict[str, str] | None = None
    ) -> dict[str, Any]:
        watcher = self._watcher
        return {
            "path": str(self.root),
            "files": files or {},
            "conflicts": conflicts or {},
            "watching": bool(watcher and watcher.ready.is_set()),
            "exists": self.root.is_dir(),
        }

    # -- status ---------------------------------------------------------------------------

    @property
    def status(self) -> dict[str, Any]:
        """The folder's status: ``{"path", "files": {rel: {...}}, "conflicts", "watching"}``."""
        with self._lock:
            return self._details(self._book.current()[1])

    def how_left(self, name: str) -> str | None:
        """How tool ``name`` left this folder (``"its file a.py was deleted"``), if it did and
        no file defines it again (read without the lock: one dictionary lookup)."""
        return self._book.how_left(name)

    @property
    def errors(self) -> dict[str, str]:
        """Files that failed to load: relative path -> ``"message (line N)"``."""
        with self._lock:
            return self._book.errors()

    # -- test cases (beside each file: <stem>.tests.yaml, see .tool_tests) ---------------

    def cases_for(self, spec: Any) -> list[Any] | None:
        """The test cases of one of this folder's tools (``None`` for other tools)."""
        from .tool_tests import cases_of_tool_file

        return cases_of_tool_file(spec) if spec.source == self.name else None

    def save_case(self, spec: Any, case: Any) -> str | None:
        """Append ``case`` to the tool's ``<file stem>.tests.yaml``; returns its path."""
        from .tool_tests import save_case_of_tool_file

        return save_case_of_tool_file(spec, case) if spec.source == self.name else None

    def watch_cases(self, changed: Any) -> Any:
        """Follow hand edits of the folder's ``*.tests.yaml`` (a live registry re-runs them)."""
        from .tool_tests import watch_case_files

        return watch_case_files(self.root, changed)

    def file_of(self, tool_name: str) -> Path | None:
        """The file that defines ``tool_name`` (the first, if several do)."""
        with self._lock:
            return self._book.file_of(tool_name)


def _display(root: Path) -> str:
    """The folder as people read it: relative to the current directory when inside it."""
    try:
        rel = root.relative_to(Path.cwd().resolve())
    except (ValueError, OSError):
        return str(root)
    return str(rel) if str(rel) != "." else "."
