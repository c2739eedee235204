"""Tasks for handshake-era clients (MCP 2025-11-25): the same tasks as :mod:`.mcp_tasks`,
on that revision's wire.

A client that sends ``tools/call`` with a ``task`` parameter (``{"ttl": ms}``) for a tool
declared ``@tool(task=...)`` gets ``{"task": {...}}`` at once, then uses

- ``tasks/get``: the task's status (``ttl``, ``pollInterval``, ``statusMessage``);
- ``tasks/result``: waits until the task ends and returns the tool's ``CallToolResult`` (or
  its JSON-RPC error); while it waits, the task's questions (elicitation, sampling) are sent
  to the client as requests on that call, and its answers let the task go on;
- ``tasks/cancel``: stops it and returns the task.

- ``tasks/list``: the tasks of this session (and authenticated subject), oldest first, 100 a
  page (``nextCursor``); offered (capability ``tasks.list``) when the task store can list.

A task belongs to the session that asked for it: another session's ``tasks/*`` does not find
it. While a task runs, its session gets ``notifications/tasks/status`` (the task, as
``tasks/get`` shows it) at every change of status, on its standalone stream.

Without the ``task`` parameter the call answers as usual (a task-only tool too: the client
waits). A tool result with ``isError`` makes its task ``failed`` (that revision's rule);
``tasks/result`` returns it as the call would have. The server announces
``capabilities.tasks`` at this revision only.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..core.tasks.store import TaskListing, TaskRecord
from .mcp_tasks import McpTasks, TaskChannel, _envelope, owner

__all__ = ["LegacyTasks", "legacy_tasks_capability"]

RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"
_RESULT_POLL_S = 0.1
_LIST_PAGE = 100
_BACKGROUND: set[asyncio.Task[Any]] = set()

#: Runs a ``tools/call`` inside a task (the server's call pipeline with the task's channel).
ServeCall = Callable[[Any, Any, TaskChannel, Any], Awaitable[Any]]


def legacy_tasks_capability(listing: bool = True) -> Any:
    """``capabilities.tasks`` of a 2025-11-25 server: cancel, task-augmented tools/call, and
    list when the task store can enumerate tasks."""
    import mcp_types as types

    return types.ServerTasksCapability(
        list=types.TasksListCapability() if listing else None,
        cancel=types.TasksCancelCapability(),
        requests=types.ServerTasksRequestsCapability(
            tools=types.TasksToolsCapability(call=types.TasksCallCapability())
        ),
    )


def session_of(ctx: Any) -> str:
    """The requestor's 2025-11-25 session: its ``Mcp-Session-Id`` over HTTP, its connection
    on stdio; ``""`` at 2026-07-28, which has no sessions."""
    if not _is_legacy(ctx):
        return ""
    request = getattr(ctx, "request", None)
    header = request.headers.get("mcp-session-id") if request is not None else None
    if header:
        return str(header)
    return f"connection-{id(getattr(ctx.session, '_connection', ctx.session))}"


def _is_legacy(ctx: Any) -> bool:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS


def _task(envelope: Mapping[str, Any], record: TaskRecord | None = None) -> dict[str, Any]:
    """A 2026-07-28 task envelope in 2025-11-25 field names (a tool error is ``failed``)."""
    out = {k: envelope[k] for k in ("taskId", "status", "createdAt", "lastUpdatedAt")}
    if record is not None and record.status == "completed" and (record.result or {}).get("isError"):
        out["status"] = "failed"
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

    @property
    def can_list(self) -> bool:
        return isinstance(self.tasks.store, TaskListing)

    def register(self, server: Any) -> None:
        """Wrap ``tools/call`` (a middleware: the revision's result check knows no tasks) and
        add ``tasks/result`` and ``tasks/list``; ``tasks/get`` and ``tasks/cancel`` answer in
        this revision's shape through :meth:`McpTasks.legacy_view`."""
        import mcp_types as types

        from .mcp_tasks import _task_params

        id_params, _ = _task_params()
        server.middleware.append(self._tools_call)
        server.add_request_handler("tasks/result", id_params, self._result)
        if self.can_list:
            server.add_request_handler("tasks/list", types.PaginatedRequestParams, self._list)
        self.tasks.legacy_view = _task
        self.tasks.session_of = session_of

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
        if tool is None:
            return await call_next(ctx)  # the call says the tool is unknown
        if tool.spec.task_support == "forbidden":  # the spec: servers SHOULD answer -32601
            from mcp.shared.exceptions import MCPError
            from mcp_types import METHOD_NOT_FOUND

            raise MCPError(
                METHOD_NOT_FOUND,
                f"Tool {tool.name!r} does not run as a task (its execution.taskSupport is "
                "'forbidden'): call it again without 'task'.",
            )
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
            session=session_of(ctx),
        )
        self._notify_status_changes(ctx, created)
        return {"task": _task(created)}

    def _notify_status_changes(self, ctx: Any, created: Mapping[str, Any]) -> None:
        """Send the session ``notifications/tasks/status`` at each change of the task's
        status, until it ends (best effort, like every notification)."""
        connection = getattr(ctx.session, "_connection", None)
        if connection is None:
            return
        last = {"status": created["status"]}

        def changed(record: TaskRecord) -> None:
            task = _task(_envelope(record), record)
            if task["status"] == last["status"]:
                return  # a new status message only: the client polls for those
            last["status"] = task["status"]
            if record.terminal:
                unsubscribe()
            sent = asyncio.ensure_future(connection.notify("notifications/tasks/status", task))
            _BACKGROUND.add(sent)
            sent.add_done_callback(_BACKGROUND.discard)

        unsubscribe = self.tasks.subscribe(str(created["taskId"]), changed)

    async def _list(self, ctx: Any, params: Any) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

        if not _is_legacy(ctx):  # 2026-07-28 has no tasks/list
            raise MCPError(METHOD_NOT_FOUND, "Method not found", data="tasks/list")
        cursor = getattr(params, "cursor", None) if params is not None else None
        start = 0
        if cursor:
            try:
                start = int(base64.urlsafe_b64decode(cursor.encode()).decode())
            except (ValueError, binascii.Error):
                raise MCPError(
                    INVALID_PARAMS,
                    f"Invalid cursor {cursor!r}: pass back the nextCursor of the last page.",
                ) from None
        store: Any = self.tasks.store
        mine = await store.list_tasks(owner(), session_of(ctx))
        page = mine[start : start + _LIST_PAGE]
        out: dict[str, Any] = {"tasks": [_task(_envelope(r), r) for r in page]}
        if start + _LIST_PAGE < len(mine):
            out["nextCursor"] = base64.urlsafe_b64encode(str(start + _LIST_PAGE).encode()).decode()
        return out

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
