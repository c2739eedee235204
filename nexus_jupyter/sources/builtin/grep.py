"""``grep``: search file contents of the workspace by regular expression."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from ...core.tools.decorator import tool
from ...core.tools.tool import Tool
from .files import is_binary
from .paths import SKIP_DIRS, Workspace

__all__ = ["grep_tool"]

MAX_FILE_BYTES = 5_000_000


def _files(ws: Workspace, base: Path, glob: str | None) -> Iterator[Path]:
    if base.is_file():
        yield base
        return
    for folder, dirs, names in os.walk(base, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            path = Path(folder) / name
            rel = path.relative_to(base).as_posix()
            if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(rel, glob)):
                continue
            if ws.inside(path) and path.is_file():  # a symlink pointing out is skipped
                yield path


def grep_tool(ws: Workspace) -> Tool:
    """The ``grep`` tool bound to workspace ``ws``."""

    @tool(
        permission="read_only",
        categories=["files", "search"],
        capabilities=["search_file_contents"],
        eager=True,
    )
    def grep(
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        output_mode: Literal["content", "files_with_matches", "count"] = "files_with_matches",
        context: int = 0,
        case_insensitive: bool = False,
        head_limit: int = 200,
    ) -> str | list[str] | dict[str, int]:
        """Search file contents of the workspace with a regular expression (Python syntax).

        Args:
            pattern: Regular expression to look for, line by line.
            path: File or folder to search, relative to the workspace root.
            glob: Only search files whose name or relative path matches (e.g. '*.py').
            output_mode: 'content' (matching lines as file:line:text), 'files_with_matches'
                (file paths) or 'count' (matches per file).
            context: Lines of context before and after each match ('content' mode).
            case_insensitive: Ignore case.
            head_limit: Maximum number of lines, files or counts returned.
        """
        try:
            regex = re.compile(pattern, re.IGNORECASE if case_insensitive else 0)
        except re.error as exc:
            raise ValueError(f"Invalid regular expression {pattern!r}: {exc}.") from None
        if context < 0 or head_limit < 1:
            raise ValueError(
                f"context must be >= 0 and head_limit >= 1, got {context!r}, {head_limit!r}."
            )
        base = ws.resolve(path)
        if not base.exists():
            raise FileNotFoundError(f"No file or folder {path!r} in the workspace.")
        lines_out: list[str] = []
        files_out: list[str] = []
        counts: dict[str, int] = {}
        for file in _files(ws, base, glob):
            try:
                if file.stat().st_size > MAX_FILE_BYTES:
                    continue
                data = ws.read_bytes(file)
            except OSError:
                continue
            if is_binary(data):
                continue
            rel = ws.relative(file)
            lines = data.decode("utf-8", errors="replace").splitlines()
            hits = [i for i, line in enumerate(lines) if regex.search(line)]
            if not hits:
                continue
            if output_mode == "files_with_matches":
                files_out.append(rel)
                if len(files_out) >= head_limit:
                    break
            elif output_mode == "count":
                counts[rel] = len(hits)
                if len(counts) >= head_limit:
                    break
            else:
                shown: set[int] = set()
                hit_set = set(hits)
                for i in hits:
                    for j in range(max(0, i - context), min(len(lines), i + context + 1)):
                        if j not in shown:
                            shown.add(j)
                            sep = ":" if j in hit_set else "-"
                            lines_out.append(f"{rel}{sep}{j + 1}{sep}{lines[j]}")
                if len(lines_out) >= head_limit:
                    break
        if output_mode == "content":
            return "\n".join(lines_out[:head_limit])
        if output_mode == "count":
            return counts
        return files_out

    return Tool.from_function(grep, source="builtin", source_kind="builtin")
