"""What a running tool can reach: :class:`ToolContext`.

A parameter annotated ``ToolContext`` is filled in by the registry on every call and never
appears in the tool's schema::

    @tool
    async def fetch(url: str, *, ctx: ToolContext) -> str:
        token = await ctx.credentials.get("github", "token")
        await ctx.progress(1, 3, "downloading")
        if ctx.cancelled:
            return "stopped"
        ...
"""

from __future__ import annotations

import inspect
import itertools
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .caller import CURRENT_CALLER, Caller, CallerLogger, CallerUnavailable, Elicitation, Sampled

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "CancellationToken",
    "CredentialsView",
    "NoCredentials",
    "ProgressCallback",
    "RequestInfo",
    "ToolContext",
]

ProgressCallback = Callable[[float, float | None, str | None], Any]

_request_counter = itertools.count(1)


@runtime_checkable
class CredentialsView(Protocol):
    """Read access to credentials, as tools see it. Values are never logged or shown."""

    async def get(self, service: str, key: str = "api_key") -> str: ...

    def has(self, service: str, key: str | None = None) -> bool: ...


class NoCredentials:
    """The credentials view of a registry that has no credential store: everything is missing."""

    async def get(self, service: str, key: str = "api_key") -> str:
        from ..errors import MissingCredential

        raise MissingCredential(service, key)

    def has(self, service: str, key: str | None = None) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """Who is calling and under which ids. ``principal`` is ``None`` for the local user."""

    request_id: str = field(default_factory=lambda: f"req-{next(_request_counter)}")
    principal: str | None = None
    session_id: str | None = None
    client: str | None = None  # "notebook", "rest", "mcp", "cli", ...


class CancellationToken:
    """A thread-safe cancel flag that async and sync tools can both watch.

    Sync tools poll ``token.cancelled`` (or call ``token.raise_if_cancelled()``); async tools
    can also ``await token.wait()``. The registry cancels the running task as well, so an
    async tool stops at its next ``await`` even if it never looks.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], Any]] = []
        self._lock = threading.Lock()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_cancel(self, callback: Callable[[], Any]) -> None:
        """Run ``callback`` when cancelled (at once if already cancelled)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            import asyncio

            raise asyncio.CancelledError("the call was cancelled")

    async def wait(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def _resolve() -> None:
            if not fut.done():
                fut.set_result(None)

        def _wake() -> None:
            loop.call_soon_threadsafe(_resolve)

        self.on_cancel(_wake)
        await fut


class ToolContext:
    """Handed to a tool that asks for it (a parameter annotated ``ToolContext``).

    - ``credentials``: ``await ctx.credentials.get(service, key)``, ``ctx.credentials.has(s)``
    - ``request``: :class:`RequestInfo` (request id, principal, session, client)
    - ``cancellation`` / ``cancelled``: the cancel signal of this call
    - ``log``: a logger named after the tool; over MCP its messages also reach the client
    - ``progress(current, total=None, message=None)``: report progress (sync or awaitable)
    - ``await elicit(message, schema)`` / ``await sample(prompt)``: ask the calling client's
      user or model (over MCP; see :mod:`.caller`)
    - ``tool_name``: the name the tool was called under
    """

    __slots__ = (
        "_progress",
        "caller",
        "cancellation",
        "credentials",
        "log",
        "request",
        "tool_name",
    )

    def __init__(
        self,
        *,
        tool_name: str,
        credentials: CredentialsView | None = None,
        request: RequestInfo | None = None,
        cancellation: CancellationToken | None = None,
        progress: ProgressCallback | None = None,
    ) -> None:
        self.tool_name = tool_name
        self.credentials: CredentialsView = credentials or NoCredentials()
        self.request = request or RequestInfo()
        self.cancellation = cancellation or CancellationToken()
        # The client that made this call, when the face serving it set one (MCP).
        self.caller: Caller | None = CURRENT_CALLER.get()
        self.log = CallerLogger(logging.getLogger(f"nexus_jupyter.tool.{tool_name}"), self.caller)
        self._progress = progress

    @property
    def cancelled(self) -> bool:
        return self.cancellation.cancelled

    def progress(
        self, current: float, total: float | None = None, message: str | None = None
    ) -> Awaitable[None]:
        """Report progress. Works from sync tools (call it) and async tools (``await`` it)."""
        result = self._progress(current, total, message) if self._progress else None
        return _Done(result)

    async def elicit(
        self,
        message: str,
        schema: dict[str, Any] | type[BaseModel],
        *,
        key: str | None = None,
    ) -> Elicitation:
        """Ask the calling client's user for input described by ``schema`` (a flat JSON
        Schema object of primitive fields, or a pydantic model). ``key`` names the question
        across the rounds of a 2026-07-28 call (default: its place in the call). Raises
        :class:`CallerUnavailable` when the call did not come from such a client."""
        if isinstance(schema, type):
            schema = schema.model_json_schema()
        caller = self._require_caller("ask its user for input")
        return await caller.elicit(message, dict(schema), key=key)

    async def sample(
        self,
        prompt: str | list[dict[str, Any]],
        *,
        max_tokens: int = 512,
        system_prompt: str | None = None,
        key: str | None = None,
    ) -> Sampled:
        """Ask the calling client's model to complete ``prompt`` (text, or MCP sampling
        messages). Raises :class:`CallerUnavailable` without such a client."""
        messages = (
            [{"role": "user", "content": {"type": "text", "text": prompt}}]
            if isinstance(prompt, str)
            else list(prompt)
        )
        caller = self._require_caller("ask its model (sampling)")
        return await caller.sample(
            messages, max_tokens=max_tokens, system_prompt=system_prompt, key=key
        )

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """The calling client's roots (``{"uri", "name"}`` dicts): the folders it works in."""
        return await self._require_caller("list the client's roots").list_roots(key=key)

    def _require_caller(self, what: str) -> Caller:
        if self.caller is None:
            raise CallerUnavailable(
                f"Tool {self.tool_name!r} tried to {what}, but this call has no client that "
                "can answer: only calls over MCP can. Give the value as an argument instead."
            )
        return self.caller

    def __repr__(self) -> str:
        return f"ToolContext(tool={self.tool_name!r}, request_id={self.request.request_id!r})"


class _Done:
    """An awaitable that is already finished, so ``ctx.progress(...)`` works with or without
    ``await``; if the progress callback returned an awaitable, awaiting this awaits it."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Any) -> None:
        self._inner = inner if inspect.isawaitable(inner) else None

    def __await__(self) -> Any:
        if self._inner is not None:
            return self._inner.__await__()
        return iter(())
