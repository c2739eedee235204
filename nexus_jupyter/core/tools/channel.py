"""The client that made a call, as far as a running tool may reach it: :class:`ClientChannel`.

A face that serves calls to a client able to answer back (the MCP server) sets
:data:`CURRENT_CHANNEL` around each call; the :class:`~.context.ToolContext` made for that call
picks it up, so a tool can log to the client, ask its user (elicitation) or its model
(sampling)::

    @tool
    async def book(ctx: ToolContext) -> str:
        ctx.log.info("looking for rooms")                 # also sent to the MCP client
        answer = await ctx.elicit("Which date?", {"type": "object",
                                  "properties": {"date": {"type": "string"}}})
        if not answer.accepted:
            return "cancelled"
        summary = await ctx.sample("Summarise: ...", max_tokens=200)
        return summary.text

Calls from the notebook, REST or the CLI have no caller: ``ctx.elicit`` and ``ctx.sample``
then raise :class:`CallerUnavailable`, and ``ctx.log`` only logs locally.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..errors import NexusError

__all__ = [
    "CURRENT_CHANNEL",
    "AnswerMismatch",
    "CallerUnavailable",
    "ChannelLogger",
    "ClientChannel",
    "Elicitation",
    "InputRequired",
    "Sampled",
    "log_level_name",
]

ElicitAction = Literal["accept", "decline", "cancel"]


class CallerUnavailable(NexusError, RuntimeError):
    """The client that made this call cannot answer (no client, or it lacks the capability)."""


class AnswerMismatch(NexusError, ValueError):
    """The client accepted ``ctx.elicit`` with content that does not fit the requested schema
    (``problems`` names each field)."""

    def __init__(self, message: str, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(message)


class InputRequired(Exception):
    """Raised inside a tool that asked a 2026-07-28 MCP client something not yet answered.

    The call then ends with an input-required result; the client answers and calls again,
    and the tool runs again from the start, this time getting its answers. Let it pass
    through (do not catch ``Exception`` around ``ctx.elicit``/``ctx.sample``)."""


@dataclass(frozen=True, slots=True)
class Elicitation:
    """The user's answer to ``ctx.elicit``: ``accepted`` with ``content``, or declined/cancelled."""

    action: ElicitAction
    content: dict[str, Any] = field(default_factory=dict)

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


@dataclass(frozen=True, slots=True)
class Sampled:
    """The client model's answer to ``ctx.sample``."""

    text: str
    model: str = ""
    stop_reason: str | None = None


class ClientChannel(Protocol):
    """What the serving face offers a tool about the client of the current call."""

    def log(self, level: str, message: str, logger: str) -> None:
        """Send a log message to the client (fire and forget; callable from any thread)."""

    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> Elicitation: ...

    async def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None,
        key: str | None = None,
    ) -> Sampled: ...

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]: ...


CURRENT_CHANNEL: ContextVar[ClientChannel | None] = ContextVar("nexus_current_caller", default=None)


def log_level_name(levelno: int) -> str:
    """The MCP (syslog) level name for a :mod:`logging` level number."""
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    if levelno >= logging.INFO:
        return "info"
    return "debug"


class ChannelLogger(logging.LoggerAdapter[logging.Logger]):
    """A tool's logger: logs as usual and also sends each message to the caller, if any.

    Every level is offered to the caller, which applies the level its client asked for
    (``logging/setLevel``); the local logger keeps its own configuration.
    """

    def __init__(self, logger: logging.Logger, caller: ClientChannel | None) -> None:
        super().__init__(logger, {})
        self.caller = caller

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        if self.caller is not None:
            try:
                text = str(msg) % args if args else str(msg)
            except (TypeError, ValueError):
                text = f"{msg} {args}"
            self.caller.log(log_level_name(level), text, self.logger.name.rsplit(".", 1)[-1])
        if self.logger.isEnabledFor(level):
            super().log(level, msg, *args, **kwargs)
