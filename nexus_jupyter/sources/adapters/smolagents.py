"""smolagents tools (``@tool`` functions and ``Tool`` subclasses).

The schema is the one smolagents sends to models (``get_tool_json_schema``); a call goes
through the tool itself, as an agent's would, so its ``setup()`` runs before the first call
(smolagents tools are sync: the registry runs them in a worker thread).
smolagents has no approval flag; a ``requires_approval`` / ``needs_approval`` attribute set
on the tool is read.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import ToolDefinitionError
from ...core.tools.tool import Tool
from .external import external_tool

__all__ = ["to_tools"]


def to_tools(obj: Any, *, origin: str = "") -> list[Tool]:
    from smolagents import Tool as SmolTool
    from smolagents.models import get_tool_json_schema

    if not isinstance(obj, SmolTool):
        raise ToolDefinitionError(f"{obj!r} is a smolagents object but not a smolagents Tool.")
    smol = obj
    schema = dict(get_tool_json_schema(smol)["function"]["parameters"])
    schema.setdefault("type", "object")

    def run(arguments: dict[str, Any]) -> Any:
        return smol(**arguments)

    asks = bool(getattr(smol, "requires_approval", False) or getattr(smol, "needs_approval", False))
    where = origin or f"smolagents:{type(smol).__name__}"
    return [
        external_tool(smol.name, smol.description, schema, run, needs_approval=asks, origin=where)
    ]
