"""pydantic-ai tools: ``Tool`` and ``FunctionToolset`` (its ``tools``).

The schema is pydantic-ai's own (``function_schema.json_schema``), and its validator checks
calls as it would for a model. ``requires_approval=True`` becomes ``needs_approval``. A tool
that takes pydantic-ai's ``RunContext`` needs an agent run to call it, so it is refused with
a reason rather than called without one.
"""

from __future__ import annotations

import inspect
from typing import Any

from ...core.errors import ToolDefinitionError
from ...core.tools.tool import Tool
from .external import external_tool

__all__ = ["to_tools"]


def _one(pa_tool: Any, origin: str) -> Tool:
    if pa_tool.takes_ctx:
        raise ToolDefinitionError(
            f"pydantic-ai tool {pa_tool.name!r} takes a RunContext, which only an agent run "
            "provides: give it as a plain function (no ctx) to use it here."
        )
    schema = pa_tool.function_schema

    async def run(arguments: dict[str, Any]) -> Any:
        answer = schema.call(arguments, None)  # a coroutine for async functions
        return await answer if inspect.isawaitable(answer) else answer

    return external_tool(
        pa_tool.name,
        pa_tool.description,
        schema.json_schema,
        run,
        output_schema=schema.return_schema,
        needs_approval=bool(pa_tool.requires_approval),
        origin=origin or f"pydantic_ai:{pa_tool.name}",
    )


def to_tools(obj: Any, *, origin: str = "") -> list[Tool]:
    from pydantic_ai import Tool as PydanticAiTool
    from pydantic_ai.toolsets import FunctionToolset

    if isinstance(obj, PydanticAiTool):
        return [_one(obj, origin)]
    if isinstance(obj, FunctionToolset):
        return [_one(t, origin) for t in obj.tools.values()]
    raise ToolDefinitionError(
        f"{obj!r} is a pydantic-ai object this adapter does not read: give a "
        "pydantic_ai.Tool or a FunctionToolset."
    )
