"""What an MCP server offers besides tools, and what it asks during calls, for
:class:`~nexus_jupyter.sources.mcp.McpSource`.

- :func:`list_offers`: its resources, resource templates and prompts, as catalog entries
  that read and render through the server. Prompts are namespaced like tools
  (``mcp__<server>__<prompt>``); resource URIs stay as the server made them, so the
  ``resource_link``s its tools return can be read through nexus.
- :class:`Relay`: the server's log messages, elicitation, sampling and roots requests during
  a call go to the client that made that call (the :class:`ClientChannel` of the nexus call in
  flight), however many calls are in flight, when the request can be traced to its call:

  * at 2026-07-28 the SDK client puts the questions of a call (input-required results) to
    its callbacks from the call's own task;
  * over streamable HTTP at 2025-11-25 the server sends a call's requests and log messages
    on that call's response stream, and the SDK runs the callbacks in a copy of the
    contextvars of the task that sent the call;
  * a 2025-11-25 task's requests name their task.

  So :meth:`Relay.calling` records the caller in a context variable. What cannot be traced
  (a 2025-11-25 server over stdio: one pipe, and its requests do not say which call they
  belong to) goes to the one call in flight; with several calls in flight, a
  request is refused with an error that says why (asking the wrong user is worse), and a
  log message goes to the local log. Without a caller, logs go to the local log and requests are
  refused with a clear error.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..core.tools.channel import CallerUnavailable, ClientChannel, InputRequired
from ..core.tools.offers import PromptArgument, PromptDef, ResourceDef

__all__ = ["Relay", "list_offers"]

log = logging.getLogger(__name__)

#: ``_meta`` key with which a 2025-11-25 task's requests name their task.
RELATED_TASK_KEY = "io.modelcontextprotocol/related-task"

OnLoop = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]

#: The relay and caller of the upstream call this task (or a copy of its context) serves.
_CALLING: contextvars.ContextVar[tuple[Relay, ClientChannel] | None] = contextvars.ContextVar(
    "nexus_upstream_caller", default=None
)


def _dump(model: Any) -> dict[str, Any]:
    return dict(model.model_dump(by_alias=True, mode="json", exclude_none=True))


def _unused(**_: Any) -> None:  # the function slot of entries that forward instead
    return None


async def _pages(fetch: Callable[[str | None], Awaitable[Any]], field: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(100):  # a paginator that never ends must not hang the source
        page = await fetch(cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            break
    return items


async def list_offers(
    client: Any, namespace: str, on_loop: OnLoop
) -> list[ResourceDef | PromptDef]:
    """The server's resources, templates and prompts (those its capabilities announce)."""
    caps = client.server_capabilities
    offers: list[ResourceDef | PromptDef] = []

    async def read(uri: str) -> list[dict[str, Any]]:
        result = await on_loop(lambda: client.read_resource(uri))
        return [_dump(c) for c in result.contents]

    if caps is not None and caps.resources is not None:
        listed = await _pages(
            lambda c: client.list_resources(cursor=c, cache_mode="refresh"), "resources"
        )
        templates = await _pages(
            lambda c: client.list_resource_templates(cursor=c, cache_mode="refresh"),
            "resource_templates",
        )
        watch = None
        if caps.resources.subscribe:

            async def watch(uri: str, on: bool) -> Any:
                if on:
                    return await on_loop(lambda: client.subscribe_resource(uri))
                return await on_loop(lambda: client.unsubscribe_resource(uri))

        for r in listed:
            offers.append(_resource(str(r.uri), r, namespace, read, watch))
        for t in templates:
            offers.append(_resource(t.uri_template, t, namespace, read, watch))
    if caps is not None and caps.prompts is not None:
        prompts = await _pages(
            lambda c: client.list_prompts(cursor=c, cache_mode="refresh"), "prompts"
        )
        for p in prompts:
            offers.append(_prompt(p, namespace, client, on_loop))
    return offers


def _resource(uri: str, remote: Any, namespace: str, read: Any, watch: Any) -> ResourceDef:
    return ResourceDef(
        uri=uri,
        fn=_unused,
        name=f"{namespace}__{remote.name}",
        description=remote.description or "",
        mime_type=remote.mime_type,
        title=remote.title,
        forward=read,
        remote=True,
        watch=watch,
    )


def _prompt(remote: Any, namespace: str, client: Any, on_loop: OnLoop) -> PromptDef:
    async def render(arguments: dict[str, str], ctx: Any = None) -> list[dict[str, Any]]:
        result = await on_loop(lambda: client.get_prompt(remote.name, arguments))
        return [_dump(m) for m in result.messages]

    return PromptDef(
        name=f"{namespace}__{remote.name}",
        fn=_unused,
        description=remote.description or "",
        arguments=tuple(
            PromptArgument(a.name, bool(a.required), a.description) for a in remote.arguments or ()
        ),
        title=remote.title,
        forward=render,
    )


class Relay:
    """Routes a server's requests and log messages to the client of the nexus call in flight."""

    def __init__(self, server: str) -> None:
        self.server = server
        self._callers: list[ClientChannel] = []
        self._tasks: dict[str, ClientChannel] = {}  # upstream task id -> the call's client

    def calling(self, caller: ClientChannel | None) -> _InFlight:
        """``with relay.calling(ctx.channel): ...`` around a call to the server."""
        return _InFlight(self, caller)

    def task_started(self, task_id: str, caller: ClientChannel | None) -> Callable[[], None]:
        """Send the questions the server tags with this task to ``caller`` (exactly, however
        many calls are in flight); returns the function that forgets the task."""
        if caller is not None:
            self._tasks[task_id] = caller

        def forget() -> None:
            self._tasks.pop(task_id, None)

        return forget

    @property
    def calls_in_flight(self) -> int:
        """How many calls to the server are waiting for their answer."""
        return len(self._callers)

    @property
    def current(self) -> ClientChannel | None:
        """The caller of the call this code runs for; else the only caller in flight."""
        calling = _CALLING.get()
        if calling is not None and calling[0] is self:
            return calling[1]
        callers = set(self._callers)
        return next(iter(callers)) if len(callers) == 1 else None

    @property
    def ambiguous(self) -> bool:
        """Several calls are in flight and this code cannot tell which one it serves."""
        calling = _CALLING.get()
        return (calling is None or calling[0] is not self) and len(set(self._callers)) > 1

    def _caller_of(self, params: Any) -> ClientChannel | None:
        """The client a server request is for: the one whose task it names (2025-11-25
        tasks tag their requests), else the one whose call it came with."""
        meta = getattr(params, "meta", None)
        if meta is not None and not isinstance(meta, dict):
            meta = _dump(meta)
        related = meta.get(RELATED_TASK_KEY) if meta else None
        if isinstance(related, dict) and related.get("taskId") in self._tasks:
            return self._tasks[related["taskId"]]
        return self.current

    def _require(self, what: str, params: Any = None) -> ClientChannel:
        caller = self._caller_of(params)
        if caller is None and self.ambiguous:
            raise CallerUnavailable(
                f"MCP server {self.server!r} asked to {what} while {len(set(self._callers))} "
                "calls to it were in flight, and its request does not say which call it "
                "belongs to (a 2025-11-25 server over stdio), so nexus refused rather than "
                "ask the wrong user. Run the call again on its own, or connect to the server "
                "over HTTP (url: in nex.yaml), where each question comes with its call."
            )
        if caller is None:
            raise CallerUnavailable(
                f"MCP server {self.server!r} asked to {what}, but the call did not come "
                "from a client that can answer (only calls over MCP can)."
            )
        return caller

    async def _ask(self, caller: ClientChannel, coro: Callable[[], Awaitable[Any]]) -> Any:
        # The caller belongs to the loop serving its client, which may not be this one.
        loop = getattr(caller, "loop", None)
        if loop is None or loop is asyncio.get_running_loop():
            return await coro()
        future = asyncio.run_coroutine_threadsafe(_awaiting(coro), loop)
        return await asyncio.wrap_future(future)

    async def on_elicit(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        try:
            caller = self._require("ask the user", params)
            schema = dict(getattr(params, "requested_schema", None) or {})
            answer = await self._ask(caller, lambda: caller.elicit(params.message, schema))
        except (CallerUnavailable, InputRequired) as exc:
            # InputRequired: the question went into the nexus call's input-required result;
            # this upstream call ends here and runs again once the client has answered.
            return types.ErrorData(code=types.INVALID_REQUEST, message=str(exc))
        content = dict(answer.content or {})
        if answer.action == "accept":
            # SEP-1034: a field the user left out takes the default the schema declares.
            for field_name, field_schema in (schema.get("properties") or {}).items():
                if isinstance(field_schema, dict) and "default" in field_schema:
                    content.setdefault(field_name, field_schema["default"])
        return types.ElicitResult(action=answer.action, content=content or None)

    async def on_sample(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        messages = [_dump(m) for m in params.messages]
        try:
            caller = self._require("ask the model (sampling)", params)
            said = await self._ask(
                caller,
                lambda: caller.sample(
                    messages, max_tokens=params.max_tokens, system_prompt=params.system_prompt
                ),
            )
        except (CallerUnavailable, InputRequired) as exc:
            # InputRequired: the question went into the nexus call's input-required result;
            # this upstream call ends here and runs again once the client has answered.
            return types.ErrorData(code=types.INVALID_REQUEST, message=str(exc))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=said.text),
            model=said.model or "unknown",
            stop_reason=said.stop_reason,
        )

    async def on_roots(self, context: Any) -> Any:
        import mcp_types as types

        try:
            caller = self._require("list the client's roots")
            roots = await self._ask(caller, lambda: caller.list_roots())
        except (CallerUnavailable, InputRequired) as exc:
            # InputRequired: the question went into the nexus call's input-required result;
            # this upstream call ends here and runs again once the client has answered.
            return types.ErrorData(code=types.INVALID_REQUEST, message=str(exc))
        return types.ListRootsResult.model_validate({"roots": roots})

    async def answer_task_question(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A question a 2026-07-28 task of the server asks (in ``tasks/get``), put to the
        caller like any other; raises :class:`CallerUnavailable` when nobody can answer."""
        import mcp_types as types

        if method == "elicitation/create":
            result = await self.on_elicit(
                None, types.ElicitRequestFormParams.model_validate(params)
            )
        elif method == "sampling/createMessage":
            result = await self.on_sample(
                None, types.CreateMessageRequestParams.model_validate(params)
            )
        elif method == "roots/list":
            result = await self.on_roots(None)
        else:
            raise CallerUnavailable(
                f"MCP server {self.server!r} asked {method!r} in a task; nexus cannot answer that."
            )
        if isinstance(result, types.ErrorData):
            raise CallerUnavailable(result.message)
        return _dump(result)

    async def on_log(self, params: Any) -> None:
        caller = self.current
        data = params.data if isinstance(params.data, str) else repr(params.data)
        logger = f"{self.server}/{params.logger}" if params.logger else self.server
        if caller is not None:
            caller.log(params.level, data, logger)
        else:
            log.info("MCP server %s [%s]: %s", logger, params.level, data)


async def _awaiting(coro: Callable[[], Awaitable[Any]]) -> Any:
    return await coro()


class _InFlight:
    def __init__(self, relay: Relay, caller: ClientChannel | None) -> None:
        self.relay, self.caller = relay, caller
        self._token: contextvars.Token[tuple[Relay, ClientChannel] | None] | None = None

    def __enter__(self) -> None:
        if self.caller is not None:
            self.relay._callers.append(self.caller)
            self._token = _CALLING.set((self.relay, self.caller))

    def __exit__(self, *exc: object) -> None:
        if self.caller is not None:
            self.relay._callers.remove(self.caller)
        if self._token is not None:
            _CALLING.reset(self._token)
