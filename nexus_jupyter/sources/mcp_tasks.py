"""Calling an MCP server's task-only tools (``execution.taskSupport: "required"``, the tasks of
MCP 2025-11-25): :func:`call_as_task`.

Such a tool refuses a plain ``tools/call``. The call is sent with a ``task`` parameter; the
server answers with a task at once; ``tasks/result`` then waits for the result, and carries
the server's questions on the way (elicitation, sampling), which reach this client's
callbacks like any others. Meanwhile ``tasks/get`` is polled so the task's status messages
reach the caller as progress. Cancelling the call cancels the task.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = [
    "DEFAULT_TASK_TTL_MS",
    "TASKS_EXTENSION",
    "call_as_task",
    "runs_tasks",
    "tasks_client_extension",
]

DEFAULT_TASK_TTL_MS = 10 * 60 * 1000
_MIN_POLL_S, _MAX_POLL_S = 0.2, 5.0

Progress = Callable[[float, float | None, str | None], Awaitable[None]]


def runs_tasks(client: Any) -> bool:
    """Whether the server takes ``tools/call`` as a task (capabilities.tasks.requests.tools.call)."""
    caps = getattr(client.server_capabilities, "tasks", None)
    requests = getattr(caps, "requests", None)
    tools = getattr(requests, "tools", None)
    return getattr(tools, "call", None) is not None


async def call_as_task(
    client: Any,
    name: str,
    arguments: dict[str, Any],
    *,
    progress: Progress | None = None,
    ttl_ms: int = DEFAULT_TASK_TTL_MS,
    on_task: Callable[[str], Callable[[], None]] | None = None,
) -> Any:
    """Call ``name`` as a task and wait for its ``CallToolResult``. ``on_task(task_id)`` is
    called once the task exists (it returns the function called when the call ends)."""
    import mcp_types as types

    session = client.session
    params = types.CallToolRequestParams(
        name=name, arguments=arguments, task=types.TaskMetadata(ttl=ttl_ms)
    ).model_dump(by_alias=True, mode="json", exclude_none=True)
    # Sent below the SDK's typed send_request, which checks every tools/call answer against
    # CallToolResult: the SDK leaves these tasks out, so a CreateTaskResult would not pass.
    raw = await session._dispatcher.send_raw_request("tools/call", params, {})
    if "task" not in raw:  # the server answered at once after all
        return types.CallToolResult.model_validate(raw)
    task = types.CreateTaskResult.model_validate(raw).task
    forget = on_task(task.task_id) if on_task is not None else None
    watcher = asyncio.create_task(_report_status(session, task, progress))
    try:
        request = types.GetTaskPayloadRequest(
            params=types.GetTaskPayloadRequestParams(task_id=task.task_id)
        )
        return await session.send_request(request, types.CallToolResult)
    except asyncio.CancelledError:
        cancel = types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=task.task_id))
        with contextlib.suppress(Exception):  # courtesy: the task may be gone already
            await asyncio.shield(session.send_request(cancel, types.CancelTaskResult))
        raise
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        if forget is not None:
            forget()


async def _report_status(session: Any, task: Any, progress: Progress | None) -> None:
    """Poll ``tasks/get`` (at the server's suggested interval) and report each new status."""
    import mcp_types as types

    if progress is None:
        return
    interval = min(max((task.poll_interval or 1000) / 1000, _MIN_POLL_S), _MAX_POLL_S)
    request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id))
    said, steps = None, 0
    current = task
    while current.status in ("working", "input_required"):
        message = current.status_message or current.status
        if message != said:
            said, steps = message, steps + 1
            await progress(steps, None, message)
        await asyncio.sleep(interval)
        current = await session.send_request(request, types.GetTaskResult)


# -- the tasks extension (MCP 2026-07-28), as a client ---------------------------------------------

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: Answers one of a task's questions: ``(method, params) -> result`` (e.g. an ElicitResult dump).
Answer = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


def tasks_client_extension(answer: Answer, *, progress: Progress | None = None) -> Any:
    """A ``ClientExtension`` for ``mcp.Client(extensions=[...])`` that declares the tasks
    extension and finishes a task result into the tool's ``CallToolResult``: it polls
    ``tasks/get``, answers the task's questions with ``answer`` (``tasks/update``), and
    cancels the task when the call is cancelled."""
    from typing import ClassVar, Literal

    import mcp_types as types
    from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
    from pydantic import ConfigDict, Field

    class TaskIdParams(types.RequestParams):
        model_config = ConfigDict(populate_by_name=True)
        task_id: str = Field(alias="taskId")

    class UpdateParams(TaskIdParams):
        input_responses: dict[str, Any] = Field(alias="inputResponses")

    class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
        name_param: ClassVar[str | None] = "taskId"

    class UpdateTask(types.Request[UpdateParams, Literal["tasks/update"]]):
        name_param: ClassVar[str | None] = "taskId"

    class CancelTask(types.Request[TaskIdParams, Literal["tasks/cancel"]]):
        name_param: ClassVar[str | None] = "taskId"

    class TaskFields(types.Result):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        task_id: str = Field(alias="taskId")
        status: str
        status_message: str | None = Field(default=None, alias="statusMessage")
        poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")

    class CreatedTask(TaskFields):
        result_type: Literal["task"] = Field(default="task", alias="resultType")

    class TaskState(TaskFields):  # tasks/get: the result, error or questions inline
        result: dict[str, Any] | None = None
        error: dict[str, Any] | None = None
        input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")

    async def resolve(created: CreatedTask, ctx: ClaimContext) -> Any:
        session, task_id = ctx.session, created.task_id
        interval = min(max((created.poll_interval_ms or 500) / 1000, _MIN_POLL_S), _MAX_POLL_S)
        state: TaskFields = created
        said, steps = None, 0
        try:
            while state.status not in ("completed", "failed", "cancelled"):
                questions = getattr(state, "input_requests", None)
                if state.status == "input_required" and questions:
                    answers = {
                        key: await answer(q["method"], q.get("params") or {})
                        for key, q in questions.items()
                    }
                    params = UpdateParams(taskId=task_id, inputResponses=answers)
                    await session.send_request(
                        UpdateTask(method="tasks/update", params=params), types.EmptyResult
                    )
                elif progress is not None and (state.status_message or "") != (said or ""):
                    said, steps = state.status_message, steps + 1
                    await progress(steps, None, said)
                await asyncio.sleep(interval)
                get = GetTask(method="tasks/get", params=TaskIdParams(taskId=task_id))
                state = await session.send_request(get, TaskState)
        except BaseException:  # cancelled, or a question nobody could answer: stop the task
            cancel = CancelTask(method="tasks/cancel", params=TaskIdParams(taskId=task_id))
            with contextlib.suppress(Exception):
                await asyncio.shield(session.send_request(cancel, types.EmptyResult))
            raise
        result = getattr(state, "result", None)
        if state.status == "completed" and result is not None:
            return types.CallToolResult.model_validate(result)
        error = getattr(state, "error", None) or {}
        message = error.get("message") or f"the task ended {state.status}"
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text=f"Task {task_id} {state.status}: {message}")
            ],
            is_error=True,
        )

    class TasksClient(ClientExtension):
        identifier = TASKS_EXTENSION

        def claims(self) -> Any:
            return [ResultClaim(result_type="task", model=CreatedTask, resolve=resolve)]

    return TasksClient()
