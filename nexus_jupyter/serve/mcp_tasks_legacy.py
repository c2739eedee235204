"""Tasks for handshake-era clients (MCP 2025-11-25): the same tasks as :mod:`.mcp_tasks`,
on that revision's wire.

A client that sends ``tools/call`` with a ``task`` parameter (``{"ttl": ms}``) for a tool
declared ``@tool(task=...)`` gets ``{"task": {...}}`` at once, then uses

- ``tasks/get``: the task's status (``ttl``, ``pollInterval``, ``statusMessage``);
- ``tasks/result``: waits until the task ends and returns the tool's ``CallToolResult`` (or
  its JSON-RPC error); while it waits, the task's questions (elicitation, sampling) are sent
  to the client as requests on that call, and its answers let the task go on;
- ``tasks/cancel``: stops it and returns the task.

Without the ``task`` parameter the call answers as usual (a task-only tool too: the client
waits). ``tasks/list`` is not offered (capability ``tasks.list`` absent): a task store need not
enumerate its tasks. The server announces ``capabilities.tasks`` at this revision only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .mcp_tasks import McpTasks, TaskChannel

__all__ = ["LegacyTasks", "legacy_tasks_capability"]

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
_RESULT_POLL_S = 0.1

#: Runs a ``tools/call`` inside a task (the server's call pipeline with the task's channel).
ServeCall = Callable[[Any, Any, TaskChannel, Any], Awaitable[Any]]


def legacy_tasks_capability() -> Any:
    """``capabilities.tasks`` of a 2025-11-25 server: cancel, and task-augmented tools/call."""
    import mcp_types as types

    return types.ServerTasksCapability(
        cancel=types.TasksCancelCapability(),
        requests=types.ServerTasksRequestsCapability(
            tools=types.TasksToolsCapability(call=types.TasksCallCapability())
        ),
    )


def _is_legacy(ctx: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS


def _task(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """A 2026-07-28 task envelope in 2025-11-25 field names."""
    out = {k: envelope[k] for k in ("taskId", "status", "createdAt", "lastUpdatedAt")}
    out["ttl"] = envelope.get("ttlMs")
    if "pollIntervalMs" in envelope:
        out["pollInterval"] = envelope["pollIntervalMs"]
    if envelope.get("statusMessage"):
        out["statusMessage"] = envelope["statusMessage"]
    return out


class LegacyTasks:
    """The 2025-11-25 task surface over :class:`McpTasks` (its store and running calls)."""

    def __init__(self, tasks: McpTasks, find_tool: Callable[[str], Any], serve: ServeCall) -> None:
        self.tasks, self.find_tool, self.serve = tasks, find_tool, serve

    def register(self, server: Any) -> None:
        """Wrap ``tools/call`` (a middleware: the revision's result check knows no tasks) and
        add ``tasks/result``; ``tasks/get`` and ``tasks/cancel`` answer in this revision's
        shape through :meth:`McpTasks.legacy_view`."""
        from .mcp_tasks import _task_params

        id_params, _ = _task_params()
        server.middleware.append(self._tools_call)
        server.add_request_handler("tasks/result", id_params, self._result)
        self.tasks.legacy_view = _task

    async def _tools_call(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params
        if (
            ctx.method != "tools/call"
            or not _is_legacy(ctx)
            or not isinstance(params, Mapping)
            or not isinstance(params.get("task"), Mapping)
        ):
            return await call_next(ctx)
        tool = self.find_tool(str(params.get("name")))
        if tool is None or tool.spec.task_support == "forbidden":
            return await call_next(ctx)  # a plain result: the tool does not run as a task
        import mcp_types as types

        typed = types.CallToolRequestParams.model_validate(params, by_name=False)
        ttl = params["task"].get("ttl")

        async def serve(channel: TaskChannel, progress: Any) -> Any:
            return await self.serve(ctx, typed, channel, progress)

        created = await self.tasks.start(
            ctx,
            typed.name,
            serve,
            starts_at_call=True,
            ttl_ms=int(ttl) if isinstance(ttl, int | float) and ttl > 0 else None,
        )
        return {"task": _task(created)}

    async def _result(self, ctx: Any, params: Any) -> Any:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INTERNAL_ERROR, METHOD_NOT_FOUND, ErrorData

        if not _is_legacy(ctx):  # 2026-07-28 inlines the result in tasks/get
            raise MCPError(METHOD_NOT_FOUND, "Method not found", data="tasks/result")
        while True:
            record = await self.tasks.record(ctx, params)
            if record.terminal:
                break
            channel = self.tasks.channel(record.task_id)
            if channel is not None and record.status == "input_required":
                await _ask_on_this_request(ctx, channel, record.input_requests)
            await asyncio.sleep(_RESULT_POLL_S)
        related = {RELATED_TASK_KEY: {"taskId": record.task_id}}
        if record.status == "completed" and record.result is not None:
            result = dict(record.result)
            result["_meta"] = {**(result.get("_meta") or {}), **related}
            return result
        error = record.error or {
            "code": INTERNAL_ERROR,
            "message": f"the task was {record.status}"
            + (f": {record.status_message}" if record.status_message else ""),
        }
        raise MCPError.from_error_data(ErrorData.model_validate(error))


async def _ask_on_this_request(
    ctx: Any, channel: TaskChannel, questions: Mapping[str, Any]
) -> None:
    """Send the task's open questions to the client as requests tied to this
    ``tasks/result`` call, and hand the answers to the task."""
    import mcp_types as types
    from mcp.shared.message import ServerMessageMetadata

    kinds: dict[str, tuple[Any, Any]] = {
        "elicitation/create": (types.ElicitRequest, types.ElicitResult),
        "sampling/createMessage": (types.CreateMessageRequest, types.CreateMessageResult),
        "roots/list": (types.ListRootsRequest, types.ListRootsResult),
    }
    answers: dict[str, dict[str, Any]] = {}
    for key, question in questions.items():
        request_type, result_type = kinds[question["method"]]
        request = request_type.model_validate(
            {"method": question["method"], "params": question.get("params") or {}}
        )
        answer = await ctx.session.send_request(
            request,
            result_type,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )
        answers[key] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    await channel.answer(answers)
