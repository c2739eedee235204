"""A folder of tool files, loaded and hot-reloaded: ``Registry.watch("tools/dynamic")``.

Each ``*.py`` file may define one or more ``@tool`` functions. Files load as fresh modules
(:mod:`.loader`); a change reloads only the files that changed and hands the registry the
folder's complete set in one atomic swap.

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
event; a file written moments ago that ends mid-line gets :data:`SETTLE_MS` to be finished;
an empty file keeps its tools; and a partial file that does not parse keeps them too.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import SourceError
from ..core.tools.spec import SourceKind
from ..core.tools.tool import Tool
from .loader import content_hash, load_tool_text

__all__ = ["DEFAULT_DEBOUNCE_MS", "DEFAULT_STEP_MS", "DirectorySource", "is_tool_file"]

log = logging.getLogger(__name__)

#: Quiet time after the last change before a batch is reloaded. watchfiles yields 1-2 steps
#: after the last event; 6 ms gives ~17 ms save-to-callable (benchmarks/hot_reload.py) while
#: an editor's truncate-then-write (microseconds apart) still lands in one batch.
DEFAULT_STEP_MS = 6
#: The longest a stream of changes is grouped before it is reloaded anyway.
DEFAULT_DEBOUNCE_MS = 400
MAX_FILE_BYTES = 2_000_000
#: A file saved moments ago that ends mid-line is given this long to be finished.
SETTLE_MS = 40
#: A file whose module body runs longer than this is reported as an error (see loader).
LOAD_TIMEOUT_S = 10.0
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


@dataclass(slots=True)
class _FileState:
    path: Path
    stat: tuple[int, int] | None = None  # (size, mtime_ns) of the content last read
    hash: str = ""  # of the content last read
    tools: tuple[Tool, ...] = ()  # the last good set
    offers: tuple[Any, ...] = ()  # its @resource / @prompt functions (last good set)
    error: str | None = None
    line: int | None = None

    def to_dict(self, rel: str) -> dict[str, Any]:
        return {
            "file": rel,
            "status": "error" if self.error else "ok",
            "message": self.error,
            "line": self.line,
            "tools": [t.name for t in self.tools],
            "hash": self.hash[:12],
        }


class DirectorySource:
    """Tool files in ``path``, hot-reloaded while the registry runs.

    ``recursive`` includes sub-folders. ``debounce_ms`` / ``step_ms`` tune the watcher.
    ``versions`` keeps every content a file goes through (:mod:`.versions`); a file whose
    import runs longer than ``load_timeout`` seconds is reported as an error.
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
        self._files: dict[Path, _FileState] = {}
        self._lock = threading.RLock()
        self._registry: Any = None
        self._watcher: Any = None
        self._started = threading.Event()  # set once start() has made the watcher
        self._store: Any = None
        self._unrecorded: list[tuple[Path, str]] = []  # versions to keep once published
        if versions:
            from .versions import VersionStore

            self._store = VersionStore(self.root)

    def __repr__(self) -> str:
        return f"<DirectorySource {str(self.path)!r} files={len(self._files)} errors={len(self.errors)}>"

    # -- the source protocol -------------------------------------------------------------

    def load(self) -> Iterable[Tool]:
        """Scan the whole folder (loading changed files) and return its tools."""
        with self._lock:
            self._rescan_locked()
            tools, _ = self._current()
            self._record_versions()
            return tools

    def attach(self, registry: Any) -> None:
        """Know the registry before :meth:`start` runs, so :meth:`reload_file` and
        :meth:`rescan` publish at once (the registry may call this when adding the source)."""
        self._registry = registry

    async def start(self, registry: Any) -> None:
        """Publish the full status and start watching on the registry's loop."""
        from .watcher import FolderWatcher

        self._registry = registry
        self.publish()
        self._watcher = FolderWatcher(self, step_ms=self.step_ms, debounce_ms=self.debounce_ms)
        self._watcher.start()
        self._started.set()

    async def stop(self) -> None:
        """Stop watching; the source no longer publishes (the registry is dropping it)."""
        with self._lock:
            watcher, self._watcher = self._watcher, None
            if self._registry is not None:
                from ..core.registry.catalog import catalog_of

                catalog_of(self._registry).replace(self.name, ())
            self._registry = None
            self._started.clear()
        if watcher is not None:
            await watcher.stop()

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
        """Reload one file now (or drop it, if it is gone) and publish; returns its status."""
        file = Path(path).expanduser().resolve()
        with self._lock:
            changed = self._reload_locked(file)
            if changed:
                self.publish(registry)
                self._record_versions()
            state = self._files.get(file)
            rel = self._rel(file)
            return (
                state.to_dict(rel)
                if state
                else {"file": rel, "status": "missing", "message": None, "line": None, "tools": []}
            )

    def rescan(self, *, registry: Any = None) -> None:
        """Rescan the whole folder now and publish."""
        with self._lock:
            self._rescan_locked()
            self.publish(registry)
            self._record_versions()

    def apply_changes(self, paths: Iterable[str | Path], defer: set[Path] | None = None) -> bool:
        """What the watcher calls with a batch of changed paths: reload those files (a
        change to a folder rescans). Files that look mid-save go into ``defer`` (the watcher
        retries them after :data:`SETTLE_MS`). Returns whether anything was published."""
        with self._lock:
            changed = False
            for raw in paths:
                path = Path(raw)
                if is_tool_file(path, self.root, recursive=self.recursive):
                    changed |= self._reload_locked(path, defer)
                elif path == self.root or path.is_dir() or self._tracks_below(path):
                    changed |= self._rescan_locked()
            if changed:
                self.publish()
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
            return self._files.pop(path, None) is not None
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
        if (
            defer is not None
            and raw
            and not raw.endswith(b"\n")
            and time.time_ns() - before.st_mtime_ns < SETTLE_MS * 1_000_000
        ):
            defer.add(path)
            return False
        digest = content_hash(raw)
        state = self._files.setdefault(path, _FileState(path))
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
            state.error = state.line = None
            return changed
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._set_error(
                path, f"the file is not UTF-8 (byte {exc.start}); save it as UTF-8", None, stat
            )
        result = load_tool_text(text, path, source=self.name, timeout=self.load_timeout)
        if result.ok:
            state.tools, state.error, state.line = result.tools, None, None
            state.offers = result.offers
        else:
            state.error, state.line = result.error, result.line
            log.info("tool file %s failed to load: %s (line %s)", path, result.error, result.line)
        if self._store is not None:
            self._unrecorded.append((path, text))
        return True

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
        state = self._files.setdefault(path, _FileState(path))
        changed = state.error != message
        state.error, state.line, state.stat = message, line, stat
        return changed

    # -- publishing -----------------------------------------------------------------------

    def _rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def _current(self) -> tuple[list[Tool], dict[str, str]]:
        """The folder's tools (first file wins a name) and the names in conflict."""
        owners: dict[str, list[str]] = {}
        chosen: dict[str, Tool] = {}
        for path in sorted(self._files):
            for tool in self._files[path].tools:
                owners.setdefault(tool.name, []).append(self._rel(path))
                chosen.setdefault(tool.name, tool)
        conflicts = {
            name: f"conflict: defined in {' and '.join(files)}; rename one of them"
            for name, files in owners.items()
            if len(files) > 1
        }
        return list(chosen.values()), conflicts

    def publish(self, registry: Any = None) -> None:
        """Hand the registry the folder's complete set, status and per-file details."""
        registry = registry if registry is not None else self._registry
        if registry is None:
            return
        with self._lock:
            tools, conflicts = self._current()
            errors = self.errors
            error = None
            if errors:
                error = f"{len(errors)} file(s) failed to load: " + "; ".join(
                    f"{f}: {m}" for f, m in sorted(errors.items())
                )
            try:
                registry.publish(
                    self.name,
                    tools,
                    error=error,
                    details=self._details(conflicts),
                    unavailable=conflicts,
                )
            except SourceError:  # removed from the registry while a reload was in flight
                log.debug("%s is no longer in the registry; not publishing", self.name)
                return
            self._publish_offers(registry)

    def _publish_offers(self, registry: Any) -> None:
        """The folder's resources and prompts, to the registry's catalog."""
        from ..core.registry.catalog import catalog_of

        offers = [o for path in sorted(self._files) for o in self._files[path].offers]
        catalog_of(registry).replace(self.name, offers)

    def _details(self, conflicts: dict[str, str]) -> dict[str, Any]:
        files = {self._rel(p): s.to_dict(self._rel(p)) for p, s in sorted(self._files.items())}
        watcher = self._watcher
        return {
            "path": str(self.root),
            "files": files,
            "conflicts": conflicts,
            "watching": bool(watcher and watcher.ready.is_set()),
            "exists": self.root.is_dir(),
        }

    # -- status ---------------------------------------------------------------------------

    @property
    def status(self) -> dict[str, Any]:
        """The folder's status: ``{"path", "files": {rel: {...}}, "conflicts", "watching"}``."""
        with self._lock:
            return self._details(self._current()[1])

    @property
    def errors(self) -> dict[str, str]:
        """Files that failed to load: relative path -> ``"message (line N)"``."""
        with self._lock:
            return {
                self._rel(p): s.error + (f" (line {s.line})" if s.line else "")
                for p, s in sorted(self._files.items())
                if s.error
            }

    def file_of(self, tool_name: str) -> Path | None:
        """The file that defines ``tool_name`` (the first, if several do)."""
        with self._lock:
            for path in sorted(self._files):
                if any(t.name == tool_name for t in self._files[path].tools):
                    return path
        return None


def _display(root: Path) -> str:
    """The folder as people read it: relative to the current directory when inside it."""
    try:
        rel = root.relative_to(Path.cwd().resolve())
    except (ValueError, OSError):
        return str(root)
    return str(rel) if str(rel) != "." else "."
