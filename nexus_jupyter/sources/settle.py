"""When a changed tool file is a finished save, and when it is a save still in progress.

The watcher publishes a file only once it looks whole. A changed file is *not yet* loaded
(:func:`mid_save_reason` says why) while:

- some process still has it open for writing (a writer that saves in chunks, however far
  apart: probed with a Linux read lease, which the kernel refuses while any writer holds
  the file; elsewhere this check is skipped);
- it was written less than :data:`SETTLE_MS` ago and ends mid-line;
- it was written less than :data:`PARSE_SETTLE_MS` ago and does not parse: the rest of the
  save is most likely on its way (after that, it is loaded and its syntax error shown);
- it was written less than :data:`DROP_SETTLE_MS` ago and lacks a top-level function the
  last loaded version defined: a writer that closed the file between two chunks, each
  whole lines of valid Python, looks like this (a save that really removes a function is
  published after that pause).

The watcher retries such files every :data:`SETTLE_MS` and loads them as they are after
:data:`MAX_SETTLE_S` (a file someone keeps open is still published eventually).

>>> mid_save_reason(Path("/nonexistent.py"), b"def f(:\\n", time.time_ns())
'it does not parse yet'
"""

from __future__ import annotations

import ast
import errno
import os
import re
import signal
import time
import warnings
from pathlib import Path

__all__ = [
    "DROP_SETTLE_MS",
    "MAX_SETTLE_S",
    "PARSE_SETTLE_MS",
    "SETTLE_MS",
    "mid_save_reason",
    "open_for_writing",
    "top_level_functions",
]

#: How long a file written moments ago that ends mid-line is given to be finished, and how
#: often the watcher re-checks files that look mid-save.
SETTLE_MS = 40
#: How long after a change a file that does not parse is still treated as a save in progress.
PARSE_SETTLE_MS = 1000
#: How long after a change a file that lost a top-level function is held back. 500 ms let a
#: writer that pauses 300 ms between two valid halves publish its first half once, on two
#: busy cores (the test's writer woke late); a save that really removes a function waits this.
DROP_SETTLE_MS = 1000
#: The longest a file is held back; then it is loaded as it is.
MAX_SETTLE_S = 10.0

_TOP_LEVEL_DEF = re.compile(rb"^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)", re.MULTILINE)

_F_SETSIG = 10  # Linux fcntl command (not exported by Python's fcntl module)


def open_for_writing(path: Path) -> bool:
    """Whether a process has ``path`` open for writing (Linux; ``False`` where unknown).

    A read lease cannot be taken while any writer holds the file (``EAGAIN``). It is
    released at once; the lease-break signal is moved to ``SIGURG`` (ignored by default),
    because the default ``SIGIO`` would end this process if a writer opened the file in
    that instant.
    """
    try:
        import fcntl
    except ImportError:
        return False
    lease = getattr(fcntl, "F_SETLEASE", None)
    if lease is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.fcntl(fd, _F_SETSIG, int(signal.SIGURG))
        fcntl.fcntl(fd, lease, fcntl.F_RDLCK)
    except OSError as exc:
        return exc.errno == errno.EAGAIN  # EACCES (not our file), EINVAL (a network fs): unknown
    else:
        fcntl.fcntl(fd, lease, fcntl.F_UNLCK)
        return False
    finally:
        os.close(fd)


def _parses(raw: bytes) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings are the loader's to report
            ast.parse(raw)
    except (SyntaxError, ValueError):
        return False
    return True


def top_level_functions(raw: bytes) -> frozenset[str]:
    """The names of the functions ``raw`` defines at the top level (by a quick scan)."""
    return frozenset(m.decode("ascii") for m in _TOP_LEVEL_DEF.findall(raw))


def mid_save_reason(
    path: Path, raw: bytes, mtime_ns: int, loaded: frozenset[str] = frozenset()
) -> str | None:
    """Why ``path`` (content ``raw``, modified at ``mtime_ns``) looks like a save in
    progress, or ``None`` when it looks whole. ``loaded``: the top-level functions of the
    version loaded last (:func:`top_level_functions`)."""
    age_ms = (time.time_ns() - mtime_ns) / 1_000_000
    if open_for_writing(path):
        return "a process still has it open for writing"
    if raw and not raw.endswith(b"\n") and age_ms < SETTLE_MS:
        return "it ends mid-line"
    if raw.strip() and age_ms < PARSE_SETTLE_MS and not _parses(raw):
        return "it does not parse yet"
    if loaded and age_ms < DROP_SETTLE_MS and not loaded <= top_level_functions(raw):
        return "it lacks functions its last version had (the rest may be on its way)"
    return None
