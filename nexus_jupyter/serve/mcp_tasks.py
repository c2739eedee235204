"""The MCP tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663, MCP 2026-07-28):
long tool calls answered with a task the client polls.

A tool declared ``@tool(task=True)`` (or ``"required"``), called by a client that declares the
extension (for its session or in the request's ``_meta``), is started in the background and
the call returns a ``CreateTaskResult`` at once. The client then uses

- ``tasks/get``: the status, ``statusMessage`` (the tool's last progress or log message) and,
  once finished, the result (``completed``, tool errors included as ``isError``) or the
  JSON-RPC error (``failed``: the tool could not run); while the tool waits for an answer,
  ``input_required`` with its questions in ``inputRequests``;
- ``tasks/update``: answers to those questions (some or all; the tool goes on once every
  question it is waiting on has its answer);
- ``tasks/cancel``: stop it (``cancelled``; a finished task stays as it was).

Tools declared ``task_start="tool"`` ask their first questions in ordinary input-required
rounds and become a task when they call ``ctx.start_task()``. A client without the extension
gets an ordinary result, except from ``"required"`` tools: ``-32021``. Handshake-era clients
(2025-11-25) get the same tasks on their own wire when they ask for one
(:mod:`.mcp_tasks_legacy`), else ordinary results. Task state lives in a
:class:`~nexus_jupyter.core.tasks.store.TaskStore`; the running calls live in this process.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import ConfigDict, Field

from ..core.tasks.store import InMemoryTaskStore, TaskRecord, TaskStore
from ..core.tools.channel import Elicitation, Sampled
from .mcp_channel import McpClientChannel, run_soon, sampled, sampling_params

__all__ = [
    "TASKS_EXTENSION",
    "McpTasks",
    "TaskChannel",
    "client_supports_tasks",
    "detailed_task",
    "missing_extension",
    "owner",
]

log = logging.getLogger(__name__)

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
DEFAULT_TTL_MS = 60 * 60 * 1000
DEFAULT_POLL_INTERVAL_MS = 500

#: Runs the call with the channel and progress callback a task gives it; returns the wire result.
Serve = Callable[["TaskChannel", Any], Awaitable[Any]]


def client_supports_tasks(ctx: Any) -> bool:
    """Whether this request's client declared the tasks extension (its session, or at
    2026-07-28 the request's own ``_meta``, which is what the SDK reads for that revision)."""
    capabilities = ctx.session.client_capabilities
    declared = capabilities.extensions if capabilities is not None else None
    return declared is not None and TASKS_EXTENSION in declared


def missing_extension(what: str) -> Exception:
    from mcp.shared.exceptions import MCPError
    from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY

    return MCPError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"{what} needs the {TASKS_EXTENSION!r} extension: declare it in the client's "
        "capabilities (capabilities.extensions).",
        data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat().replace("+00:00", "Z")


def owner() -> str:
    """Who may see a task: the authenticated subject of this request, if any."""
    from mcp.server.auth.middleware.auth_context import get_access_token

    token = get_access_token()
    if token is None:
        return ""
    return str(getattr(token, "subject", None) or token.client_id or "")


def _envelope(record: TaskRecord) -> dict[str, Any]:
    out: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": _iso(record.created_at),
        "lastUpdatedAt": _iso(record.updated_at),
        "ttlMs": record.ttl_ms,
    }
    if record.poll_interval_ms is not None:
        out["pollIntervalMs"] = record.poll_interval_ms
    if record.status_message:
        out["statusMessage"] = record.status_message
    return out


def _on_loop(
    loop: asyncio.AbstractEventLoop, listener: Callable[[TaskRecord], None]
) -> Callable[[TaskRecord], None]:
    """``listener``, called on ``loop`` whichever thread changed the task."""

    def call(record: TaskRecord) -> None:
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            listener(record)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(listener, record)

    return call


def detailed_task(record: TaskRecord) -> dict[str, Any]:
    """The ``DetailedTask`` of 2026-07-28 (``tasks/get``, ``notifications/tasks``): the task,
    with its result or error once it has finished and its questions while it waits."""
    out = _envelope(record)
    if record.status == "completed" and record.result is not None:
        out["result"] = record.result
    elif record.status == "failed" and record.error is not None:
        out["error"] = record.error
    elif record.status == "input_required":
        out["inputRequests"] = dict(record.input_requests)
    return out


def _task_params() -> tuple[type[Any], type[Any]]:
    from mcp_types import RequestParams

    class TaskIdParams(RequestParams):
        model_config = ConfigDict(populate_by_name=True)
        task_id: str = Field(alias="taskId")

    class UpdateTaskParams(TaskIdParams):
        input_responses: dict[str, dict[str, Any]] = Field(alias="inputResponses")

    return TaskIdParams, UpdateTaskParams


class McpTasks:
    """The tasks of one MCP server: starts them and serves ``tasks/get|update|cancel``."""

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        ttl_ms: int = DEFAULT_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
    ) -> None:
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.ttl_ms, self.poll_interval_ms = ttl_ms, poll_interval_ms
        self._running: dict[str, asyncio.Task[None]] = {}
        self._channels: dict[str, TaskChannel] = {}
        self._watchers: dict[str, list[Callable[[TaskRecord], None]]] = {}
        #: How tasks/get and tasks/cancel show a task to 2025-11-25 clients (set by
        #: :class:`~.mcp_tasks_legacy.LegacyTasks`; ``None``: those clients get no tasks).
        self.legacy_view: Callable[[dict[str, Any], TaskRecord], dict[str, Any]] | None = None
        #: The 2025-11-25 session of a request ("" at 2026-07-28): a task is its session's.
        self.session_of: Callable[[Any], str] | None = None
        # A store shared by replicas tells us of cancels made through another replica.
        watch = getattr(self.store, "watch_cancellations", None)
        if watch is not None:
            watch(self._cancel_running)
        changes = getattr(self.store, "watch_changes", None)
        if changes is not None:
            changes(self._changed)

    def subscribe(self, task_id: str, listener: Callable[[TaskRecord], None]) -> Callable[[], None]:
        """Call ``listener(record)`` (sync, on the loop that subscribes) at every change of
        the task (through any replica when the store is shared); returns the unsubscribe
        function. Without a store that tells of changes, nobody is told."""
        loop = asyncio.get_running_loop()
        listener = _on_loop(loop, listener)
        self._watchers.setdefault(task_id, []).append(listener)
        follow = getattr(self.store, "follow_changes", None)
        if follow is not None:
            follow()

        def unsubscribe() -> None:
            listeners = self._watchers.get(task_id, [])
            if listener in listeners:
                listeners.remove(listener)
            if not listeners:
                self._watchers.pop(task_id, None)

        return unsubscribe

    def _changed(self, record: TaskRecord) -> None:
        for listener in list(self._watchers.get(record.task_id, ())):
            try:
                listener(record)
            except Exception:
                log.exception("task %s: a change listener failed", record.task_id)

    def _cancel_running(self, task_id: str) -> None:
        call = self._running.get(task_id)
        if call is not None:
            call.cancel()

    def register(self, server: Any) -> None:
        """Advertise the extension and add its methods to an SDK low-level ``Server``."""
        id_params, update_params = _task_params()
        server.extensions[TASKS_EXTENSION] = {}
        server.add_request_handler("tasks/get", id_params, self._get)
        server.add_request_handler("tasks/update", update_params, self._update)
        server.add_request_handler("tasks/cancel", id_params, self._cancel)

    # -- starting -----------------------------------------------------------------------------

    def runs_as_task(self, ctx: Any, task_support: str) -> bool:
        """Whether a call of a tool with this ``task_support`` becomes a task; raises
        ``-32021`` for a task-only tool called at 2026-07-28 without the extension."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if task_support == "forbidden" or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return False  # handshake-era clients ask for a task themselves (.mcp_tasks_legacy)
        if client_supports_tasks(ctx):
            return True
        if task_support == "required":
            raise missing_extension("This tool runs only as a task: calling it")
        return False

    async def start(
        self,
        ctx: Any,
        tool: str,
        serve: Serve,
        *,
        starts_at_call: bool,
        ttl_ms: int | None = None,
        session: str = "",
    ) -> Any:
        """Run ``serve`` as a task; the ``CreateTaskResult`` once the task exists. With
        ``starts_at_call=False`` the tool decides (``ctx.start_task()``); if it finishes or
        asks a question first, its own result is returned instead. ``session``: the
        2025-11-25 session that asked (only it may see the task)."""
        record = TaskRecord.new(
            tool,
            ttl_ms=ttl_ms or self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            owner=owner(),
            session=session,
        )
        channel = TaskChannel(self, record)
        if starts_at_call:
            await channel.start_task()
        call = asyncio.create_task(self._run(record.task_id, serve, channel))
        self._running[record.task_id] = call
        if not starts_at_call:
            began = asyncio.create_task(channel.started.wait())
            try:
                await asyncio.wait({call, began}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                call.cancel()  # the client gave up on the call before it became a task
                raise
            finally:
                began.cancel()
            if not channel.started.is_set():
                self._running.pop(record.task_id, None)
                return channel.sync_outcome()
        return {"resultType": "task", **_envelope(channel.record)}

    async def _run(self, task_id: str, serve: Serve, channel: TaskChannel) -> None:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INTERNAL_ERROR

        changes: dict[str, Any]
        try:
            result = await serve(channel, channel.progress)
        except asyncio.CancelledError:
            changes = {"status": "cancelled", "status_message": "cancelled by the client"}
            if not channel.started.is_set():
                raise
        except MCPError as exc:
            changes = {
                "status": "failed",
                "error": exc.error.model_dump(mode="json", exclude_none=True),
            }
            channel.failure = exc
        except Exception as exc:
            log.exception("task %s of %s failed", task_id, channel.record.tool)
            error = {"code": INTERNAL_ERROR, "message": f"the call failed: {exc}"}
            changes = {"status": "failed", "error": error}
            channel.failure = exc
        else:
            channel.outcome = result
            wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            if wire.get("resultType") == "input_required":
                # a question asked without ctx.start_task() first: tell the client to ask again
                error = {
                    "code": INTERNAL_ERROR,
                    "message": "the tool asked a question it "
                    "could not ask inside a task; call it again",
                }
                changes = {"status": "failed", "error": error}
            else:
                wire.pop("resultType", None)
                # the last progress line ("2/3: at 2") no longer says where the task is
                changes = {
                    "status": "completed",
                    "result": wire,
                    "input_requests": {},
                    "status_message": None,
                }
        finally:
            self._running.pop(task_id, None)
            self._channels.pop(task_id, None)
        if channel.started.is_set():
            await self.store.transition(task_id, **changes)

    # -- the extension's methods -----------------------------------------------------------------

    def channel(self, task_id: str) -> TaskChannel | None:
        """The channel of a task running in this process."""
        return self._channels.get(task_id)

    def _legacy(self, ctx: Any) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        return self.legacy_view is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS

    async def record(self, ctx: Any, params: Any) -> TaskRecord:
        """The task ``params.task_id`` names, as this request may see it; raises the
        protocol error otherwise (no extension, header mismatch, unknown or not its own)."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS
        from mcp_types.jsonrpc import HEADER_MISMATCH

        if not self._legacy(ctx) and not client_supports_tasks(ctx):
            raise missing_extension(f"{ctx.method}")
        request = getattr(ctx, "request", None)
        header = request.headers.get("mcp-name") if request is not None else None
        if header is not None and header.strip() != params.task_id:
            raise MCPError(
                HEADER_MISMATCH,
                f"The Mcp-Name header ({header.strip()!r}) must equal params.taskId "
                f"({params.task_id!r}).",
            )
        record = await self.store.get(params.task_id)
        session = self.session_of(ctx) if self.session_of is not None else ""
        if record is None or record.owner != owner() or record.session != session:
            raise MCPError(
                INVALID_PARAMS,
                f"Unknown task {params.task_id!r}: no such task here, or it expired (tasks are "
                f"kept {self.ttl_ms // 1000} s after their last change).",
            )
        return record

    async def _get(self, ctx: Any, params: Any) -> dict[str, Any]:
        record = await self.record(ctx, params)
        if self._legacy(ctx):
            assert self.legacy_view is not None
            return self.legacy_view(_envelope(record), record)  # the result: tasks/result
        return detailed_task(record)

    async def _update(self, ctx: Any, params: Any) -> dict[str, Any]:
        record = await self.record(ctx, params)
        channel = self._channels.get(record.task_id)
        if channel is not None:
            await channel.answer(params.input_responses)
        return {}

    async def _cancel(self, ctx: Any, params: Any) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INVALID_PARAMS

        record = await self.record(ctx, params)
        if record.terminal and self._legacy(ctx):  # 2025-11-25: an error; 2026-07-28: an ack
            raise MCPError(
                INVALID_PARAMS,
                f"Task {record.task_id!r} has already ended ({record.status}); only a "
                "working or input_required task can be cancelled.",
            )
        if not record.terminal:
            await self.store.transition(
                record.task_id, status="cancelled", status_message="cancelled by the client"
            )
            call = self._running.get(record.task_id)
            if call is not None:
                call.cancel()
        if self._legacy(ctx):  # 2025-11-25 answers with the task
            assert self.legacy_view is not None
            now = await self.record(ctx, params)
            return self.legacy_view(_envelope(now), now)
        return {}

    async def close(self) -> None:
        """Cancel every task still running here (the server is stopping)."""
        calls = list(self._running.values())
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)


class TaskChannel:
    """The client as a task's tool reaches it: before the task starts, the call's own
    :class:`McpClientChannel`; after, questions park the task (``input_required``) until
    ``tasks/update`` answers them, and log and progress messages become its status message."""

    def __init__(self, tasks: McpTasks, record: TaskRecord) -> None:
        self.tasks, self.record = tasks, record
        self.started = asyncio.Event()
        self.inner: McpClientChannel | None = None  # set by the server before the tool runs
        self.outcome: Any = None
        self.failure: BaseException | None = None
        self._waiting: dict[str, tuple[dict[str, Any], asyncio.Future[dict[str, Any]]]] = {}
        self._asked = 0

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        return self.inner.loop if self.inner is not None else None

    def sync_outcome(self) -> Any:
        """The call's own result when it ended before becoming a task."""
        if self.failure is not None:
            raise self.failure
        return self.outcome

    async def start_task(self) -> None:
        if self.started.is_set():
            return
        await self.tasks.store.create(self.record)
        self.tasks._channels[self.record.task_id] = self
        self.started.set()

    # -- ClientChannel ----------------------------------------------------------------------------

    def log(self, level: str, message: str, logger: str) -> None:
        if not self.started.is_set():
            if self.inner is not None:
                self.inner.log(level, message, logger)
        elif level not in ("debug",):
            self._set_status(message)

    def progress(
        self, current: float, total: float | None = None, message: str | None = None
    ) -> None:
        done = f"{current:g}/{total:g}" if total else f"{current:g}"
        self._set_status(f"{done}: {message}" if message else done)

    def _set_status(self, message: str) -> None:
        if self.loop is not None:
            run_soon(
                self.loop, self.tasks.store.transition(self.record.task_id, status_message=message)
            )

    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> Elicitation:
        import mcp_types as types

        if not self.started.is_set():
            assert self.inner is not None
            return await self.inner.elicit(message, schema, key=key)
        assert self.inner is not None
        self.inner._check("elicitation", "ask the user")
        params = types.ElicitRequestFormParams(message=message, requested_schema=schema)
        raw = await self._ask(key, "elicitation/create", params)
        answer = types.ElicitResult.model_validate(raw)
        return Elicitation(answer.action, dict(answer.content or {}))

    async def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None,
        key: str | None = None,
    ) -> Sampled:
        import mcp_types as types

        assert self.inner is not None
        if not self.started.is_set():
            return await self.inner.sample(
                messages, max_tokens=max_tokens, system_prompt=system_prompt, key=key
            )
        self.inner._check("sampling", "ask the client's model")
        params = sampling_params(messages, max_tokens, system_prompt)
        raw = await self._ask(key, "sampling/createMessage", params)
        return sampled(types.CreateMessageResult.model_validate(raw))

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        import mcp_types as types

        assert self.inner is not None
        if not self.started.is_set():
            return await self.inner.list_roots(key=key)
        self.inner._check("roots", "list the client's roots")
        answer = types.ListRootsResult.model_validate(await self._ask(key, "roots/list", None))
        return [r.model_dump(by_alias=True, mode="json", exclude_none=True) for r in answer.roots]

    # -- questions --------------------------------------------------------------------------------

    async def _ask(self, key: str | None, method: str, params: Any) -> dict[str, Any]:
        self._asked += 1
        key = key or f"{method.split('/')[0]}-{self._asked}"
        while key in self._waiting:  # two questions under one key: keep both
            key += "+"
        question: dict[str, Any] = {"method": method}
        if params is not None:
            question["params"] = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        answered: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[key] = (question, answered)
        await self._publish_questions()
        try:
            return await answered
        finally:
            if self._waiting.pop(key, None) is not None:  # cancelled before its answer
                await self._publish_questions()

    async def _publish_questions(self) -> None:
        pending = {k: q for k, (q, _) in self._waiting.items()}
        await self.tasks.store.transition(
            self.record.task_id,
            status="input_required" if pending else "working",
            input_requests=pending,
        )

    async def answer(self, responses: dict[str, dict[str, Any]]) -> None:
        """Answers from ``tasks/update``: the answered questions leave the task at once (a
        poll right after shows only the open ones); answers to nothing asked are ignored."""
        answered = [k for k in responses if k in self._waiting]
        if not answered:
            return
        futures = [self._waiting.pop(k)[1] for k in answered]
        await self._publish_questions()
        for key, future in zip(answered, futures, strict=True):
            if not future.done():
                future.set_result(dict(responses[key]))
