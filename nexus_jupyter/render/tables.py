"""HTML tables that read as lists: every cell left-aligned and padded.

JupyterLab's stylesheet right-aligns the cells of tables in outputs (meant for numbers in
DataFrames); a table of tool names and descriptions reads left to right. Only an inline
style on each cell beats that rule, so tables get it here, in one place.
"""

from __future__ import annotations

import re

__all__ = ["left_aligned"]

_CELL = re.compile(r"<(td|th)(?=[\s>])( style='([^']*)')?")
_CELL_STYLE = "text-align:left;vertical-align:top;padding:2px 8px"


def left_aligned(table: str) -> str:
    """``table`` (HTML) with every ``<td>``/``<th>`` left-aligned and padded; a cell's own
    style (a color) is kept and wins.

    >>> left_aligned("<table><tr><th>a</th><td style='color:red'>b</td></tr></table>")
    "<table><tr><th style='text-align:left;vertical-align:top;padding:2px 8px'>a</th><td style='text-align:left;vertical-align:top;padding:2px 8px;color:red'>b</td></tr></table>"
    """

    def style(match: re.Match[str]) -> str:
        own = match.group(3)
        return f"<{match.group(1)} style='{_CELL_STYLE}{';' + own if own else ''}'"

    return _CELL.sub(style, table)
