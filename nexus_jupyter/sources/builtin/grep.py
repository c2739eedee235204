"""``grep``: search file contents of the workspace by regular expression.

Matching runs on a linear-time engine (:mod:`.grep_engines`: ripgrep, else google-re2), with
a time cap and a cap on results, so a pattern such as ``(a+)+$`` answers at once instead of
holding the server.
"""

from __future__ import annotations

from typing import Literal

from ...core.tools.context import ToolContext
from ...core.tools.decorator import tool
from ...core.tools.tool import Tool
from .files import MAX_LINE_CHARS
from .grep_engines import SEARCH_TIMEOUT_S, SearchRequest, check_pattern, search_files
from .paths import Workspace

__all__ = ["MAX_HEAD_LIMIT", "grep_tool"]

MAX_HEAD_LIMIT = 5000


def grep_tool(ws: Workspace) -> Tool:
    """The ``grep`` tool bound to workspace ``ws``."""

    @tool(
        permission="read_only",
        categories=["files", "search"],
        capabilities=["search_file_contents"],
        eager=True,
        summary="Searching {path} for {pattern!r}",
    )
    def grep(
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        output_mode: Literal["content", "files_with_matches", "count"] = "files_with_matches",
        context: int = 0,
        case_insensitive: bool = False,
        head_limit: int = 200,
        *,
        ctx: ToolContext,
    ) -> str | list[str] | dict[str, int]:
        """Search file contents of the workspace with a regular expression (RE2 syntax: like
        Python's, without backreferences and lookaround).

        Args:
            pattern: Regular expression to look for, line by line.
            path: File or folder to search, relative to the workspace root.
            glob: Only search files whose name or relative path matches (e.g. '*.py').
            output_mode: 'content' (matching lines as file:line:text), 'files_with_matches'
                (file paths) or 'count' (matches per file).
            context: Lines of context before and after each match ('content' mode).
            case_insensitive: Ignore case.
            head_limit: Maximum number of lines, files or counts returned (at most 5000).
        """
        check_pattern(pattern)
        if glob is not None:
            check_pattern(glob, "glob")
        if not 0 <= context <= 100 or not 1 <= head_limit <= MAX_HEAD_LIMIT:
            raise ValueError(
                f"context must be 0 to 100 and head_limit 1 to {MAX_HEAD_LIMIT}, "
                f"got {context!r}, {head_limit!r}."
            )
        base = ws.resolve(path)
        if not base.exists():
            raise FileNotFoundError(f"No file or folder {path!r} in the workspace.")
        request = SearchRequest(
            pattern,
            base,
            glob=glob,
            case_insensitive=case_insensitive,
            context=context if output_mode == "content" else 0,
            on_cancel=ctx.cancellation.on_cancel,
        )
        lines_out: list[str] = []
        files_out: list[str] = []
        counts: dict[str, int] = {}
        found = search_files(ws, request)
        try:
            for hits in found:
                if output_mode == "files_with_matches":
                    files_out.append(hits.rel)
                    if len(files_out) >= head_limit:
                        break
                elif output_mode == "count":
                    counts[hits.rel] = sum(1 for _, _, is_match in hits.lines if is_match)
                    if len(counts) >= head_limit:
                        break
                else:
                    for number, text, is_match in hits.lines:
                        if len(text) > MAX_LINE_CHARS:
                            text = text[:MAX_LINE_CHARS] + "… [line truncated]"
                        sep = ":" if is_match else "-"
                        lines_out.append(f"{hits.rel}{sep}{number}{sep}{text}")
                    if len(lines_out) >= head_limit:
                        break
        finally:
            found.close()  # stops the engine (kills ripgrep) when enough was read
        stopped = (
            [f"… [search stopped after {SEARCH_TIMEOUT_S:g} s; narrow `path` or `glob`]"]
            if request.timed_out
            else []
        )
        if output_mode == "content":
            return "\n".join(lines_out[:head_limit] + stopped)
        if output_mode == "count":
            return counts
        return files_out + stopped

    return Tool.from_function(grep, source="builtin", source_kind="builtin")
