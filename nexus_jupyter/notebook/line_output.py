"""Every ``%tool`` line of a cell shows its output, not only the last one.

IPython shows the value of a cell's last expression; a magic on an earlier line hands its
value to a statement that drops it, and nothing appears. So the ``%tool`` magic looks at the
statement that ran it:

- a line on its own whose value Python is about to drop (an earlier line of the cell, a line
  in a loop, any line of a script run by ``ipython tour.ipy``) is displayed there and then;
- the cell's last line is left to IPython, which shows it as ``Out[N]`` (once);
- ``x = %tool call add a=1`` keeps the value and shows nothing, as any assignment does.

The statement is read from the bytecode of the frame that called ``run_line_magic``: the
instruction after the running call is ``POP_TOP`` exactly when the value is dropped. Called any
other way (from Python, through ``%time``), or where that cannot be read, the value is only
returned, as from a function.
"""

from __future__ import annotations

import sys
from types import CodeType, FrameType
from typing import Any

__all__ = ["show_if_dropped"]

_RUNNERS = ("run_line_magic", "run_cell_magic")
_MAX_DEPTH = 30  # frames between the magic and IPython's runner (a handful in practice)


def show_if_dropped(shell: Any, value: Any) -> Any:
    """Display ``value`` now if the statement that ran the magic drops it; return it."""
    if value is not None and _caller_drops_value(shell):
        from IPython.display import display

        display(value)
    return value


def _runner_codes(shell: Any) -> set[CodeType]:
    codes = set()
    for cls in type(shell).__mro__:
        for name in _RUNNERS:
            code = getattr(cls.__dict__.get(name), "__code__", None)
            if isinstance(code, CodeType):
                codes.add(code)
    return codes


def _magic_caller(shell: Any) -> FrameType | None:
    """The frame of the statement that ran the magic (the caller of ``run_line_magic``)."""
    runners = _runner_codes(shell)
    frame: FrameType | None = sys._getframe(1)
    for _ in range(_MAX_DEPTH):
        if frame is None or frame.f_code in runners:
            break
        frame = frame.f_back
    if frame is None or frame.f_code not in runners:
        return None
    while frame.f_back is not None and frame.f_back.f_code in runners:  # an override's super()
        frame = frame.f_back
    return frame.f_back


def _caller_drops_value(shell: Any) -> bool:
    import dis  # not at %load_ext

    caller = _magic_caller(shell)
    if caller is None:
        return False
    # f_lasti is the running call (or one of its inline caches): the next instruction is the
    # one that receives the value.
    after = next(
        (i.opname for i in dis.get_instructions(caller.f_code) if i.offset > caller.f_lasti),
        None,
    )
    return after == "POP_TOP"
