"""Linear-time matching for the ``grep`` tool, so no pattern can hold a server.

Python's ``re`` backtracks: ``(a+)+$`` on a line of 40 ``a`` and a ``!`` runs for hours and
holds the GIL meanwhile, which froze every thread of the process that ran it. The engines
here never backtrack:

- **ripgrep** (``rg`` on ``PATH``; Debian's ``ripgrep``): a separate process with Rust's
  finite-automaton regex engine, killed at the deadline, on cancel, or once enough results
  were read;
- **google-re2** (``import re2``) when ripgrep is absent: RE2 in this process, checked
  against the deadline between lines.

Both take RE2-style syntax, a subset of Python's: no backreferences, no lookaround. Every
search also has a time cap (:data:`SEARCH_TIMEOUT_S`) and patterns a length cap
(:data:`MAX_PATTERN_CHARS`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path

from .paths import SKIP_DIRS, Workspace

__all__ = [
    "MAX_PATTERN_CHARS",
    "SEARCH_TIMEOUT_S",
    "FileHits",
    "SearchRequest",
    "check_pattern",
    "engine_name",
    "search_files",
]

MAX_PATTERN_CHARS = 1000
SEARCH_TIMEOUT_S = 20.0
MAX_FILE_BYTES = 5_000_000
_UNSUPPORTED = "backreferences and lookaround are not supported (a linear-time engine runs it)"


@dataclass(slots=True)
class FileHits:
    """One file's matching lines (and context lines): ``(number, text, is_match)``."""

    rel: str
    lines: list[tuple[int, str, bool]] = field(default_factory=list)


@dataclass(slots=True)
class SearchRequest:
    pattern: str
    base: Path
    glob: str | None = None
    case_insensitive: bool = False
    context: int = 0
    timeout: float = SEARCH_TIMEOUT_S
    on_cancel: Callable[[Callable[[], object]], None] | None = None
    timed_out: bool = False


def check_pattern(pattern: str, what: str = "pattern") -> None:
    """Refuse patterns too long to be a search (they are how regex bombs are built)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(
            f"The {what} is {len(pattern)} characters long; the limit is {MAX_PATTERN_CHARS}. "
            "Search for a shorter expression."
        )


def engine_name() -> str:
    """``"ripgrep"`` when ``rg`` is on PATH, else ``"re2"``."""
    return "ripgrep" if shutil.which("rg") else "re2"


def search_files(ws: Workspace, request: SearchRequest) -> Generator[FileHits, None, None]:
    """The files under ``request.base`` with a matching line, in path order. Stop iterating
    early to stop the search; ``request.timed_out`` says whether the time cap cut it."""
    rg = shutil.which("rg")
    if rg is not None:
        return _ripgrep(rg, ws, request)
    return _re2(ws, request)


# -- ripgrep ------------------------------------------------------------------------------


def _rg_command(rg: str, request: SearchRequest) -> list[str]:
    command = [rg, "--json", "--no-config", "--hidden", "--no-ignore", "--sort", "path"]
    command += ["--max-filesize", str(MAX_FILE_BYTES), "--context", str(request.context)]
    if request.case_insensitive:
        command.append("--ignore-case")
    if request.glob:
        command += ["--glob", request.glob]
    for skipped in SKIP_DIRS:
        command += ["--glob", f"!{skipped}/"]
    return [*command, "--regexp", request.pattern, "--", str(request.base)]


def _ripgrep(rg: str, ws: Workspace, request: SearchRequest) -> Generator[FileHits, None, None]:
    proc = subprocess.Popen(
        _rg_command(rg, request),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        cwd=ws.root,
    )
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        proc.kill()

    timer = threading.Timer(request.timeout, stop)
    timer.daemon = True
    timer.start()
    if request.on_cancel is not None:
        request.on_cancel(proc.kill)
    assert proc.stdout is not None
    assert proc.stderr is not None
    current: FileHits | None = None
    try:
        for raw in proc.stdout:
            event = json.loads(raw)
            kind, data = event.get("type"), event.get("data", {})
            if kind == "begin":
                path = data.get("path", {}).get("text")
                current = FileHits(ws.relative(Path(path))) if path is not None else None
            elif kind in ("match", "context") and current is not None:
                text = data.get("lines", {}).get("text")
                if text is not None:
                    line = text.rstrip("\n").rstrip("\r")
                    current.lines.append((data["line_number"], line, kind == "match"))
            elif kind == "end" and current is not None:
                if any(is_match for _, _, is_match in current.lines):
                    yield current
                current = None
        proc.wait()
        request.timed_out = fired.is_set()
        if proc.returncode == 2 and not fired.is_set():
            message = proc.stderr.read().decode("utf-8", errors="replace").strip()
            if "regex parse error" in message or "error parsing" in message:
                raise ValueError(
                    f"Invalid regular expression {request.pattern!r}: "
                    f"{message.splitlines()[-1].strip()} ({_UNSUPPORTED})."
                )
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


# -- google-re2 ---------------------------------------------------------------------------


def _compile_re2(request: SearchRequest) -> object:
    import re2  # type: ignore[import-not-found,unused-ignore]

    options = re2.Options()
    options.case_sensitive = not request.case_insensitive
    try:
        return re2.compile(request.pattern, options)
    except re2.error as exc:
        raise ValueError(
            f"Invalid regular expression {request.pattern!r}: {exc} ({_UNSUPPORTED})."
        ) from None


def _walk(ws: Workspace, base: Path, glob: str | None) -> Generator[Path, None, None]:
    import fnmatch

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


def _re2(ws: Workspace, request: SearchRequest) -> Generator[FileHits, None, None]:
    regex = _compile_re2(request)
    search = regex.search  # type: ignore[attr-defined]
    cancelled = threading.Event()
    if request.on_cancel is not None:
        request.on_cancel(cancelled.set)
    deadline = time.monotonic() + request.timeout
    for file in _walk(ws, request.base, request.glob):
        if time.monotonic() > deadline or cancelled.is_set():
            request.timed_out = not cancelled.is_set()
            return
        try:
            if file.stat().st_size > MAX_FILE_BYTES:
                continue
            data = ws.read_bytes(file)
        except OSError:
            continue
        if b"\x00" in data[:8192]:
            continue
        lines = data.decode("utf-8", errors="replace").splitlines()
        hits = [i for i, line in enumerate(lines) if search(line)]
        if not hits:
            continue
        found = FileHits(ws.relative(file))
        shown: set[int] = set()
        hit_set = set(hits)
        for i in hits:
            for j in range(max(0, i - request.context), min(len(lines), i + request.context + 1)):
                if j not in shown:
                    shown.add(j)
                    found.lines.append((j + 1, lines[j], j in hit_set))
        yield found
