"""The traceback of a failed call, cut to the tool's own code.

A tool that raises fails inside our call machinery (the runner, ``Tool.invoke``, a worker
thread). People debugging the tool need the frames of *its* code: the cell or file and the
line that raised. :func:`tool_traceback` drops our leading frames and keeps everything from
the tool's first frame down (including libraries the tool called).

Frames are named the way the person knows the code: faces register a *code namer*
(:func:`add_code_namer`) that turns a file name into a label. The notebook face names kernel
cells ``Cell In[3]`` like IPython does; files keep their path.

>>> def boom(x: int) -> int:
...     return 1 // x
>>> try:
...     boom(0)
... except ZeroDivisionError as exc:
...     print(format_tool_traceback(exc).splitlines()[-1])
ZeroDivisionError: integer division or modulo by zero
"""

from __future__ import annotations

import linecache
import sysconfig
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

__all__ = [
    "TOLD_TRACEBACK",
    "add_code_namer",
    "format_tool_traceback",
    "has_tool_frames",
    "remove_code_namer",
    "tool_traceback",
]

#: The attribute of an exception that stands for one raised elsewhere (a tool in a worker
#: process): the tool's traceback as formatted where it ran, which its own frames here lack.
TOLD_TRACEBACK = "__nexus_traceback__"

#: Our package: frames in it are call machinery, not the tool's code.
_PACKAGE_DIR = str(Path(__file__).resolve().parents[2]) + "/"

CodeNamer = Callable[[str], "str | None"]
_namers: list[CodeNamer] = []
_namers_lock = threading.Lock()


def add_code_namer(namer: CodeNamer) -> None:
    """Name frames of some files differently: ``namer(filename)`` returns a label (``"Cell
    In[3]"``) or ``None`` for "not mine". The notebook extension adds one for its cells."""
    with _namers_lock:
        if namer not in _namers:
            _namers.append(namer)


def remove_code_namer(namer: CodeNamer) -> None:
    with _namers_lock:
        if namer in _namers:
            _namers.remove(namer)


def _is_ours(tb: TracebackType) -> bool:
    return tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR)


def tool_traceback(exc: BaseException) -> TracebackType | None:
    """``exc``'s traceback from the tool's first frame on, or the whole traceback when no
    frame is the tool's (the failure was in our code: keep everything)."""
    tb = exc.__traceback__
    first = tb
    while first is not None and _is_ours(first):
        first = first.tb_next
    return first if first is not None else tb


def has_tool_frames(exc: BaseException) -> bool:
    """Whether ``exc`` was raised through code other than ours (the tool's, a library's),
    or stands for such an exception raised elsewhere (:data:`TOLD_TRACEBACK`). A failure
    inside our own code only (a built-in tool's refusal) has no traceback worth showing to
    the tool's author."""
    if getattr(exc, TOLD_TRACEBACK, None):
        return True
    tb = exc.__traceback__
    while tb is not None:
        if not _is_ours(tb) and not _is_runtime(tb.tb_frame.f_code.co_filename):
            return True
        tb = tb.tb_next
    return False


_PATHS = sysconfig.get_paths()
_RUNTIME_DIRS = tuple({_PATHS[key] + "/" for key in ("stdlib", "platstdlib")})
_LIBRARY_DIRS = tuple({_PATHS[key] + "/" for key in ("purelib", "platlib")})


def _is_runtime(filename: str) -> bool:
    """Python's own code (the standard library, frozen modules; not the libraries installed
    beside it): a failure of ours that passed through it is still ours."""
    if filename.startswith("<frozen "):
        return True
    return filename.startswith(_RUNTIME_DIRS) and not filename.startswith(_LIBRARY_DIRS)


def _label(filename: str) -> str:
    with _namers_lock:
        namers = list(_namers)
    for namer in namers:
        try:
            label = namer(filename)
        except Exception:  # a broken namer must not hide the traceback
            label = None
        if label:
            return label
    return f'File "{filename}"'


def format_tool_traceback(exc: BaseException) -> str:
    """``exc`` as a traceback of the tool's own frames, most recent call last::

    Traceback (most recent call last):
      Cell In[3], line 4, in circle_area
        return math.pi * radius ** 2 / scale
    ZeroDivisionError: float division by zero

    An exception that carries :data:`TOLD_TRACEBACK` gives that text instead.
    """
    told = getattr(exc, TOLD_TRACEBACK, None)
    if isinstance(told, str) and told:
        return told
    lines = ["Traceback (most recent call last):"]
    for frame in traceback.extract_tb(tool_traceback(exc)):
        lines.append(f"  {_label(frame.filename)}, line {frame.lineno}, in {frame.name}")
        code = frame.line or linecache.getline(frame.filename, frame.lineno or 0).strip()
        if code:
            lines.append(f"    {code}")
    lines.extend(
        line.rstrip("\n") for line in traceback.format_exception_only(type(exc), exc) if line
    )
    return "\n".join(lines)
