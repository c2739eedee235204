"""Turning the tools people already have into registry tools.

=================  ==============================================  ======================
library            what is accepted                                module
=================  ==============================================  ======================
(none)             functions, ``Tool``\\ s, modules, lists, dicts  :mod:`.functions`
langchain-core     ``BaseTool`` (``@tool``, ``StructuredTool``)    :mod:`.langchain`
pydantic-ai        ``Tool``, ``FunctionToolset``                   :mod:`.pydantic_ai`
smolagents         ``Tool`` (``@tool``, subclasses)                :mod:`.smolagents`
openai-agents      ``FunctionTool`` (``@function_tool``)           :mod:`.openai_agents`
=================  ==============================================  ======================

Each adapter keeps the tool's name, description and JSON schema, runs sync and async tools,
and reads the library's own approval flag into ``ToolSpec.needs_approval``, which no
setting makes laxer. An adapter module is imported only when an object of its library is
met (recognised by its class's module name, so the library is not imported to ask).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from ...core.errors import ToolDefinitionError
from ...core.tools.tool import Tool

__all__ = ["tools_from"]

#: top-level package of a class -> the adapter module for it
_ADAPTERS: dict[str, str] = {
    "langchain_core": "langchain",
    "langchain": "langchain",
    "pydantic_ai": "pydantic_ai",
    "smolagents": "smolagents",
    "agents": "openai_agents",
}


def _library_of(obj: Any) -> str | None:
    for cls in type(obj).__mro__:
        top = cls.__module__.split(".", 1)[0]
        if top in _ADAPTERS:
            return _ADAPTERS[top]
    return None


def tools_from(obj: Any, *, origin: str = "") -> list[Tool]:
    """The registry tools for ``obj``: one tool, a module, or a list/tuple/dict of tools of
    any supported kind (nested). Raises :class:`ToolDefinitionError` naming what it could
    not use."""
    if isinstance(obj, Tool):
        return [obj]
    adapter = _library_of(obj)
    if adapter is not None:
        module = importlib.import_module(f"{__name__}.{adapter}")
        found: list[Tool] = module.to_tools(obj, origin=origin)
        return found
    if isinstance(obj, ModuleType):
        from .functions import module_tools

        return module_tools(obj, origin=origin)
    if isinstance(obj, Mapping):
        return _many(obj.values(), origin)
    if isinstance(obj, list | tuple | set | frozenset):
        return _many(obj, origin)
    if callable(obj):
        from .functions import function_tool

        return [function_tool(obj, origin=origin)]
    raise ToolDefinitionError(
        f"Cannot make tools of {obj!r}: give functions, nexus_jupyter Tools, a module, or "
        "tools of langchain-core, pydantic-ai, smolagents or openai-agents (or a list of them)."
    )


def _many(items: Iterable[Any], origin: str) -> list[Tool]:
    out: list[Tool] = []
    for item in items:
        out.extend(tools_from(item, origin=origin))
    return out
