"""File tools: ``read``, ``write``, ``edit``, ``ls``, ``glob`` -- all confined to the workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...core.errors import PermissionDenied
from ...core.tools.context import ToolContext
from ...core.tools.decorator import tool
from ...core.tools.tool import Tool
from .paths import SKIP_DIRS, Workspace
from .protected import refuse_protected

__all__ = ["MAX_LINE_CHARS", "file_tools", "is_binary"]

MAX_LINE_CHARS = 2000
MAX_GLOB_RESULTS = 1000
MAX_GLOB_CHARS = 500


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


def _check_glob_pattern(pattern: str) -> None:
    if len(pattern) > MAX_GLOB_CHARS:  # globs become regular expressions: keep them small
        raise ValueError(
            f"The glob pattern is {len(pattern)} characters long; the limit is {MAX_GLOB_CHARS}."
        )
    if not pattern or "\x00" in pattern:
        raise ValueError(f"Invalid glob pattern {pattern!r}: give a pattern like '**/*.py'.")
    if pattern.startswith(("/", "~")) or ".." in Path(pattern).parts:
        raise PermissionDenied(
            f"The glob pattern {pattern!r} reaches outside the workspace; use a relative "
            "pattern without '..' (and the `path` argument for a sub-folder)."
        )


def _refuse_watched_folder(registry: Any, ws: Workspace, real: Path, ctx: ToolContext) -> None:
    """A file written into a watched tools folder is imported at once: code runs in this
    process. For a remote caller (MCP, REST: no one here to approve) that would turn `write`
    into a shell, so it is refused; agents create tools with `create_dynamic_tool`, which asks."""
    if registry is None or not ctx.request.caller.remote:
        return
    for state in registry.sources():
        folder = getattr(state.source, "root", None)
        if state.kind != "directory" or not isinstance(folder, Path):
            continue
        if real == folder or folder in real.parents:
            # the folder as the caller names paths: relative to the workspace when inside it
            shown = ws.relative(folder) if ws.contains(folder) else str(folder)
            raise PermissionDenied(
                f"Writing into the watched tools folder {shown!r} would run that code in "
                "this process; over MCP and REST use create_dynamic_tool (it needs approval), "
                "or edit the file in the notebook."
            )


def file_tools(ws: Workspace, registry: Any = None) -> list[Tool]:
    """The file tools bound to workspace ``ws``."""

    @tool(
        permission="read_only",
        categories=["files"],
        capabilities=["read_file"],
        eager=True,
        summary="Reading {path}",
    )
    def read(path: str, offset: int = 1, limit: int = 2000) -> str:
        """Read a text file of the workspace, with line numbers.

        Args:
            path: File path, relative to the workspace root (or absolute inside it).
            offset: First line to show (1-based).
            limit: Maximum number of lines to show.
        """
        real = ws.resolve(path)
        if real.is_dir():
            raise IsADirectoryError(f"{path!r} is a folder; list it with the `ls` tool.")
        if not real.exists():
            raise FileNotFoundError(
                f"No file {path!r} in the workspace; list its folder with the `ls` tool to "
                "check the name."
            )
        if not real.is_file():  # a FIFO or a device would block the reading thread
            raise ValueError(f"{path!r} is not a regular file; read shows files only.")
        if offset < 1 or limit < 1:
            raise ValueError(f"offset and limit must be at least 1, got {offset!r} and {limit!r}.")
        data = ws.read_bytes(real)
        if is_binary(data):
            raise ValueError(
                f"{path!r} is a binary file ({len(data)} bytes); read shows text only."
            )
        lines = data.decode("utf-8", errors="replace").splitlines()
        chosen = lines[offset - 1 : offset - 1 + limit]
        out = []
        for number, line in enumerate(chosen, start=offset):
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + "… [line truncated]"
            out.append(f"{number:>6}\t{line}")
        if offset - 1 + limit < len(lines):
            out.append(f"… {len(lines) - (offset - 1 + limit)} more lines (use offset/limit)")
        return "\n".join(out)

    @tool(
        permission="workspace_write",
        categories=["files"],
        capabilities=["write_file"],
        eager=True,
        summary="Writing {path}",
    )
    def write(path: str, content: str, *, ctx: ToolContext) -> str:
        """Write a text file in the workspace (created with its folders, or replaced).

        Args:
            path: File path, relative to the workspace root.
            content: The complete new content.
        """
        real = ws.resolve(path)
        refuse_protected(real, registry, path)
        _refuse_watched_folder(registry, ws, real, ctx)
        if real.is_dir():
            raise IsADirectoryError(f"{path!r} is a folder; give a file path.")
        data = content.encode("utf-8")
        ws.write_bytes(real, data)
        return f"Wrote {len(data)} bytes to {ws.relative(real)}"

    @tool(
        permission="workspace_write",
        categories=["files"],
        capabilities=["edit_file"],
        eager=True,
        summary="Editing {path}",
    )
    def edit(
        path: str, old_string: str, new_string: str, replace_all: bool = False, *, ctx: ToolContext
    ) -> str:
        """Replace text in a file of the workspace.

        `old_string` must occur exactly once unless `replace_all` is true; include more
        surrounding text to make it unique.

        Args:
            path: File path, relative to the workspace root.
            old_string: The exact text to replace.
            new_string: The text to put instead (must differ).
            replace_all: Replace every occurrence instead of exactly one.
        """
        real = ws.resolve(path)
        refuse_protected(real, registry, path)
        _refuse_watched_folder(registry, ws, real, ctx)
        if not real.is_file():
            raise FileNotFoundError(f"No file {path!r} in the workspace; create it with `write`.")
        if old_string == new_string:
            raise ValueError("old_string and new_string are the same; nothing would change.")
        if not old_string:
            raise ValueError("old_string is empty; give the exact text to replace.")
        text = ws.read_bytes(real).decode("utf-8")
        count = text.count(old_string)
        if count == 0:
            raise ValueError(
                f"old_string was not found in {path!r}; read the file and copy "
                "the text exactly (whitespace included)."
            )
        if count > 1 and not replace_all:
            raise ValueError(
                f"old_string occurs {count} times in {path!r}; add surrounding "
                "text to make it unique, or pass replace_all=true."
            )
        new_text = text.replace(old_string, new_string, -1 if replace_all else 1)
        ws.write_bytes(real, new_text.encode("utf-8"))
        done = count if replace_all else 1
        return f"Replaced {done} occurrence{'s' if done != 1 else ''} in {ws.relative(real)}"

    @tool(
        permission="read_only",
        categories=["files"],
        capabilities=["list_files"],
        eager=True,
        summary="Listing {path}",
    )
    def ls(path: str = ".") -> list[str]:
        """List a folder of the workspace (folders end with '/').

        Args:
            path: Folder path, relative to the workspace root.
        """
        real = ws.resolve(path)
        if not real.is_dir():
            raise NotADirectoryError(f"{path!r} is not a folder of the workspace.")
        return sorted(
            p.name + ("/" if p.is_dir() else "")
            for p in real.iterdir()
            if p.name != ".ipynb_checkpoints"  # Jupyter's autosaves, not the user's files
        )

    @tool(
        permission="read_only",
        categories=["files"],
        capabilities=["find_files"],
        eager=True,
        summary="Finding files matching {pattern} in {path}",
    )
    def glob(pattern: str, path: str = ".") -> list[str]:
        """Find files of the workspace by glob pattern (e.g. '**/*.py'), sorted by name.

        Args:
            pattern: Glob pattern relative to `path`; '**' matches any folders.
            path: Folder to search in, relative to the workspace root.
        """
        _check_glob_pattern(pattern)
        base = ws.resolve(path)
        if not base.is_dir():
            raise NotADirectoryError(f"{path!r} is not a folder of the workspace.")
        found: list[str] = []
        # Skipped folders (.git, .venv, .ipynb_checkpoints, ...) only when the pattern does
        # not name them itself.
        skipped = {d for d in SKIP_DIRS if d not in pattern}
        for match in base.glob(pattern):
            if not ws.inside(match):  # a symlink inside pointing out
                continue
            if skipped.intersection(match.relative_to(base).parts):
                continue
            found.append(
                str(match.relative_to(ws.root))
                if match.is_relative_to(ws.root)
                else ws.relative(match)
            )
            if len(found) >= MAX_GLOB_RESULTS:
                break
        return sorted(found)

    return [
        Tool.from_function(f, source="builtin", source_kind="builtin")
        for f in (read, write, edit, ls, glob)
    ]
