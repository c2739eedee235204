"""Tool files that failed to load, as the faces show them.

A folder source publishes per-file details (``details["files"]``: ``{rel: {"status",
"message", "line", "tools", "defines"}}`` under ``details["path"]``). Two things follow for
the person looking at a tool:

- a tool whose file failed to *reload* is **stale**: its last good version is still live
  (:func:`stale_tools`), and every face should say so with the error and its line;
- a name that is not in the registry at all may be defined by a file that failed to *load*
  (:func:`why_missing`), and "No tool named ..." should say which file and why;
- a tool whose file was deleted, or no longer defines it, is gone (:func:`how_it_left`, asked
  of the folder it left), and a call of it should say so rather than "No tool named".

Only plain dicts are read here, so the core never imports a source.

>>> from nexus_jupyter import Registry                # doctest: +SKIP
>>> stale_tools(Registry.default())["circle_area"].note()   # doctest: +SKIP
'stale: circle_area.py failed to reload (SyntaxError: invalid syntax, line 3); ...'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Protocol, runtime_checkable

from ..errors import SourceError

__all__ = [
    "BrokenFile",
    "KnowsHowToolsLeft",
    "broken_files",
    "how_it_left",
    "stale_file",
    "stale_tools",
    "why_missing",
]


@dataclass(frozen=True, slots=True)
class BrokenFile:
    """One tool file whose last load failed.

    ``serves`` are the tools of its last good version (still live: stale); ``defines`` are
    the names its current, broken text appears to define.
    """

    source: str
    path: str
    message: str
    line: int | None = None
    serves: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()

    @property
    def file_name(self) -> str:
        return PurePath(self.path).name

    @property
    def error(self) -> str:
        """The error with its line: ``"SyntaxError: invalid syntax, line 3"``."""
        return self.message + (f", line {self.line}" if self.line else "")

    def note(self) -> str:
        """What a stale tool's listing says."""
        return (
            f"stale: {self.file_name} failed to reload ({self.error}); the last good version "
            "is live. Fix the file and save it."
        )

    def ran_note(self) -> str:
        """What a call of a stale tool warns."""
        return (
            f"{self.file_name} failed to reload ({self.error}); the last good version of the "
            "tool ran. Fix the file and save it."
        )

    def missing_cause(self) -> str:
        """Why a name it defines is not in the registry."""
        return (
            f"{self.file_name} failed to load ({self.error}), so its tools are not registered. "
            f"Fix {self.path} and save it; it loads on save."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "file": self.path,
            "message": self.message,
            "line": self.line,
            "serves": list(self.serves),
            "defines": list(self.defines),
        }


def _files_of(details: Mapping[str, Any]) -> Iterable[tuple[str, Mapping[str, Any]]]:
    files = details.get("files")
    if not isinstance(files, Mapping):
        return ()
    root = str(details.get("path") or "")
    return ((str(PurePath(root, rel)) if root else str(rel), info) for rel, info in files.items())


def broken_files(registry: Any, states: Iterable[Any] | None = None) -> list[BrokenFile]:
    """Every tool file of the registry's sources (or of ``states``) whose last load failed,
    by path."""
    out: list[BrokenFile] = []
    for state in registry.sources() if states is None else states:
        if state.kind != "directory" or not state.error:  # healthy folders cost nothing
            continue
        for path, info in _files_of(state.details):
            if not isinstance(info, Mapping) or info.get("status") != "error":
                continue
            out.append(
                BrokenFile(
                    source=state.name,
                    path=path,
                    message=str(info.get("message") or "failed to load"),
                    line=info.get("line"),
                    serves=tuple(info.get("tools") or ()),
                    defines=tuple(info.get("defines") or ()),
                )
            )
    return sorted(out, key=lambda b: b.path)


def stale_tools(registry: Any, broken: list[BrokenFile] | None = None) -> dict[str, BrokenFile]:
    """Tool name -> the broken file whose last good version the registry still serves
    under that name (a tool of the same name from elsewhere that wins is not stale)."""
    broken = broken_files(registry) if broken is None else broken
    out: dict[str, BrokenFile] = {}
    for file in broken:
        for name in file.serves:
            tool = registry.find(name)
            if tool is not None and tool.spec.origin == file.path:
                out[name] = file
    return out


def stale_file(registry: Any, name: str) -> BrokenFile | None:
    """The broken file whose last good version serves ``name``, or ``None``: what a call
    checks, so it reads one folder's details only when that folder's error names the file
    (a healthy call costs a dictionary lookup or two)."""
    tool = registry.find(name)
    if tool is None or tool.spec.source_kind != "directory" or not tool.spec.origin:
        return None
    file_name = PurePath(tool.spec.origin).name
    states = [
        s
        for s in registry.sources()
        if s.name == tool.spec.source and s.error and file_name in s.error
    ]
    if not states:
        return None
    return stale_tools(registry, broken_files(registry, states)).get(name)


def why_missing(registry: Any, name: str) -> BrokenFile | None:
    """The broken file that would define ``name`` (named after it, or defining a function
    of that name), or ``None``."""
    for file in broken_files(registry):
        if name in file.defines or PurePath(file.path).stem == name:
            return file
    return None


@runtime_checkable
class KnowsHowToolsLeft(Protocol):
    """A source that can say how a tool of its left (a folder: its file was deleted)."""

    def how_left(self, name: str) -> str | None: ...


def how_it_left(registry: Any, name: str) -> str | None:
    """How tool ``name`` left (``"its file a.py was deleted"``), asked of the source it
    left, or ``None``: it never left, came back since, or its source cannot say."""
    departures = getattr(registry, "_departures", None)
    left = departures.source_of(name) if departures is not None else None
    if left is None:
        return None
    try:
        source = registry.source(left)
    except SourceError:
        return None  # the source itself went
    return source.how_left(name) if isinstance(source, KnowsHowToolsLeft) else None
