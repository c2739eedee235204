"""Every ``%tool`` line of a cell shows its output, not only the last one.

IPython shows the value of a cell's last expression; a magic on an earlier line hands its
value to a statement that drops it, and nothing appears. So the ``%tool`` magic looks at the
statement that ran it:

- a line on its own whose value Python is about to drop (an earlier line of the cell, a line
  in a loop, any line of a script run by ``ipython tour.ipy``) is displayed there and then;
- a line IPython shows itself (the cell's last line, every line under
  ``ast_node_interactivity = 'all'``) is left to IPython, which shows it as ``Out[N]`` (once);
- ``x = %tool call add a=1`` keeps the value and shows nothing, as any assignment does;
- under ``ast_node_interactivity = 'none'`` a cell shows nothing it is not asked to, so a
  dropped value stays unshown; a script (which IPython runs silently, where no line is ever
  ``Out[N]``) still prints each line;
- a line ending in ``;`` shows nothing, as an expression ending in ``;`` does in IPython
  (:func:`split_silencer` takes the ``;`` off the magic's arguments). IPython reads a magic's
  name up to the first space, so a ``;`` glued to the name (``%tools;``, ``%tool;``) would
  name a magic ``tools;`` that does not exist: :func:`unglue_silencer`, an input
  transformer that runs after IPython's own, hands that ``;`` to the magic as its argument.

The statement is read from the bytecode of the frame that called ``run_line_magic``: the
instruction after the running call is ``POP_TOP`` exactly when the value is dropped, and
``PRINT_EXPR`` (``CALL_INTRINSIC_1 INTRINSIC_PRINT`` from 3.12) when IPython shows it. Called
any other way (from Python, through ``%time``), or where that cannot be read, the value is only
returned, as from a function. Each code object is disassembled once (a loop of ``%tool`` lines
reads its table, not its bytecode, on every turn).
"""

from __future__ import annotations

import re
import shlex
import sys
from bisect import bisect_right
from types import CodeType, FrameType
from typing import Any, Literal

__all__ = ["show_line_output", "split_silencer", "unglue_silencer"]

_RUNNERS = ("run_line_magic", "run_cell_magic")
_MAX_DEPTH = 30  # frames between the magic and IPython's runner (a handful in practice)

Step = Literal["drops", "prints", "keeps"]  # what the statement does with the magic's value


def split_silencer(line: str) -> tuple[str, bool]:
    """``line`` without the one trailing ``;`` that asks IPython to show nothing, and whether
    it had one.

    A ``;`` that belongs to an argument stays: one escaped as ``\\;``, or one inside a quote
    left open (the line is then refused for its quotes, as written).

    >>> split_silencer('call add a=1 b=2;')
    ('call add a=1 b=2', True)
    >>> split_silencer('call shout text="a;"')
    ('call shout text="a;"', False)
    """
    body = line.rstrip()
    if not body.endswith(";"):
        return line, False
    head = body[:-1]
    if (len(head) - len(head.rstrip("\\"))) % 2:  # `\;`: a literal semicolon
        return line, False
    try:
        shlex.split(head)
    except ValueError:  # the `;` is inside an open quote
        return line, False
    return head, True


#: What IPython makes of ``%tools;`` and ``%tool;`` (the ``;`` read as part of the name).
_GLUED = re.compile(r"""run_line_magic\((['"])(tools?);\1, (['"])\3\)""")


def unglue_silencer(lines: list[str]) -> list[str]:
    """IPython's transformed cell with ``%tools;`` and ``%tool;`` run as ``%tools ;`` and
    ``%tool ;``: the magic, silenced (an entry of ``shell.input_transformers_post``).

    >>> unglue_silencer(["get_ipython().run_line_magic('tools;', '')\\n"])
    ["get_ipython().run_line_magic('tools', ';')\\n"]
    """
    if not any("run_line_magic(" in line for line in lines):
        return lines
    return [_GLUED.sub(r"run_line_magic(\1\2\1, \3;\3)", line) for line in lines]


def show_line_output(shell: Any, value: Any, *, silenced: bool = False) -> Any:
    """What the ``%tool`` line magic hands back: ``value``, displayed now if the statement
    that ran the magic drops it; with ``silenced`` (the line ended in ``;``) nothing is shown,
    here or as ``Out[N]``."""
    step = _next_step(shell)
    if silenced:
        return None if step == "prints" else value
    if value is not None and step == "drops" and _shows_dropped_values(shell):
        from IPython.display import display

        display(value)
    return value


def _shows_dropped_values(shell: Any) -> bool:
    if getattr(shell, "ast_node_interactivity", None) != "none":
        return True
    # IPython runs a script (`ipython tour.ipy`, `%run tour.ipy`) silently: nothing there is
    # Out[N], whatever the setting, so each line prints as it runs.
    result = getattr(getattr(shell, "displayhook", None), "exec_result", None)
    return bool(getattr(getattr(result, "info", None), "silent", False))


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


def _next_step(shell: Any) -> Step:
    caller = _magic_caller(shell)
    if caller is None:
        return "keeps"
    offsets, steps = _steps_of(caller.f_code)
    # f_lasti is the running call (or one of its inline caches): the next instruction is the
    # one that receives the value.
    at = bisect_right(offsets, caller.f_lasti)
    return steps[at] if at < len(steps) else "keeps"


_TABLES: dict[int, tuple[CodeType, list[int], list[Step]]] = {}
_TABLES_MAX = 64  # code objects remembered: the cells and loops running now, a few past ones


def _steps_of(code: CodeType) -> tuple[list[int], list[Step]]:
    """Each instruction's offset and what it does with the value before it, read once per
    code object (keyed by identity: the entry holds the code, so its id is not reused)."""
    entry = _TABLES.get(id(code))
    if entry is None or entry[0] is not code:
        import dis  # not at %load_ext

        instructions = list(dis.get_instructions(code))
        entry = (code, [i.offset for i in instructions], [_step(i) for i in instructions])
        while len(_TABLES) >= _TABLES_MAX:
            _TABLES.pop(next(iter(_TABLES)))
        _TABLES[id(code)] = entry
    return entry[1], entry[2]


def _step(instruction: Any) -> Step:
    if instruction.opname == "POP_TOP":
        return "drops"
    if instruction.opname == "PRINT_EXPR" or (
        instruction.opname == "CALL_INTRINSIC_1" and instruction.argrepr == "INTRINSIC_PRINT"
    ):
        return "prints"
    return "keeps"
