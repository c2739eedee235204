"""One human-readable line per call: "Calculating: 2 add 3".

A tool declares it with ``@tool(summary="Calculating: {a} {operation} {b}")`` (a format
string over the call's arguments, defaults filled in) or ``summary=`` a function called with
the arguments as keyword arguments (those it takes, unless it takes ``**kwargs``) that
returns the line. Tools without one (and a template or function that fails on these
arguments) get :func:`default_summary`: the name and the arguments given, short.
Faces show the line through :attr:`ToolResult.summary
<nexus_jupyter.core.tools.result.ToolResult.summary>`, with secrets masked.
"""

from __future__ import annotations

import functools
import inspect
import string
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "SummarySpec",
    "check_summary",
    "default_summary",
    "describe_call",
    "schema_defaults",
]

#: what ``@tool(summary=...)`` takes
SummarySpec = str | Callable[..., str]
_MAX = 160


def check_summary(summary: Any) -> SummarySpec | None:
    """``summary`` if it is a format string with valid syntax or a function, else raises."""
    from ..errors import ToolDefinitionError

    if summary is None or callable(summary):
        return summary
    if not isinstance(summary, str):
        raise ToolDefinitionError(
            f"@tool(summary=...) takes a format string or a function, got {summary!r}."
        )
    try:
        list(string.Formatter().parse(summary))
    except ValueError as exc:
        raise ToolDefinitionError(
            f"@tool(summary={summary!r}) is not a format string: {exc}."
        ) from None
    return summary


def _short(value: Any, width: int = 40) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def default_summary(name: str, arguments: Mapping[str, Any]) -> str:
    """``name(a=2, operation='add', b=3)``, each value and the whole line kept short."""
    parts = [f"{k}={_short(repr(v) if isinstance(v, str) else v)}" for k, v in arguments.items()]
    line = f"{name}({', '.join(parts)})"
    return line if len(line) <= _MAX else line[: _MAX - 1] + "…"


class _Missing(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "?"


@functools.lru_cache(maxsize=512)
def _keywords(fn: Callable[..., str]) -> frozenset[str] | None:
    """The argument names ``fn`` takes by keyword (``None``: any, it takes ``**kwargs``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(
        p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )


def schema_defaults(input_schema: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters' defaults an input schema declares: what a call that leaves them out
    gets, and so what its summary shows."""
    properties = input_schema.get("properties") or {}
    return {
        k: p["default"] for k, p in properties.items() if isinstance(p, Mapping) and "default" in p
    }


def describe_call(
    name: str,
    summary: SummarySpec | None,
    arguments: Mapping[str, Any] | None,
    mask: Callable[[str], str] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> str:
    """The one-line description of a call of tool ``name`` with ``arguments`` (the
    parameters' ``defaults`` fill in what the call left out, for a template or function)."""
    args = dict(arguments or {})
    filled = {**(defaults or {}), **args}
    line: str | None = None
    try:
        if isinstance(summary, str):
            line = summary.format_map(_Missing(filled))
        elif summary is not None:
            takes = _keywords(summary)
            given = filled if takes is None else {k: v for k, v in filled.items() if k in takes}
            line = str(summary(**given))
    except Exception:
        line = None  # a summary must never break a call or its display
    if not line:
        line = default_summary(name, args)
    line = " ".join(line.split())
    if len(line) > _MAX:
        line = line[: _MAX - 1] + "…"
    return mask(line) if mask is not None else line
