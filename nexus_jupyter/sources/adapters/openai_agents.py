"""OpenAI Agents SDK function tools (``@function_tool``, ``FunctionTool``).

The schema is ``params_json_schema``; a call goes through ``on_invoke_tool`` with the
arguments as JSON, as the SDK's runner does. ``needs_approval`` (``True`` or a function that
decides per call) becomes ``ToolSpec.needs_approval``: a function cannot be asked ahead of
the call, so it is taken as "asks".

The SDK's default error handler turns a failing tool into the text "An error occurred while
running the tool. Please try again." for the model; here the call runs on a copy without it,
so the error (its type and message) is the call's error, as for every other tool. A tool
given its own ``failure_error_function`` keeps it.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

from ...core.errors import ToolDefinitionError
from ...core.tools.tool import Tool
from .external import external_tool

__all__ = ["to_tools"]


def _raising(fn_tool: Any) -> Any:
    """``fn_tool``, or a copy whose errors raise when it uses the SDK's default handler."""
    from agents.tool import (
        default_tool_error_function,
        resolve_function_tool_failure_error_function,
        set_function_tool_failure_error_function,
    )

    if resolve_function_tool_failure_error_function(fn_tool) is not default_tool_error_function:
        return fn_tool
    copy = dataclasses.replace(fn_tool)
    set_function_tool_failure_error_function(copy, None)
    return copy


def to_tools(obj: Any, *, origin: str = "") -> list[Tool]:
    from agents import FunctionTool
    from agents.tool_context import ToolContext as AgentsToolContext

    if not isinstance(obj, FunctionTool):
        raise ToolDefinitionError(
            f"{obj!r} is an openai-agents object but not a FunctionTool (@function_tool)."
        )
    fn_tool = _raising(obj)

    async def run(arguments: dict[str, Any]) -> Any:
        payload = json.dumps(arguments)
        context = AgentsToolContext(
            context=None,
            tool_name=fn_tool.name,
            tool_call_id=f"nexus-{uuid.uuid4().hex[:12]}",
            tool_arguments=payload,
        )
        return await fn_tool.on_invoke_tool(context, payload)

    asks = obj.needs_approval is not False
    where = origin or f"openai_agents:{fn_tool.name}"
    schema = fn_tool.params_json_schema
    return [
        external_tool(
            fn_tool.name, fn_tool.description, schema, run, needs_approval=asks, origin=where
        )
    ]
