"""The MCP client of one ``tools/call``, as a running tool reaches it (a
:class:`~nexus_jupyter.core.tools.caller.Caller`): log messages, elicitation and sampling.

Log messages ride the request's own stream, in order, and are all sent before the call's
result. Which levels go out: at 2025-11-25 and earlier, the level the client set with
``logging/setLevel`` on its session (every level until it sets one); at 2026-07-28, the level
the request opted into in its ``_meta`` (none without it).

Elicitation and sampling are server-to-client requests tied to the call, so they only work
on a connection that has a back channel (the handshake revisions); at 2026-07-28 such a
request must come back as an input-required result instead, which is not done yet, so a tool
gets a clear :class:`CallerUnavailable` there.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from weakref import WeakKeyDictionary

from ..core.tools.caller import CallerUnavailable, Elicitation, Sampled

__all__ = ["LogLevels", "McpCaller"]

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


class McpCaller:
    """The client of one ``tools/call`` request; made per call by the MCP server."""

    def __init__(self, ctx: Any, levels: LogLevels) -> None:
        self.ctx = ctx
        self.loop = asyncio.get_running_loop()
        self.allowed = levels.allowed(ctx)
        self._last: asyncio.Future[None] | None = None

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
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            raise CallerUnavailable(
                f"Cannot {what} at MCP {self.ctx.protocol_version}: that needs an "
                "input-required result, which nexus-tools serve does not send yet. "
                "Connect with protocol revision 2025-11-25 or give the value as an argument."
            )
        wanted = types.ClientCapabilities.model_validate({capability: {}})
        if not self.ctx.session.check_client_capability(wanted):
            raise CallerUnavailable(
                f"Cannot {what}: the MCP client did not declare the {capability!r} "
                "capability. Give the value as an argument instead."
            )

    async def elicit(self, message: str, schema: dict[str, Any]) -> Elicitation:
        import mcp_types as types
        from mcp.shared.message import ServerMessageMetadata

        self._check("elicitation", "ask the user")
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
        )
        answer = await self.ctx.session.send_request(
            request,
            types.ElicitResult,
            metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id),
        )
        return Elicitation(answer.action, dict(answer.content or {}))

    async def sample(
        self, messages: list[dict[str, Any]], *, max_tokens: int, system_prompt: str | None
    ) -> Sampled:
        import mcp_types as types
        from mcp.shared.message import ServerMessageMetadata

        self._check("sampling", "ask the client's model")
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[types.SamplingMessage.model_validate(m) for m in messages],
                max_tokens=max_tokens,
                system_prompt=system_prompt,
            )
        )
        answer = await self.ctx.session.send_request(
            request,
            types.CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=self.ctx.request_id),
        )
        content = answer.content
        blocks = content if isinstance(content, list) else [content]
        text = "\n".join(getattr(b, "text", "") for b in blocks if getattr(b, "type", "") == "text")
        return Sampled(text, answer.model, answer.stop_reason)
