"""OpenAI Agents SDK function tools (``@function_tool``, ``FunctionTool``).

The schema is ``params_json_schema``; a call goes through ``on_invoke_tool`` with the
arguments as JSON, as the SDK's runner does. ``needs_approval`` (``True`` or a function that
decides per call) becomes ``ToolSpec.needs_approval``: a function cannot be asked ahead of
the call, so it is taken as "asks".
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from ...core.errors import ToolDefinitionError
from ...core.tools.tool import Tool
from .external import external_tool

__all__ = ["to_tools"]


def to_tools(obj: Any, *, origin: str = "") -> list[Tool]:
    from agents import FunctionTool
    from agents.tool_context import ToolContext as AgentsToolContext

    if not isinstance(obj, FunctionTool):
        raise ToolDefinitionError(
            f"{obj!r} is an openai-agents object but not a FunctionTool (@function_tool)."
        )
    fn_tool = obj

    async def run(arguments: dict[str, Any]) -> Any:
        payload = json.dumps(arguments)
        context = AgentsToolContext(
            context=None,
            tool_name=fn_tool.name,
            tool_call_id=f"nexus-{uuid.uuid4().hex[:12]}",
            tool_arguments=payload,
        )
        return await fn_tool.on_invoke_tool(context, payload)

    asks = fn_tool.needs_approval is not False
    where = origin or f"openai_agents:{fn_tool.name}"
    schema = fn_tool.params_json_schema
    return [
        external_tool(
            fn_tool.name, fn_tool.description, schema, run, needs_approval=asks, origin=where
        )
    ]
