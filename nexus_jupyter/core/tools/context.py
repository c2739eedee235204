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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from .channel import (
    CURRENT_CHANNEL,
    AnswerMismatch,
    CallerUnavailable,
    ChannelLogger,
    ClientChannel,
    Elicitation,
    Sampled,
)
from .credential_value import PendingCredential
from .elicit_check import answer_errors

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .spec import Permission

__all__ = [
    "CLI_CALLER",
    "LOCAL_CALLER",
    "MCP_CALLER",
    "NOTEBOOK_CALLER",
    "REST_CALLER",
    "REST_OWNER_CALLER",
    "TEST_CLIENT",
    "Caller",
    "CancellationToken",
    "CredentialsView",
    "NoCredentials",
    "ProgressCallback",
    "RequestInfo",
    "ToolContext",
]

ProgressCallback = Callable[[float, float | None, str | None], Any]
#: The kind of face that took a call; errors are worded for it (a CLI user passes ``--yes``,
#: an agent over MCP asks its user, a notebook user presses Run).
Face = Literal["python", "notebook", "cli", "mcp", "rest"]
#: Which entry of nex.yaml's ``grant`` applies (``default`` when the face has none).
GrantKey = Literal["default", "notebook", "cli", "mcp", "rest"]
#: When a sync tool may run on the caller's event loop instead of a worker thread:
#: ``after_fast_streak`` (a local loop), ``after_long_fast_streak`` (a server loop that
#: serves other sessions too) or ``never`` (a loop whose stall would freeze a UI).
InlineRule = Literal["after_fast_streak", "after_long_fast_streak", "never"]

#: The client name of a tool-test run's calls: they are audited, but they are not use, so
#: they count in no call statistics (a test run on every save would swamp a tool's figures).
TEST_CLIENT = "test"

_request_counter = itertools.count(1)


@runtime_checkable
class CredentialsView(Protocol):
    """Read access to credentials, as tools see it. Values are never logged or shown.
    ``await get(...)`` in an async tool, ``get_sync(...)`` in a sync one."""

    def get(self, service: str, key: str = "api_key") -> Awaitable[str]: ...

    def get_sync(self, service: str, key: str = "api_key") -> str: ...

    def has(self, service: str, key: str | None = None) -> bool: ...


class NoCredentials:
    """The credentials view of a registry that has no credential store: everything is missing."""

    def get(self, service: str, key: str = "api_key") -> PendingCredential:
        return PendingCredential(service, key, self.get_sync)

    def get_sync(self, service: str, key: str = "api_key") -> str:
        from ..errors import MissingCredential

        raise MissingCredential(service, key)

    def has(self, service: str, key: str | None = None) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class Caller:
    """What kind of caller a face is, as that face describes it. The policy and the call
    pipeline decide from these fields alone, never from a face's name.

    - ``face``: the kind of face, for audit lines and for wording errors.
    - ``remote``: the call comes from another process or machine; a request that names no
      principal is ``unknown`` (else ``local``, the person at this machine).
    - ``grant``: the entry of nex.yaml's ``grant`` that caps this caller.
    - ``can_approve``: someone here can answer an approval prompt (``registry.approver``).
    - ``inline``: when a sync tool may run on the caller's event loop (:data:`InlineRule`).
    - ``configures``: the person at this face may edit the server's files, its ``nex.yaml``
      among them (a Jupyter user allowed to write the server's contents), so a refusal names
      the line that allows the call even though the caller is remote. An agent is never told.
    """

    face: Face = "python"
    remote: bool = False
    grant: GrantKey = "default"
    can_approve: bool = True
    inline: InlineRule = "after_fast_streak"
    configures: bool = False

    @property
    def anonymous_principal(self) -> str:
        """The principal of a request that names none."""
        return "unknown" if self.remote else "local"


#: Python code in this process (a script, a cell): the default caller.
LOCAL_CALLER = Caller()
#: A person in the notebook (magics, forms, ``call_tool``): can approve in the form.
NOTEBOOK_CALLER = Caller("notebook", grant="notebook")
#: ``nexus-tools call``: local, but no prompt can reach it (it passes ``--yes`` instead).
CLI_CALLER = Caller("cli", grant="cli", can_approve=False)
#: An agent over MCP: remote and unnamed, no one to approve; its server loop serves other
#: sessions, so sync tools run on it only after a long fast streak.
MCP_CALLER = Caller(
    "mcp", remote=True, grant="mcp", can_approve=False, inline="after_long_fast_streak"
)
#: The REST API (the JupyterLab sidebar): remote, approves by resending with ``approved``;
#: its loop is the Jupyter server's, where a stall freezes every open notebook.
REST_CALLER = Caller("rest", remote=True, grant="rest", can_approve=False, inline="never")
#: :data:`REST_CALLER` for a Jupyter user who may also write the server's files (its nex.yaml).
REST_OWNER_CALLER = Caller(
    "rest", remote=True, grant="rest", can_approve=False, inline="never", configures=True
)
#: The caller of a :class:`RequestInfo` built with only ``client=`` set, by client name.
_CALLERS_BY_CLIENT: dict[str | None, Caller] = {
    None: LOCAL_CALLER,
    "kernel": LOCAL_CALLER,  # names local code used before callers were described
    "widget": LOCAL_CALLER,
    **{c.face: c for c in (LOCAL_CALLER, NOTEBOOK_CALLER, CLI_CALLER, MCP_CALLER, REST_CALLER)},
}
#: A client name nobody documented: remote and unnamed (as before callers were described).
_UNKNOWN_CLIENT = Caller(remote=True)


@dataclass(frozen=True, slots=True, init=False)
class RequestInfo:
    """Who is calling and under which ids. ``principal`` is ``None`` when the request names
    no one (see :attr:`Caller.anonymous_principal`).

    ``caller`` describes the face that took the call; ``client`` is its name in audit lines.
    Give either: a request built with ``client="mcp"`` alone gets that face's caller, one
    built with neither is local Python code. ``ceiling`` caps the granted level further for
    this request alone (an authenticated client's token scopes); it never raises it.
    """

    request_id: str
    principal: str | None
    session_id: str | None
    client: str  # "notebook", "rest", "mcp", "cli", ...: the caller's face unless named
    caller: Caller
    ceiling: Permission | None

    def __init__(
        self,
        request_id: str | None = None,
        principal: str | None = None,
        session_id: str | None = None,
        client: str | None = None,
        caller: Caller | None = None,
        ceiling: Permission | None = None,
    ) -> None:
        if caller is None:
            caller = _CALLERS_BY_CLIENT.get(client, _UNKNOWN_CLIENT)
        set_field = object.__setattr__  # frozen: fields are set once, here
        set_field(self, "request_id", request_id or f"req-{next(_request_counter)}")
        set_field(self, "principal", principal)
        set_field(self, "session_id", session_id)
        set_field(self, "client", client or caller.face)
        set_field(self, "caller", caller)
        set_field(self, "ceiling", ceiling)

    @property
    def principal_name(self) -> str:
        """``principal``, else ``local`` or ``unknown`` (:attr:`Caller.anonymous_principal`)."""
        return self.principal or self.caller.anonymous_principal


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

    - ``credentials``: ``await ctx.credentials.get(service, key)`` (in a sync tool
      ``ctx.credentials.get_sync(service, key)``), ``ctx.credentials.has(s)``
    - ``request``: :class:`RequestInfo` (request id, principal, session, client, caller)
    - ``cancellation`` / ``cancelled``: the cancel signal of this call
    - ``log``: a logger named after the tool; over MCP its messages also reach the client
    - ``progress(current, total=None, message=None)``: report progress (sync or awaitable)
    - ``await elicit(message, schema)`` / ``await sample(prompt)``: ask the calling client's
      user or model (over MCP; see :mod:`.channel`)
    - ``await start_task()``: from here on, run as a task (see ``@tool(task=...)``)
    - ``tool_name``: the name the tool was called under
    """

    __slots__ = (
        "_progress",
        "cancellation",
        "channel",
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
        self.channel: ClientChannel | None = CURRENT_CHANNEL.get()
        self.log = ChannelLogger(logging.getLogger(f"nexus_jupyter.tool.{tool_name}"), self.channel)
        self._progress = progress

    @property
    def cancelled(self) -> bool:
        return self.cancellation.cancelled

    @property
    def reports_progress(self) -> bool:
        """Whether someone listens to :meth:`progress` (a face that shows or sends it)."""
        return self._progress is not None

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
        :class:`CallerUnavailable` when the call did not come from such a client, and
        :class:`AnswerMismatch` (naming each field) when the client accepts with content
        that does not fit ``schema``; fields left out take the ``default`` the schema gives."""
        if isinstance(schema, type):
            schema = schema.model_json_schema()
        channel = self._require_channel("ask its user for input")
        schema = dict(schema)
        answer = await channel.elicit(message, schema, key=key)
        if not answer.accepted:
            return answer
        # SEP-1034: a field the user left out takes the default the schema declares
        content = dict(answer.content)
        for name, field_schema in (schema.get("properties") or {}).items():
            if isinstance(field_schema, dict) and "default" in field_schema:
                content.setdefault(name, field_schema["default"])
        problems = answer_errors(schema, content)
        if problems:
            raise AnswerMismatch(
                f"The answer to {message!r} does not fit the question: "
                + "; ".join(problems)
                + ". The client accepted with content outside the requested schema; "
                "ask again, or take the value as an argument.",
                problems,
            )
        return Elicitation(answer.action, content)

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
        channel = self._require_channel("ask its model (sampling)")
        return await channel.sample(
            messages, max_tokens=max_tokens, system_prompt=system_prompt, key=key
        )

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """The calling client's roots (``{"uri", "name"}`` dicts): the folders it works in."""
        return await self._require_channel("list the client's roots").list_roots(key=key)

    async def start_task(self) -> None:
        """Go on as a task (tools declared ``@tool(task=..., task_start="tool")``): a client
        that runs this call as a task gets its task now and polls for the rest, so ask
        quick questions before this and do the long work after. Elsewhere it does nothing."""
        start = getattr(self.channel, "start_task", None)
        if start is not None:
            await start()

    def _require_channel(self, what: str) -> ClientChannel:
        if self.channel is None:
            raise CallerUnavailable(
                f"Tool {self.tool_name!r} tried to {what}, but this call has no client that "
                "can answer: only calls over MCP can. Give the value as an argument instead."
            )
        return self.channel

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
