"""The MCP client of one ``tools/call``, as a running tool reaches it (a
:class:`~nexus_jupyter.core.tools.channel.ClientChannel`): log messages, elicitation and sampling.

Log messages ride the request's own stream, in order, and are all sent before the call's
result. Which levels go out: at 2025-11-25 and earlier, the level the client set with
``logging/setLevel`` on its session (every level until it sets one); at 2026-07-28, the level
the request opted into in its ``_meta`` (none without it).

Elicitation, sampling and roots are server-to-client requests tied to the call at the
handshake revisions; at 2026-07-28 they become an input-required result (:mod:`.mcp_input`).
A client that did not declare the capability gets none: the tool sees
:class:`CallerUnavailable` and can do without.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from weakref import WeakKeyDictionary

from ..core.tools.channel import CallerUnavailable, Elicitation, Sampled
from .mcp_input import RoundTrip

__all__ = ["LogLevels", "McpClientChannel", "run_soon", "sampled", "sampling_params"]

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class LogLevels:
    """The ``logging/setLevel`` choice of each connected session (handshake revisions)."""

    def __init__(self) -> None:
        self._chosen: WeakKeyDictionary[Any, str] = WeakKeyDictionary()
        self._lock = threading.Lock()

    def set(self, connection: Any, level: str) -> None:
        with self._lock:
            self._chosen[connection] = level

    def allowed(self, ctx: Any) -> frozenset[str]:
        """The levels that may be sent for the request of ``ctx``."""
        from mcp.server.connection import allowed_log_levels
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return allowed_log_levels(ctx.protocol_version, ctx.meta)  # the request's opt-in
        connection = getattr(ctx.session, "_connection", None)
        with self._lock:
            chosen = self._chosen.get(connection) if connection is not None else None
        return frozenset(LEVELS[LEVELS.index(chosen) :] if chosen in LEVELS else LEVELS)


class McpClientChannel:
    """The client of one ``tools/call`` request; made per call by the MCP server."""

    def __init__(self, ctx: Any, levels: LogLevels, round_trip: RoundTrip | None = None) -> None:
        self.ctx = ctx
        self.round = round_trip  # 2026-07-28: questions become an input-required result
        self.loop = asyncio.get_running_loop()
        self.allowed = levels.allowed(ctx)
        self._last: asyncio.Future[None] | None = None
        self.missing_capability: str | None = None  # the last one a question needed

    # -- logging ----------------------------------------------------------------------------

    def log(self, level: str, message: str, logger: str) -> None:
        if level not in self.allowed:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self._chain(level, message, logger)
        else:  # a sync tool's worker thread
            self.loop.call_soon_threadsafe(self._chain, level, message, logger)

    def _chain(self, level: str, message: str, logger: str) -> None:
        # Each message waits for the one before, so the client gets them in order.
        self._last = self.loop.create_task(self._send(self._last, level, message, logger))

    async def _send(
        self, before: asyncio.Future[None] | None, level: str, message: str, logger: str
    ) -> None:
        import mcp_types as types

        if before is not None:
            await asyncio.gather(before, return_exceptions=True)
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=level,  # type: ignore[arg-type]
                data=message,
                logger=logger,
            )
        )
        try:
            await self.ctx.session.send_notification(note, related_request_id=self.ctx.request_id)
        except Exception:
            pass  # best effort, like every notification: a gone client must not fail the tool

    async def flush(self) -> None:
        """Wait until every log message of the call is sent (before its result)."""
        await asyncio.sleep(0)  # let messages scheduled from worker threads start
        if self._last is not None:
            await asyncio.gather(self._last, return_exceptions=True)

    # -- asking the client --------------------------------------------------------------------

    def _check(self, capability: str, what: str) -> None:
        import mcp_types as types

        wanted = types.ClientCapabilities.model_validate({capability: {}})
        if not self.ctx.session.check_client_capability(wanted):
            self.missing_capability = capability
            raise CallerUnavailable(
                f"Cannot {what}: the MCP client did not declare the {capability!r} "
                "capability. Give the value as an argument instead."
            )

    async def _request(self, request: Any, result_type: Any) -> Any:
        from mcp.shared.message import ServerMessageMetadata

        return await self.ctx.session.send_request(
            request,
            result_type,
            metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id),
        )

    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> Elicitation:
        import mcp_types as types

        self._check("elicitation", "ask the user")
        params = types.ElicitRequestFormParams(message=message, requested_schema=schema)
        if self.round is not None:
            raw = self.round.ask(key, "elicitation/create", _dump(params))
            answer = types.ElicitResult.model_validate(raw)
        else:
            answer = await self._request(types.ElicitRequest(params=params), types.ElicitResult)
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

        self._check("sampling", "ask the client's model")
        params = sampling_params(messages, max_tokens, system_prompt)
        if self.round is not None:
            raw = self.round.ask(key, "sampling/createMessage", _dump(params))
            answer = types.CreateMessageResult.model_validate(raw)
        else:
            request = types.CreateMessageRequest(params=params)
            answer = await self._request(request, types.CreateMessageResult)
        return sampled(answer)

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        import mcp_types as types

        self._check("roots", "list the client's roots")
        if self.round is not None:
            answer = types.ListRootsResult.model_validate(self.round.ask(key, "roots/list", {}))
        else:
            answer = await self._request(types.ListRootsRequest(), types.ListRootsResult)
        return [_dump(root) for root in answer.roots]


def sampling_params(
    messages: list[dict[str, Any]], max_tokens: int, system_prompt: str | None
) -> Any:
    """The ``sampling/createMessage`` params of a tool's ``ctx.sample``."""
    import mcp_types as types

    return types.CreateMessageRequestParams(
        messages=[types.SamplingMessage.model_validate(m) for m in messages],
        max_tokens=max_tokens,
        system_prompt=system_prompt,
    )


def sampled(answer: Any) -> Sampled:
    """A ``CreateMessageResult`` as the tool sees it: its text blocks joined."""
    content = answer.content
    blocks = content if isinstance(content, list) else [content]
    text = "\n".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
    return Sampled(text, answer.model, answer.stop_reason)


_SOON: set[asyncio.Task[Any]] = set()  # the loop keeps only weak references to tasks


def run_soon(loop: asyncio.AbstractEventLoop, coro: Any) -> None:
    """Start ``coro`` on ``loop`` without waiting, from the loop itself or from a sync tool's
    worker thread (fire and forget: progress and status updates)."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        task = loop.create_task(coro)
        _SOON.add(task)
        task.add_done_callback(_SOON.discard)
    else:
        asyncio.run_coroutine_threadsafe(coro, loop)


def _dump(model: Any) -> dict[str, Any]:
    return dict(model.model_dump(by_alias=True, mode="json", exclude_none=True))
