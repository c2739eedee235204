"""Task status notifications of the tasks extension (``io.modelcontextprotocol/tasks``) at
2026-07-28: ``notifications/tasks`` on a ``subscriptions/listen`` stream.

A client that declares the extension asks for them with ``notifications.taskIds`` in its
listen request. The acknowledgement names the tasks it will hear about (those that exist and
are its own); then each of them is sent once as it stands, and again at every change, as
the ``DetailedTask`` that ``tasks/get`` would answer at that moment (the result or error
inlined once it has finished, the questions while it waits for input). Asking for task ids
without the extension is refused with ``-32021``. A listen request without ``taskIds`` is the
SDK's own :class:`~mcp.server.subscriptions.ListenHandler`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

from ..core.tasks.store import TaskRecord
from .mcp_tasks import McpTasks, client_supports_tasks, detailed_task, missing_extension, owner

__all__ = ["TasksListenHandler"]

log = logging.getLogger(__name__)

_MAX_BUFFERED = 1024  # events a stream may hold unread before it is ended
_MAX_STREAMS = 1024  # open task streams (the SDK's handler bounds its own the same)


def _task_notification(params: dict[str, Any]) -> Any:
    import mcp_types as types

    class TasksNotification(types.Notification[dict[str, Any], Literal["notifications/tasks"]]):
        method: Literal["notifications/tasks"] = "notifications/tasks"

    return TasksNotification(params=params)


def _requested_task_ids(params: Any) -> list[str] | None:
    """``notifications.taskIds`` of a listen request (an extension's key: kept as extra)."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    extra = params.notifications.model_extra or {}
    ids = extra.get("taskIds")
    if ids is None:
        return None
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise MCPError(
            INVALID_PARAMS, f"notifications.taskIds must be a list of task ids, got {ids!r}."
        )
    return ids


class TasksListenHandler:
    """Serves ``subscriptions/listen``: the SDK's handler, plus ``taskIds``."""

    def __init__(self, bus: Any, tasks: McpTasks) -> None:
        from mcp.server.subscriptions import ListenHandler

        self.bus, self.tasks = bus, tasks
        self.plain = ListenHandler(bus)
        self._streams: set[Any] = set()

    async def __call__(self, ctx: Any, params: Any) -> Any:
        task_ids = _requested_task_ids(params)
        if task_ids is None:
            return await self.plain(ctx, params)
        if not client_supports_tasks(ctx):
            raise missing_extension("Task notifications (notifications.taskIds)")
        return await self._serve(ctx, params, task_ids)

    async def _honored(self, task_ids: list[str]) -> list[TaskRecord]:
        seen = owner()
        records = [await self.tasks.store.get(i) for i in dict.fromkeys(task_ids)]
        return [r for r in records if r is not None and r.owner == seen]

    async def _serve(self, ctx: Any, params: Any, task_ids: list[str]) -> Any:
        import anyio
        import mcp_types as types
        from mcp.shared.exceptions import MCPError
        from mcp.shared.subscriptions import (
            SUBSCRIPTION_ID_META_KEY,
            event_matches,
            event_to_notification,
        )

        subscription_id = ctx.request_id
        if subscription_id is None:
            raise MCPError(types.INVALID_REQUEST, "subscriptions/listen requires a request id")
        if len(self._streams) >= _MAX_STREAMS:
            raise MCPError(types.INTERNAL_ERROR, "Subscription limit reached")
        asked = params.notifications
        records = await self._honored(task_ids)
        honored = types.SubscriptionFilter.model_validate(
            {
                "toolsListChanged": True if asked.tools_list_changed else None,
                "promptsListChanged": True if asked.prompts_list_changed else None,
                "resourcesListChanged": True if asked.resources_list_changed else None,
                "resourceSubscriptions": list(asked.resource_subscriptions or ()) or None,
                "taskIds": [r.task_id for r in records],
            }
        )
        uris = frozenset(honored.resource_subscriptions or ())
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: subscription_id}
        send, receive = anyio.create_memory_object_stream[Any](_MAX_BUFFERED)

        def deliver(item: Any) -> None:
            if isinstance(item, TaskRecord) or event_matches(honored, uris, item):
                try:
                    send.send_nowait(item)
                except anyio.ClosedResourceError:
                    pass  # closing: the loop below is ending
                except anyio.WouldBlock:
                    log.warning("listen stream %r backlog full; ending it", subscription_id)
                    send.close()  # the client stopped reading: it re-listens and refetches

        unsubscribes: list[Callable[[], None]] = [self.bus.subscribe(deliver)]
        unsubscribes += [self.tasks.subscribe(r.task_id, deliver) for r in records]
        self._streams.add(send)
        try:
            await ctx.session.send_notification(
                types.SubscriptionsAcknowledgedNotification(
                    params=types.SubscriptionsAcknowledgedNotificationParams(
                        notifications=honored, _meta=meta
                    )
                ),
                related_request_id=subscription_id,
            )
            for record in records:  # as each stands now: it may not change again
                deliver(await self.tasks.store.get(record.task_id) or record)
            async for item in receive:
                if isinstance(item, TaskRecord):
                    note = _task_notification({**detailed_task(item), "_meta": meta})
                else:
                    note = event_to_notification(item, meta)
                await ctx.session.send_notification(note, related_request_id=subscription_id)
        finally:
            for unsubscribe in unsubscribes:
                unsubscribe()
            self._streams.discard(send)
            send.close()
            receive.close()
        return types.SubscriptionsListenResult(_meta=meta)

    def close(self) -> None:
        """End every open listen stream (each sends its final result)."""
        self.plain.close()
        for stream in list(self._streams):
            stream.close()
