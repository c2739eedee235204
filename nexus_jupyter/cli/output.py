"""Where ``nexus-tools`` writes: its own output (results, tables, JSON) on stdout, and
everything a tool prints on stderr, so that ``--json`` output stays parseable.

While a command runs inside :func:`tools_print_to_stderr`, ``sys.stdout`` is ``sys.stderr``
(a tool file's prints at import and a tool's prints during a call), and file descriptor 1
is a copy of descriptor 2 (what a program the tool starts writes, C code). The command's
own output goes to :func:`stdout`, the real standard output. Tool files run in worker
processes print to stderr already (:mod:`nexus_jupyter.sources.worker`), as under
``nexus-tools serve``.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, TextIO, cast

__all__ = ["masked_output", "stdout", "tools_print_to_stderr"]

#: The command's own output while :func:`tools_print_to_stderr` is active.
_own: TextIO | None = None
#: How many masking streams taken out of ``sys.stdout``/``sys.stderr`` stay referenced.
RETIRED_KEPT = 64
#: The masking streams :func:`masked_output` put in ``sys.stdout``/``sys.stderr``, kept after
#: they are taken out: a tool still running in a thread (a Ctrl-C leaves it running) may be
#: inside ``print()``, which holds ``sys.stdout`` without a reference of its own between the
#: write and the flush (CPython issue 130163); freeing the stream under it crashes the
#: process. Only a ``print()`` already running when its stream was taken out can hold it, so
#: the streams of the last :data:`RETIRED_KEPT` / 2 commands are kept, not every command's (a
#: process that runs ``main()`` over and over, a test suite or a notebook, stays bounded).
_retired: deque[Any] = deque(maxlen=RETIRED_KEPT)


def stdout() -> TextIO:
    """The stream for the command's own output: the real stdout, even while what tools
    print goes to stderr."""
    return _own if _own is not None else sys.stdout


def _real_stdout_copy(stream: TextIO) -> TextIO | None:
    """A new text stream on a copy of descriptor 1, when ``stream`` writes to it (not when
    it is a test's capture, say)."""
    try:
        if stream.fileno() != 1:
            return None
        copy = os.dup(1)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return open(
        copy,
        "w",
        encoding=getattr(stream, "encoding", None) or "utf-8",
        errors=getattr(stream, "errors", None) or "strict",
        buffering=1 if getattr(stream, "line_buffering", False) else -1,
        closefd=True,
    )


@contextlib.contextmanager
def tools_print_to_stderr() -> Iterator[None]:
    """Within: ``print`` (and descriptor 1) go to stderr; :func:`stdout` is the real
    stdout. Nested uses change nothing."""
    global _own
    if _own is not None:
        yield
        return
    original = sys.stdout
    if original is None:  # stdout closed (`>&-`): nothing to keep apart
        yield
        return
    with contextlib.suppress(OSError, ValueError):
        original.flush()
    copy = _real_stdout_copy(original)
    _own = copy if copy is not None else original
    sys.stdout = sys.stderr
    try:
        if copy is not None:  # programs a tool starts write to descriptor 1: stderr too
            os.dup2(sys.stderr.fileno() if _has_fileno(sys.stderr) else 2, 1)
        yield
    finally:
        own, _own = _own, None
        sys.stdout = original
        with contextlib.suppress(OSError, ValueError):  # a closed pipe (`| head`)
            if own is not None:
                own.flush()
        if copy is not None:
            with contextlib.suppress(OSError, ValueError):
                original.flush()  # what was written to it meanwhile went to stderr
            os.dup2(copy.fileno(), 1)
            with contextlib.suppress(OSError, ValueError):
                copy.close()


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
    return True


@contextlib.contextmanager
def masked_output(mask: Callable[[str], str] | None) -> Iterator[None]:
    """Within: what the command and any tool print has stored secrets masked (``mask``),
    like the results it shows."""
    global _own
    if mask is None:
        yield
        return
    from ..core.policy.masking import MaskingStream

    out, err, own = sys.stdout, sys.stderr, _own
    sys.stdout, sys.stderr = MaskingStream(out, mask), MaskingStream(err, mask)
    if own is not None:
        _own = cast(TextIO, MaskingStream(own, mask))
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr, _own):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
        _retired.extend((sys.stdout, sys.stderr))
        sys.stdout, sys.stderr = out, err
        if own is not None:
            _own = own
