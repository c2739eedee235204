"""Every version a tool file goes through, kept content-addressed, with rollback.

Where: ``<NEXUS_HOME>/versions/<tools folder name>-<hash of its path>/`` (``~/.nexus`` by
default), or ``$NEXUS_VERSIONS_DIR/<folder name>-<hash of its path>/`` when that variable is
set. It lives outside the workspace on purpose: the built-in ``write``/``edit`` tools cannot
reach it, so an agent cannot plant code in an old version for a later ``rollback`` to
import. A restore also checks each object against the hash it is named by.

Layout: ``objects/<sha256>.py`` holds each distinct content once; ``<file stem>.jsonl`` logs,
oldest first, every content the file went through (one JSON line per version: hash, time,
size, lines added/removed against the version before, and what wrote it: ``load``,
``export``, ``create``, ``rollback``). Appending one short line is atomic, so a kernel and a
server watching the same folder can both record.

>>> store = VersionStore("tools/dynamic")      # doctest: +SKIP
>>> store.versions("weather")[-1].summary      # doctest: +SKIP
'+3 -1 lines'
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import SourceError
from .loader import content_hash

__all__ = [
    "Version",
    "VersionStore",
    "current_version",
    "note_loaded",
    "resolve_tool_file",
    "rollback",
    "shown_version",
    "versions",
    "versions_dir",
]

DEFAULT_KEEP = 100
DEFAULT_MAX_AGE_DAYS = 90.0

_locks: dict[Path, threading.Lock] = {}
_tails: dict[Path, tuple[int, str, int]] = {}  # log -> (its size, newest hash, count)
_locks_guard = threading.Lock()
_loaded: dict[Path, str] = {}  # tool file -> hash of the content this process last loaded


@dataclass(frozen=True, slots=True)
class Version:
    """One content a tool file had. ``number`` counts from 1 (oldest)."""

    number: int
    hash: str
    time: float
    size: int
    added: int
    removed: int
    event: str = "load"

    @property
    def summary(self) -> str:
        return f"+{self.added} -{self.removed} lines"

    @property
    def short(self) -> str:
        return self.hash[:10]

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "hash": self.hash,
            "time": self.time,
            "size": self.size,
            "added": self.added,
            "removed": self.removed,
            "event": self.event,
            "summary": self.summary,
        }


def versions_dir(tools_dir: str | Path) -> Path:
    """Where the versions of ``tools_dir``'s files are kept (see the module docstring)."""
    from ..core.config.loading import nexus_home

    folder = Path(tools_dir).expanduser().resolve()
    tag = hashlib.sha256(str(folder).encode()).hexdigest()[:12]
    env = os.environ.get("NEXUS_VERSIONS_DIR")
    base = Path(env).expanduser() if env else nexus_home() / "versions"
    return base / f"{folder.name or 'root'}-{tag}"


def _lock_for(path: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(path, threading.Lock())


class VersionStore:
    """The versions of the files of one tools folder: at most ``keep`` per file, none older
    than ``max_age_days`` (``history`` in nex.yaml); older ones are dropped as new ones come."""

    def __init__(
        self,
        tools_dir: str | Path,
        *,
        keep: int = DEFAULT_KEEP,
        max_age_days: float = DEFAULT_MAX_AGE_DAYS,
    ) -> None:
        self.tools_dir = Path(tools_dir).expanduser().resolve()
        self.root = versions_dir(self.tools_dir)
        self.keep = keep
        self.max_age_s = max_age_days * 86400
        self._lock = _lock_for(self.root)

    def _log(self, stem: str) -> Path:
        return self.root / f"{stem}.jsonl"

    def _object(self, digest: str) -> Path:
        return self.root / "objects" / f"{digest}.py"

    def record(self, path: str | Path, text: str, *, event: str = "load") -> Version | None:
        """Keep ``text`` as the newest version of ``path`` (skipped when it equals the newest
        version already kept, or is empty: an empty file is a save in progress)."""
        if not text.strip():
            return None
        stem = Path(path).stem
        digest = content_hash(text)
        with self._lock:
            last, count = self._tail(stem)
            if last == digest:
                return None
            obj = self._object(digest)
            if not self._intact(digest):  # missing, or changed behind our back: write it
                from .tool_files import atomic_write

                atomic_write(obj, text)
            before = self.text(last) if last and self._intact(last) else ""
            added = removed = 0
            for line in difflib.ndiff(before.splitlines(), text.splitlines()):
                added += line.startswith("+ ")
                removed += line.startswith("- ")
            entry = {
                "hash": digest,
                "time": time.time(),
                "size": len(text.encode()),
                "added": added,
                "removed": removed,
                "event": event,
            }
            log_path = self._log(stem)
            with open(log_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry) + "\n")
            _tails[log_path] = (log_path.stat().st_size, digest, count + 1)
            if count + 1 >= self.keep + max(10, self.keep // 4):  # prune in batches: O(1) a save
                self._prune(stem)
            return Version(count + 1, **entry)  # type: ignore[arg-type]

    def _prune(self, stem: str) -> None:
        """Keep the newest ``keep`` versions of ``stem`` younger than the age limit; delete
        the objects no log refers to any more. Called with the lock held."""
        from .tool_files import atomic_write

        oldest = time.time() - self.max_age_s
        history = self._read(stem)
        kept = [e for e in history if e.get("time", 0) >= oldest][-self.keep :]
        log_path = self._log(stem)
        atomic_write(log_path, "".join(json.dumps(e) + "\n" for e in kept))
        _tails.pop(log_path, None)
        wanted = {e["hash"] for e in kept}
        for other in self.root.glob("*.jsonl"):
            if other != log_path:
                wanted |= {e["hash"] for e in self._read(other.stem)}
        for dropped in {e["hash"] for e in history} - wanted:
            self._object(dropped).unlink(missing_ok=True)

    def _tail(self, stem: str) -> tuple[str, int]:
        """The newest hash and the number of versions of ``stem`` (cached while the log's
        size is unchanged, so recording stays O(1) as the history grows)."""
        log_path = self._log(stem)
        try:
            size = log_path.stat().st_size
        except FileNotFoundError:
            return "", 0
        cached = _tails.get(log_path)
        if cached is not None and cached[0] == size:
            return cached[1], cached[2]
        history = self._read(stem)
        last = history[-1]["hash"] if history else ""
        _tails[log_path] = (size, last, len(history))
        return last, len(history)

    def _read(self, stem: str) -> list[dict[str, Any]]:
        try:
            lines = self._log(stem).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out: list[dict[str, Any]] = []
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # a torn line from a crashed writer: skip it, keep the rest
            if out and out[-1]["hash"] == entry.get("hash"):
                continue  # two processes recorded the same load
            out.append(entry)
        return out

    def versions(self, stem: str) -> list[Version]:
        """The versions of file ``<stem>.py`` kept (within the count and age limits),
        oldest first."""
        fields = ("hash", "time", "size", "added", "removed", "event")
        oldest = time.time() - self.max_age_s
        history = [e for e in self._read(stem) if e.get("time", 0) >= oldest][-self.keep :]
        return [Version(i, **{k: e.get(k, 0) for k in fields}) for i, e in enumerate(history, 1)]

    def _intact(self, digest: str) -> bool:
        try:
            return content_hash(self._object(digest).read_bytes()) == digest
        except OSError:
            return False

    def text(self, digest: str) -> str:
        """The content of version ``digest``, checked against that hash (a changed object is
        refused, never restored)."""
        try:
            text = self._object(digest).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SourceError(f"Version {digest[:10]!r} is missing from {self.root}.") from None
        except UnicodeDecodeError:
            text = None
        if text is None or content_hash(text) != digest:
            raise SourceError(
                f"Version {digest[:10]!r} in {self.root} was changed after it was saved (its "
                "content no longer matches its hash); it is not restored. Pick another version."
            )
        return text

    def find(self, stem: str, version: str | int | None, *, current: str | None) -> Version:
        """Version ``version`` (a number from :meth:`versions`, or a hash prefix) of
        ``stem``; ``None`` means the newest version that differs from ``current``."""
        history = self.versions(stem)
        if not history:
            raise SourceError(f"No saved versions of {stem!r} in {self.root}.")
        if version is None:
            for v in reversed(history):
                if v.hash != current:
                    return v
            raise SourceError(f"{stem!r} has only one version; nothing to roll back to.")
        text = str(version).strip()
        if text.lstrip("-").isdigit():
            n = int(text)
            index = n - 1 if n > 0 else len(history) + n
            if 0 <= index < len(history):
                return history[index]
            raise SourceError(
                f"{stem!r} has versions 1 to {len(history)}; there is no version {str(version)!r}."
            )
        matches = {v.hash: v for v in history if v.hash.startswith(text.lower())}
        if len(matches) == 1:
            return next(iter(matches.values()))
        what = "matches several versions" if matches else "matches no version"
        raise SourceError(f"{version!r} {what} of {stem!r}; use `%tool versions {stem}`.")

    def rollback(self, path: str | Path, version: str | int | None = None) -> Version:
        """Restore ``path`` to ``version`` (default: the previous one) atomically."""
        path = Path(path)
        try:
            current: str | None = content_hash(path.read_bytes())
        except OSError:
            current = None
        chosen = self.find(path.stem, version, current=current)
        text = self.text(chosen.hash)
        from .tool_files import atomic_write

        # Recorded first: the watcher may reload the file before this line would run after it.
        self.record(path, text, event="rollback")
        atomic_write(path, text)
        return chosen


def resolve_tool_file(
    name_or_path: str | Path, *, registry: Any = None, tools_dir: str | Path | None = None
) -> Path:
    """The file of a tool: a path as given, the file a directory tool came from (also when
    a notebook tool shadows it), else ``<tools dir>/<name>.py``."""
    text = str(name_or_path)
    if text.endswith(".py") or os.sep in text:
        return Path(text).expanduser().resolve()
    if registry is not None and registry.find(text) is not None:
        entry = registry.entry(text)
        for candidate in (entry.tool, *entry.shadowed):
            if candidate.spec.source_kind == "directory" and candidate.spec.origin:
                return Path(candidate.spec.origin)
    from .tool_files import default_tools_dir, target_path

    if tools_dir is None:
        tools_dir = default_tools_dir(registry)

    return target_path(tools_dir, text)


def note_loaded(path: str | Path, text: str) -> None:
    """Say that this process now runs ``text`` of the tool file ``path`` (a directory source
    calls it after a load succeeds): :func:`current_version` is the version with its hash."""
    with _locks_guard:
        _loaded[Path(path).resolve()] = content_hash(text)


def current_version(path: str | Path, history: list[Version]) -> Version | None:
    """The version of ``history`` (``path``'s, oldest first) that runs: the newest one with
    the content this process last loaded from the file. Export and rollback save a version
    before it loads, so the newest may be one that failed to load (the tool is stale); the
    newest when this process has not loaded the file."""
    with _locks_guard:
        loaded = _loaded.get(Path(path).resolve())
    for v in reversed(history):
        if loaded is None or v.hash == loaded:
            return v
    return history[-1] if history else None


def shown_version(spec: Any) -> str:
    """The id a person sees for the version of a tool, one everywhere (``%tool info``, the
    catalog, ``nexus-tools info``, the sidebar): for a tool file with a saved history, the
    number and hash of the saved version that runs (:func:`current_version`), ``#3
    97c1a6b626``, which is what ``%tool versions`` lists and ``%tool rollback`` takes; else
    the tool's own content hash, ``v6a94bc645d37``."""
    if getattr(spec, "source_kind", "") == "directory" and getattr(spec, "origin", ""):
        try:
            kept = versions(spec.origin)
        except (SourceError, OSError, ValueError):
            kept = []
        runs = current_version(spec.origin, kept)
        if runs is not None:
            return f"#{runs.number} {runs.short}"
    return f"v{spec.version}"


def versions(
    name_or_path: str | Path, *, registry: Any = None, tools_dir: str | Path | None = None
) -> list[Version]:
    """Every version of a tool's file, oldest first."""
    path = resolve_tool_file(name_or_path, registry=registry, tools_dir=tools_dir)
    return VersionStore(path.parent).versions(path.stem)


def rollback(
    name_or_path: str | Path,
    version: str | int | None = None,
    *,
    registry: Any = None,
    tools_dir: str | Path | None = None,
) -> Version:
    """Restore a tool's file to ``version`` (default: the previous one), atomically; the
    watcher (or, with ``registry``, an immediate reload) makes it live."""
    path = resolve_tool_file(name_or_path, registry=registry, tools_dir=tools_dir)
    chosen = VersionStore(path.parent).rollback(path, version)
    if registry is not None:
        from .tool_files import directory_source_for

        source = directory_source_for(registry, path.parent)
        if source is not None:
            source.reload_file(path, registry=registry)
    return chosen
