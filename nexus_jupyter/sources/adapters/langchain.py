"""LangChain tools (langchain-core ``BaseTool``: ``@tool``, ``StructuredTool``, subclasses).

The schema is the one LangChain sends to models (``tool_call_schema``); calls go through
``ainvoke``, which runs a sync tool in LangChain's executor. LangChain has no approval flag
of its own; ``metadata`` keys ``needs_approval`` / ``requires_approval`` are read when set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.errors import ToolDefinitionError
from ...core.tools.tool import Tool
from .external import external_tool

__all__ = ["to_tools"]


def _schema(lc_tool: Any) -> dict[str, Any]:
    schema = lc_tool.tool_call_schema
    if isinstance(schema, Mapping):
        out = dict(schema)
    elif hasattr(schema, "model_json_schema"):
        out = schema.model_json_schema()
    else:
        raise ToolDefinitionError(
            f"LangChain tool {lc_tool.name!r} has a schema of an unknown kind ({schema!r})."
        )
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out


def _asks(lc_tool: Any) -> bool:
    metadata = getattr(lc_tool, "metadata", None) or {}
    return bool(metadata.get("needs_approval") or metadata.get("requires_approval"))


def to_tools(obj: Any, *, origin: str = "") -> list[Tool]:
    from langchain_core.tools import BaseTool

    if not isinstance(obj, BaseTool):
        raise ToolDefinitionError(
            f"{obj!r} is a LangChain object but not a tool (langchain_core.tools.BaseTool)."
        )
    lc_tool = obj

    async def run(arguments: dict[str, Any]) -> Any:
        return await lc_tool.ainvoke(arguments)

    where = origin or f"langchain:{type(lc_tool).__name__}"
    return [
        external_tool(
            lc_tool.name,
            lc_tool.description,
            _schema(lc_tool),
            run,
            needs_approval=_asks(lc_tool),
            origin=where,
        )
    ]
