"""MCP servers as a source: their tools in the registry as ``mcp__<server>__<tool>``.

>>> src = McpSource("time", command="mcp-server-time")       # doctest: +SKIP
>>> reg.add_source(src)                                      # connects in the background
>>> reg.call_sync("mcp__time__get_current_time", {"timezone": "UTC"})   # doctest: +SKIP

The connection lives on the registry's background loop. ``load()`` never blocks: it returns
the last tools the server listed (none before the first connect). The source's status
(``registry.sources()`` details) says ``connecting`` (the first attempt), ``ready``,
``signing in``, ``error`` or ``reconnecting`` (trying again after a failure: still an error,
with the last failure as the reason), and the last lines of a stdio server's stderr. A
server that exits or drops is reconnected with backoff; meanwhile its tools stay listed as
unavailable. ``tools/list_changed`` (or a ``subscriptions/listen`` event on 2026-07-28
connections) refreshes the tools.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import SourceError, ToolDefinitionError, ToolUnavailable
from ..core.registry.publisher import SourcePublisher
from ..core.tools.context import ToolContext
from ..core.tools.result import ToolResult
from ..core.tools.spec import SourceKind
from ..core.tools.tool import Tool
from .mcp_session import (
    ClosingTransport,
    StderrTail,
    WatchedTransport,
    describe,
    is_connection_error,
    result_from_mcp,
    tool_from_mcp,
)
from .mcp_tasks import call_as_task, runs_tasks, tasks_client_extension
from .mcp_upstream import Relay, list_offers
from .parent_bound import parent_bound

__all__ = ["McpSource"]

log = logging.getLogger(__name__)

_BACKOFF_START_S = 0.25
_BACKOFF_MAX_S = 30.0
_CONNECT_TIMEOUT_S = 60.0
_STABLE_S = 10.0


class McpSource:
    """The tools of one MCP server, over stdio (``command``) or streamable HTTP (``url``).

    ``timeout`` is the default per-call timeout of the server's tools (seconds, or ``None``);
    ``stderr_lines`` how many stderr lines the status keeps. Strings may hold ``${env:VAR}``
    and ``${credentials:service/key}`` (from ``credentials``, a credential store): they are
    filled in at each connect, so a credential set later is picked up by the next attempt.
    """

    kind: SourceKind = "mcp"

    def __init__(
        self,
        name: str,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        timeout: float | None = None,
        stderr_lines: int = 40,
        credentials: Any = None,
    ) -> None:
        if (command is None) == (url is None):
            raise SourceError(
                f"MCP server {name!r} needs exactly one of command= (stdio) or url= (streamable "
                f"HTTP), got command={command!r} url={url!r}."
            )
        self.server = name
        self.name = f"mcp:{name}"
        self.namespace = f"mcp__{name}"
        self.command, self.args, self.env, self.cwd = command, list(args), dict(env or {}), cwd
        self.url, self.headers = url, dict(headers or {})
        self.auth = None
        if auth is not None:
            from ..core.config.mcp_auth import mcp_auth_settings

            self.auth = mcp_auth_settings(name, auth)
        self._refused: str | None = None  # why the server last answered 401/403
        self.timeout = timeout
        self.credentials = credentials
        self.state = "idle"
        self.reason: str | None = None
        self.protocol_version: str | None = None
        self.server_info: str | None = None
        self.connects = 0
        self._stderr_lines = stderr_lines
        self._stderr: StderrTail | None = None
        self._transport_used: Any = None  # the last session's (it says how the server ended)
        self._tools: list[Tool] = []
        self._task_only: set[str] = set()  # tools the server runs only as tasks
        self._skipped: dict[str, str] = {}
        self._publisher: SourcePublisher | None = None
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        # Created unbound; asyncio binds them to the registry's loop on first use.
        self._dropped = asyncio.Event()
        self._relist = asyncio.Event()
        self._ready_at = 0.0
        self.relay = Relay(name)  # its logs and questions go to the client of the call
        # The connection imports the SDK on the registry's loop thread. A host importing it on
        # its own thread at that moment (the Jupyter server's /nexus/mcp, serve's server) can
        # get the mcp package half-initialized (ImportError: circular import); the Jupyter
        # server then had no /nexus/mcp at all. Import it here, in the thread that adds us.
        import mcp  # noqa: F401

    @classmethod
    def from_config(cls, settings: Any, credentials: Any = None) -> McpSource:
        """A source from one ``mcp.servers`` entry of ``nex.yaml`` (a dict or an object with
        ``name``, ``command``/``args``/``env``/``cwd`` or ``url``/``headers``); ``${env:VAR}``
        and ``${credentials:service/key}`` are expanded at connect time."""

        def get(key: str, default: Any = None) -> Any:
            if isinstance(settings, Mapping):
                return settings.get(key, default)
            return getattr(settings, key, default)

        name = get("name")
        if not name:
            raise SourceError(f"An MCP server entry needs a name, got {settings!r}.")
        return cls(
            name,
            command=get("command"),
            args=list(get("args") or ()),
            env=dict(get("env") or {}),
            cwd=get("cwd"),
            url=get("url"),
            headers=dict(get("headers") or {}),
            auth=get("auth"),
            timeout=get("timeout"),
            credentials=credentials,
        )

    # -- the source protocol --------------------------------------------------------------

    def load(self) -> list[Tool]:
        """The last tools the server listed (empty before the first connect); never blocks.

        While the server is down this raises, so a ``registry.refresh`` keeps the tools listed
        as unavailable instead of marking them runnable."""
        if self._tools and self.state not in ("ready", "idle", "stopped"):
            raise SourceError(f"MCP server {self.server!r} is {self.state}: {self.reason or '...'}")
        return list(self._tools)

    async def start(self, publisher: SourcePublisher) -> None:
        """Begin connecting in the background (on the registry's loop); returns at once."""
        self._publisher = publisher
        self._loop = asyncio.get_running_loop()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name=f"mcp-source-{self.server}")

    async def stop(self) -> None:
        """Disconnect (stopping a stdio server) and stop reconnecting."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self._close_stderr()
        self.state = "stopped"
        if self._publisher is not None:
            self._publisher.offer(())

    def restart(self) -> concurrent.futures.Future[None]:
        """Reconnect now (from any thread); the future is done once reconnecting began."""
        publisher = self._publisher
        if publisher is None:
            raise SourceError(f"MCP server {self.server!r} is not running in a registry yet.")

        async def again() -> None:
            await self.stop()
            await self.start(publisher)

        return publisher.loop.submit(again())

    def relist(self) -> concurrent.futures.Future[None]:
        """Ask the server for its tools, resources and prompts again now (from any thread),
        for a server that changes them without saying so; done once they are published. A
        server that is not connected lists them when it reconnects."""
        publisher = self._publisher
        if publisher is None:
            raise SourceError(f"MCP server {self.server!r} is not running in a registry yet.")

        async def again() -> None:
            client = self._client
            if client is not None and self.state == "ready":
                await self._list_tools(client)
                await self._list_offers(client)

        return publisher.loop.submit(again())

    @property
    def status(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "reason": self.reason,
            "stderr": [self._mask(line) for line in self._stderr.tail()] if self._stderr else [],
            "transport": "stdio" if self.command else "http",
            "target": self.url or " ".join([self.command or "", *self.args]).strip(),
            "protocol_version": self.protocol_version,
            "server": self.server_info,
            "connects": self.connects,
            "skipped": dict(self._skipped),
        }

    def __repr__(self) -> str:
        return f"<McpSource {self.server!r} {self.status['target']!r} {self.state}>"

    # -- connection lifecycle -------------------------------------------------------------

    async def _run(self) -> None:
        failures = 0
        last_failure: str | None = None
        while True:
            if last_failure is None:
                self._set_state("connecting", None)
            else:
                # Still broken while it tries again: a status read during a retry must not
                # look healthy (``check`` reported a dead server "ok" between attempts).
                self._set_state("reconnecting", last_failure)
            try:
                await self._session()
                reason = "the server closed the connection"
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # ExceptionGroups from anyio included
                if isinstance(exc, KeyboardInterrupt | SystemExit):
                    raise
                reason = describe(exc, _CONNECT_TIMEOUT_S)
                if self._refused and (self.auth is None or "error response" in reason):
                    reason = self._refused  # says what to do, where the SDK's words do not
            if isinstance(self._transport_used, WatchedTransport):  # its process exited?
                reason = await self._transport_used.ended(reason)
            log.info("MCP server %s: %s", self.server, reason)
            self._client = None
            # Back off from the first quick retry only after a session that lasted: a server
            # that dies right after starting must not be restarted four times a second.
            stable = self.state == "ready" and time.monotonic() - self._ready_at > _STABLE_S
            failures = 1 if stable else failures + 1
            delay = min(_BACKOFF_MAX_S, _BACKOFF_START_S * 2 ** (failures - 1))
            self._set_state("error", f"{reason}; reconnecting in {delay:g} s")
            last_failure = reason
            await asyncio.sleep(delay)

    async def _session(self) -> None:
        import mcp

        self._dropped.clear()
        self._relist.clear()
        transport = self._transport_used = self._transport()
        relay = self.relay
        client = mcp.Client(
            transport,
            message_handler=self._on_message,
            read_timeout_seconds=None,
            elicitation_callback=relay.on_elicit,
            sampling_callback=relay.on_sample,
            list_roots_callback=relay.on_roots,
            logging_callback=relay.on_log,
            log_level="info",
            # a 2026-07-28 server's tasks: polled to their result, questions put to the caller
            extensions=[tasks_client_extension(relay.answer_task_question)],
        )
        async with asyncio.timeout(_CONNECT_TIMEOUT_S):
            await client.__aenter__()
        try:
            await self._connected(client, transport)
        except BaseException as exc:
            # Left with the exception on its way: a request the SDK's transport fails (a POST
            # to a closed port) cancels this task from its task group, and only its exit turns
            # that into the error (else: "ready" on a dead connection, never reconnecting).
            await client.__aexit__(type(exc), exc, exc.__traceback__)
            task = asyncio.current_task()
            if isinstance(exc, asyncio.CancelledError) and task and not task.cancelling():
                return  # the transport's own cancellation, taken back by its exit
            raise
        else:
            await client.__aexit__(None, None, None)

    async def _connected(self, client: Any, transport: Any) -> None:
        """List, listen and refresh on an open connection until it drops."""
        helpers: list[asyncio.Future[Any]] = []
        waiters: list[asyncio.Future[Any]] = []
        try:
            self.connects += 1
            self._client = client
            self.protocol_version = client.protocol_version
            info = client.server_info
            self.server_info = f"{info.name} {info.version}".strip() if info else None
            # Subscribe before the first listing: a change between the two comes as an
            # event (there is no replay of what happened before the subscription).
            listening = asyncio.Event()
            helpers.append(asyncio.ensure_future(self._listen(client, listening)))
            subscribed = asyncio.ensure_future(listening.wait())
            await asyncio.wait(
                [subscribed, helpers[0]],
                timeout=_CONNECT_TIMEOUT_S,
                return_when=asyncio.FIRST_COMPLETED,
            )
            subscribed.cancel()
            # listed quietly: the tools appear once, runnable, when the state says ready
            await self._list_tools(client, publish=False)
            await self._list_offers(client)
            self._ready_at = time.monotonic()
            self._set_state("ready", None)
            closed = getattr(transport, "closed", None)
            waiters.append(asyncio.ensure_future(self._dropped.wait()))
            if closed is not None:
                waiters.append(asyncio.ensure_future(closed.wait()))
            helpers.append(asyncio.ensure_future(self._relist_loop(client)))
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._client = None
            for task in (*waiters, *helpers):
                task.cancel()
            await asyncio.gather(*waiters, *helpers, return_exceptions=True)

    def _transport(self) -> Any:
        from ..core.config.loading import interpolate

        where = f"MCP server {self.server!r}"
        if self.url is not None:
            import httpx2  # the transport of mcp 2.x (not httpx)
            from mcp.client.streamable_http import streamable_http_client

            url = interpolate(self.url, self.credentials, where=where)
            headers = interpolate(self.headers, self.credentials, where=where)
            sign_in, release = None, None
            if self.auth is not None:
                from .mcp_auth import build_auth

                sign_in, release = build_auth(
                    self.auth,
                    server=self.server,
                    url=url,
                    credentials=self.credentials,
                    fill=lambda text: interpolate(text, self.credentials, where=where),
                    on_link=lambda link: self._set_state("signing in", f"sign in at {link}"),
                )
            self._refused = None
            http = httpx2.AsyncClient(
                headers=headers,
                auth=sign_in,
                timeout=httpx2.Timeout(30, read=300),
                event_hooks={"response": [self._note_refusal]},
            )
            return WatchedTransport(
                ClosingTransport(streamable_http_client(url, http_client=http), http, release)
            )
        from mcp.client.stdio import StdioServerParameters, stdio_client

        def fill(value: Any) -> Any:
            return interpolate(value, self.credentials, where=where)

        env = fill(self.env) or None
        # on Linux the server ends with this process, even one killed outright
        command, args = parent_bound(fill(self.command or ""), fill(self.args), env)
        params = StdioServerParameters(command=command, args=args, env=env, cwd=fill(self.cwd))
        if self._stderr is None:  # one pipe for every process of this source: history survives
            self._stderr = StderrTail(self._stderr_lines)
        return WatchedTransport(stdio_client(params, errlog=self._stderr.writer), self._stderr)

    async def _listen(self, client: Any, listening: asyncio.Event) -> None:
        """On 2026-07-28 connections change events come on a ``subscriptions/listen``
        stream, and only when the server advertises them. ``listening`` is set once the
        server acknowledged the subscription."""
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        caps = client.server_capabilities
        watch = {
            "tools_list_changed": bool(caps.tools and caps.tools.list_changed),
            "prompts_list_changed": bool(caps.prompts and caps.prompts.list_changed),
            "resources_list_changed": bool(caps.resources and caps.resources.list_changed),
        }
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not any(watch.values()):
            return
        again = False
        while True:
            try:
                async with client.listen(**watch) as sub:
                    listening.set()
                    if again:  # events are not replayed: refetch what changed meanwhile
                        self._relist.set()
                    async for _event in sub:
                        self._relist.set()
            except Exception as exc:
                log.info("MCP server %s: listen stream ended: %s", self.server, describe(exc))
            if self.url is not None:
                # Over HTTP the listen stream is the only open connection: when it ends the
                # server has most likely gone; reconnecting refetches the tools.
                self._dropped.set()
                return
            # Over stdio the process is watched directly: listen again.
            await asyncio.sleep(1.0)
            again = True

    async def _relist_loop(self, client: Any) -> None:
        while True:
            await self._relist.wait()
            self._relist.clear()
            try:
                await self._list_tools(client)
                await self._list_offers(client)
            except Exception as exc:
                log.warning("MCP server %s: refreshing tools failed: %s", self.server, exc)
                self._dropped.set()
                return

    async def _on_message(self, message: Any) -> None:
        import mcp_types as types

        if isinstance(message, Exception):
            log.info("MCP server %s: transport error: %s", self.server, describe(message))
            if self.url is not None:
                self._dropped.set()
            return
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            # its URIs are this server's too: tell the sessions subscribed to it
            if self._publisher is not None:
                self._publisher.resource_updated(str(root.params.uri))
            return
        if isinstance(
            root,
            types.ToolListChangedNotification
            | types.ResourceListChangedNotification
            | types.PromptListChangedNotification,
        ):
            self._relist.set()

    async def _list_tools(self, client: Any, *, publish: bool = True) -> None:
        listed: list[Any] = []
        cursor: str | None = None
        for _ in range(100):  # a paginator that never ends must not hang the source
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            listed.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        tools, skipped = [], {}
        for remote in listed:
            try:
                tools.append(self._tool(remote))
            except ToolDefinitionError as exc:
                skipped[remote.name] = str(exc)
        self._tools, self._skipped = tools, skipped
        self._task_only = {
            r.name for r in listed if r.execution and r.execution.task_support == "required"
        }
        if publish:
            self._publish()

    def _tool(self, remote: Any) -> Tool:
        """The registry tool for one ``tools/list`` entry (a subclass may add details)."""
        return tool_from_mcp(
            remote, self._handler(remote.name), origin=f"mcp:{self.server}", timeout=self.timeout
        )

    async def _list_offers(self, client: Any) -> None:
        """The server's resources, templates and prompts, into the registry's catalog."""
        try:
            offers = await list_offers(client, self.namespace, self._on_loop)
        except Exception as exc:  # tools still work without them
            log.warning("MCP server %s: listing resources/prompts failed: %s", self.server, exc)
            return
        if self._publisher is not None:
            self._publisher.offer(offers)

    async def _on_loop(self, make: Any) -> Any:
        """Run ``make()`` (a coroutine factory) on the loop the connection lives on."""
        loop = self._loop
        if self._client is None:
            raise ToolUnavailable(
                f"MCP server {self.server!r} is not connected ({self.state}: "
                f"{self.reason or 'connecting'})."
            )
        if loop is None or asyncio.get_running_loop() is loop:
            return await make()

        async def run() -> Any:
            return await make()

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(run(), loop))

    # -- calls ----------------------------------------------------------------------------

    def _handler(self, remote_name: str) -> Any:
        async def call(arguments: dict[str, Any], ctx: ToolContext | None) -> ToolResult:
            loop = self._loop
            if loop is None or asyncio.get_running_loop() is loop:
                return await self._call(remote_name, arguments, ctx)
            # The SDK's streams belong to the registry's loop: run the call there.
            future = asyncio.run_coroutine_threadsafe(self._call(remote_name, arguments, ctx), loop)
            try:
                return await asyncio.wrap_future(future)
            except asyncio.CancelledError:
                future.cancel()  # cancels the remote request too (courtesy cancel)
                raise

        return call

    async def _call(
        self, remote_name: str, arguments: dict[str, Any], ctx: ToolContext | None
    ) -> ToolResult:
        client = self._client
        if client is None:
            raise ToolUnavailable(
                f"MCP server {self.server!r} is not connected ({self.state}: "
                f"{self.reason or 'connecting'})."
            )
        progress = None
        if ctx is not None:

            async def progress(done: float, total: float | None, message: str | None) -> None:
                await ctx.progress(done, total, message)

        try:
            caller = ctx.channel if ctx is not None else None
            with self.relay.calling(caller):
                if remote_name in self._task_only and runs_tasks(client):
                    result = await call_as_task(
                        client,
                        remote_name,
                        arguments,
                        progress=progress,
                        on_task=lambda task_id: self.relay.task_started(task_id, caller),
                    )
                else:
                    result = await client.call_tool(
                        remote_name, arguments, progress_callback=progress
                    )
        except Exception as exc:
            if is_connection_error(exc):
                self._dropped.set()
            raise
        return result_from_mcp(ctx.tool_name if ctx is not None else remote_name, result)

    async def _note_refusal(self, response: Any) -> None:
        """Remember a 401/403 from the server: the SDK reports it only as "an error
        response", which does not tell the user to sign in or fix a token."""
        from .mcp_auth import refusal_reason

        self._refused = refusal_reason(response, signs_in=self.auth is not None) or self._refused

    # -- status ---------------------------------------------------------------------------

    def _set_state(self, state: str, reason: str | None) -> None:
        # A connection error can quote the interpolated URL or headers: mask secrets first.
        self.state, self.reason = state, self._mask(reason) if reason else reason
        self._publish()

    def _mask(self, text: str) -> str:
        masker = getattr(self.credentials, "mask", None)
        return masker(text) if masker is not None else text

    def _publish(self) -> None:
        if self._publisher is None:
            return
        error = None if self.state in ("ready", "connecting") else self.reason
        if self.state == "reconnecting":
            error = f"{self.reason}; reconnecting"  # the source's error says it is retrying
        unavailable = {}
        if self.state != "ready":
            why = f"MCP server {self.server!r} is {self.state}" + (
                f": {self.reason}" if self.reason else ""
            )
            unavailable = {t.spec.name: why for t in self._tools}
        try:
            self._publisher.replace(
                self._tools, error=error, details=self.status, unavailable=unavailable
            )
        except SourceError:
            pass  # removed from the registry while a connection attempt was still unwinding

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
