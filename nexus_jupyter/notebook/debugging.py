"""Post-mortem debugging of a failed tool call: ``%debug`` after ``%tool call`` opens in the
tool's code, and tracebacks name kernel cells the way IPython does (``Cell In[3]``).

A tool's failure is a result, not an exception, so IPython never sees it; this module hands
the exception to the places ``%debug`` reads (``sys.last_*``), cut so that the debugger
starts at the tool's frame instead of inside our call machinery.
"""

from __future__ import annotations

import sys
from typing import Any

from ..core.tools.tool_traceback import add_code_namer, remove_code_namer, tool_traceback

__all__ = ["keep_for_debug", "name_cells_of", "stop_naming_cells"]

_namer: Any = None


def keep_for_debug(exc: BaseException, shell: Any = None) -> None:
    """Make ``exc`` the exception ``%debug`` opens, with the tool's frames only (the
    debugger opens where it raised; ``up`` stops at the tool's first frame)."""
    trimmed = tool_traceback(exc)
    exc.__traceback__ = trimmed  # IPython's debugger reads the exception's own traceback
    sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, trimmed
    if sys.version_info >= (3, 12):
        sys.last_exc = exc
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    inspector = getattr(shell, "InteractiveTB", None)
    if inspector is not None and hasattr(inspector, "tb"):
        del inspector.tb  # a traceback left from an earlier error would win over ours


def name_cells_of(shell: Any) -> None:
    """Name frames of ``shell``'s cells ``Cell In[N]`` in tool tracebacks."""
    global _namer
    stop_naming_cells()
    compiler = getattr(shell, "compile", None)
    if compiler is None or not hasattr(compiler, "format_code_name"):
        return

    def cell_label(filename: str) -> str | None:
        named = compiler.format_code_name(filename)
        return f"{named[0]} {named[1]}" if named else None

    _namer = cell_label
    add_code_namer(cell_label)


def stop_naming_cells() -> None:
    global _namer
    if _namer is not None:
        remove_code_namer(_namer)
        _namer = None
