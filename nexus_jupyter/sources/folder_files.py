"""What a folder's tool files define, kept up to date one file at a time.

:class:`FolderFiles` is the bookkeeping behind
:class:`~nexus_jupyter.sources.directory.DirectorySource`: each file's state (its last good
tools, its error), which files define each tool name, which files fail, and the names touched
since the source last published. With it a save costs what the saved file defines: the
source hands the registry only the touched names (:meth:`FolderFiles.take_touched`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.tools.tool import Tool

__all__ = ["FileState", "FolderFiles"]

#: How many departed tool names a folder remembers (see :attr:`FolderFiles.left`).
_MAX_LEFT = 256


@dataclass(slots=True)
class FileState:
    path: Path
    stat: tuple[int, int] | None = None  # (size, mtime_ns) of the content last read
    hash: str = ""  # of the content last read
    tools: tuple[Tool, ...] = ()  # the last good set
    offers: tuple[Any, ...] = ()  # its @resource / @prompt functions (last good set)
    error: str | None = None
    line: int | None = None
    defines: tuple[str, ...] = ()  # functions the failing text defines (for "No tool named")
    loaded_functions: frozenset[str] = frozenset()  # top-level functions of the last good text

    def to_dict(self, rel: str) -> dict[str, Any]:
        return {
            "file": rel,
            "status": "error" if self.error else "ok",
            "message": self.error,
            "line": self.line,
            "tools": [t.name for t in self.tools],
            "hash": self.hash[:12],
            "defines": list(self.defines) if self.error else [],
        }


class FolderFiles:
    """Per-file state of one folder (callers hold the source's lock)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[Path, FileState] = {}
        self._owners: dict[str, set[Path]] = {}  # tool name -> the files defining it
        self._failing: set[Path] = set()  # files whose last load failed
        self._touched: set[str] = set()  # tool names changed since the last publish
        self._offers_changed = False  # a file's resources or prompts changed since then
        self._helper_users: dict[Path, set[Path]] = {}  # helper module -> tool files using it
        #: tool name -> how it left this folder (its file was deleted, or no longer defines
        #: it), newest last, until a file defines it again: "No tool named" says so
        self.left: dict[str, str] = {}

    def state(self, path: Path) -> FileState:
        return self.files.setdefault(path, FileState(path))

    def set_tools(self, path: Path, tools: Iterable[Tool], *, left: str | None = None) -> None:
        """Record ``path``'s tools, and which names that touches; ``left`` says how a name it
        no longer defines left (see :attr:`left`), when no other file defines it."""
        state = self.state(path)
        before = {t.name for t in state.tools}
        state.tools = tuple(tools)
        after = {t.name for t in state.tools}
        for name in before - after:
            owners = self._owners.get(name)
            if owners is not None:
                owners.discard(path)
                if not owners:
                    del self._owners[name]
            if left is not None and name not in self._owners:
                self._note_left(name, left)
        for name in after:
            self._owners.setdefault(name, set()).add(path)
            self.left.pop(name, None)
        self._touched |= before | after

    def how_left(self, name: str) -> str | None:
        """How tool ``name`` left this folder, if it did and no file defines it again."""
        return self.left.get(name)

    def _note_left(self, name: str, how: str) -> None:
        self.left.pop(name, None)
        self.left[name] = how
        while len(self.left) > _MAX_LEFT:
            del self.left[next(iter(self.left))]

    def set_offers(self, path: Path, offers: Iterable[Any]) -> None:
        state = self.state(path)
        new = tuple(offers)
        if new != state.offers:
            state.offers = new
            self._offers_changed = True

    def take_offers_changed(self) -> bool:
        changed, self._offers_changed = self._offers_changed, False
        return changed

    def set_ok(self, path: Path) -> None:
        state = self.state(path)
        state.error = state.line = None
        self._failing.discard(path)

    def set_error(
        self, path: Path, message: str, line: int | None, defines: tuple[str, ...] = ()
    ) -> bool:
        """Record a failure (the last good tools stay); returns whether the message changed."""
        self._failing.add(path)
        state = self.state(path)
        changed = (state.error, state.line) != (message, line)
        state.error, state.line, state.defines = message, line, defines
        return changed

    def drop(self, path: Path) -> bool:
        """Forget a deleted file (its tools go); returns whether it was known."""
        if path not in self.files:
            return False
        self.set_tools(path, (), left=f"its file {self.rel(path)} was deleted")
        self.set_offers(path, ())
        self._failing.discard(path)
        del self.files[path]
        self.set_helpers(path, ())
        return True

    def set_helpers(self, path: Path, helpers: Iterable[Path]) -> None:
        """Record the helper modules beside it that tool file ``path`` imported."""
        for users in self._helper_users.values():
            users.discard(path)
        for helper in helpers:
            self._helper_users.setdefault(helper.resolve(), set()).add(path)

    def users_of(self, helper: Path) -> list[Path]:
        """The tool files that imported ``helper`` when they last loaded."""
        return sorted(p for p in self._helper_users.get(helper.resolve(), ()) if p in self.files)

    def take_touched(self) -> set[str]:
        touched, self._touched = self._touched, set()
        return touched

    # -- reading --------------------------------------------------------------------------

    def rel(self, path: Path) -> str:
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)

    def winner(self, name: str) -> tuple[Tool | None, str | None]:
        """The tool that ``name`` means in this folder (the first file, by path, wins) and
        the conflict reason when several files define it."""
        owners = sorted(self._owners.get(name, ()))
        if not owners:
            return None, None
        tool = next(t for t in self.files[owners[0]].tools if t.name == name)
        if len(owners) == 1:
            return tool, None
        files = " and ".join(self.rel(p) for p in owners)
        return tool, f"conflict: defined in {files}; rename one of them"

    def current(self) -> tuple[list[Tool], dict[str, str]]:
        """The folder's tools (first file wins a name) and the names in conflict."""
        tools: list[Tool] = []
        conflicts: dict[str, str] = {}
        for name in self._owners:
            tool, conflict = self.winner(name)
            if tool is not None:
                tools.append(tool)
            if conflict is not None:
                conflicts[name] = conflict
        return tools, conflicts

    def errors(self) -> dict[str, str]:
        """Files that failed to load: relative path -> ``"message (line N)"``."""
        out = {}
        for path in sorted(self._failing):
            state = self.files.get(path)
            if state is not None and state.error:
                out[self.rel(path)] = state.error + (f" (line {state.line})" if state.line else "")
        return out

    def error_summary(self) -> str | None:
        errors = self.errors() if self._failing else {}
        if not errors:
            return None
        return f"{len(errors)} file(s) failed to load: " + "; ".join(
            f"{f}: {m}" for f, m in sorted(errors.items())
        )

    def file_of(self, tool_name: str) -> Path | None:
        """The file that defines ``tool_name`` (the first, if several do)."""
        owners = self._owners.get(tool_name)
        return min(owners) if owners else None

    def offers(self) -> list[Any]:
        return [o for path in sorted(self.files) for o in self.files[path].offers]

    def per_file(self) -> dict[str, dict[str, Any]]:
        return {self.rel(p): s.to_dict(self.rel(p)) for p, s in sorted(self.files.items())}
