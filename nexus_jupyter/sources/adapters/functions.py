"""Plain Python: functions (``@tool``-marked or plain annotated) and modules of them."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ...core.tools.decorator import get_tool_meta
from ...core.tools.tool import Tool

__all__ = ["function_tool", "module_tools"]


def function_tool(fn: Callable[..., Any], *, origin: str = "") -> Tool:
    """A tool of ``fn``: its ``@tool`` options, else its name, docstring and hints."""
    return Tool.from_function(fn, source_kind="config", origin=origin or _where(fn))


def module_tools(module: ModuleType, *, origin: str = "") -> list[Tool]:
    """The tools of ``module``: its ``@tool``-marked functions when it has any, else every
    public function defined in it (not the ones it imports)."""
    defined = [
        fn
        for name, fn in vars(module).items()
        if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_")
    ]
    marked = [fn for fn in defined if get_tool_meta(fn) is not None]
    return [function_tool(fn, origin=origin or module.__name__) for fn in marked or defined]


def _where(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
