"""Serve a :class:`~nexus_jupyter.core.registry.registry.Registry` over MCP (stdio or streamable HTTP).

    await serve_stdio(reg)                          # until stdin closes
    await serve_http(reg, "127.0.0.1", 8765)        # until cancelled
    handle = McpServerHandle.start(reg, port=0)     # on the registry's background loop
    handle.url; handle.stop()

Built on the SDK's low-level ``Server`` so every ``tools/list`` reads the registry's current
snapshot and every ``tools/call`` goes through ``registry.call`` (policy, credentials,
validation, audit) as :data:`~nexus_jupyter.core.tools.context.MCP_CALLER`. Every registry change reaches every connected
session without reconnecting: a ``subscriptions/listen`` event for 2026-07-28 clients (the
SDK's ``SubscriptionBus``) and ``notifications/tools/list_changed`` for earlier revisions.
With ``defer=True`` only the eager tools plus ``tool_search`` are listed (every tool stays
callable by name), the deferred-loading pattern. ``serve_stdio`` / ``serve_http`` list only
the tools the MCP grant lets a caller run (:mod:`.mcp_grant`); the others answer a call by
name with the refusal. The ``instructions`` are made from the registry when a client
connects (:mod:`.mcp_instructions`). Over HTTP the client is shown this machine's paths in
short (:mod:`.mcp_paths`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ..core.errors import (
    ApprovalRequired,
    NexusError,
    PermissionDenied,
    ToolNotFound,
    ToolUnavailable,
)
from ..core.registry.catalog import catalog_of
from ..core.registry.state import RegistryChanged
from ..core.tasks.store import TaskListing, TaskStore
from ..core.tools.channel import CURRENT_CHANNEL, CallerUnavailable, ClientChannel, InputRequired
from ..core.tools.context import MCP_CALLER, CancellationToken, RequestInfo
from .auth.settings import identity_of
from .list_gate import ListGate
from .mcp_approval import ask_client
from .mcp_bridge import call_result, error_result, mcp_tool, shown_search
from .mcp_channel import LogLevels, McpClientChannel, run_soon
from .mcp_grant import mcp_grant, offered
from .mcp_handle import McpServerHandle
from .mcp_input import RoundTrip, StateError
from .mcp_instructions import instructions_for
from .mcp_offers import OfferHandlers
from .mcp_paths import ShownPaths
from .mcp_subscriptions import ResourceSubscriptions
from .mcp_task_events import TasksListenHandler
from .mcp_tasks import McpTasks, TaskChannel
from .mcp_tasks_legacy import LegacyTasks, legacy_tasks_capability
from .mcp_versions import VersionSieve

__all__ = ["McpServerHandle", "RegistryServer", "serve_http", "serve_stdio"]

log = logging.getLogger(__name__)

_BACKGROUND: set[asyncio.Task[Any]] = set()


class RegistryServer:
    """An MCP server whose tools are a registry's, kept live.

    ``server`` is the SDK's low-level ``Server``; run it on any transport after
    :meth:`attach` (which subscribes to the registry from the serving loop).
    """

    def __init__(
        self,
        registry: Any,
        *,
        defer: bool = False,
        name: str = "nexus-tools",
        bus: Any = None,
        task_store: TaskStore | None = None,
        tool_meta: Callable[[str], Mapping[str, Any] | None] | None = None,
        hidden: Collection[str] = (),
        granted_only: bool = False,
        first_list_wait: float = 0.0,
        paths: ShownPaths | None = None,
    ) -> None:
        from mcp.server.lowlevel.server import NotificationOptions, Server
        from mcp.server.subscriptions import InMemorySubscriptionBus
        from mcp_types import NotificationParams, SetLevelRequestParams

        from .. import __version__

        tasks = McpTasks(task_store)  # long calls as tasks (the tasks extension)
        listing = isinstance(tasks.store, TaskListing)

        class _Server(Server[Any]):
            # Made when a client connects: the registry as it is then.
            @property
            def instructions(self) -> str:
                return outer.instructions()

            @instructions.setter
            def instructions(self, value: Any) -> None:
                pass

            # Announce tools.listChanged to handshake-era clients: we do send it.
            def create_initialization_options(
                self, notification_options: Any = None, *args: Any, **kwargs: Any
            ) -> Any:
                opts = notification_options or NotificationOptions(
                    tools_changed=True, prompts_changed=True, resources_changed=True
                )
                return super().create_initialization_options(opts, *args, **kwargs)

            def get_capabilities(self, *args: Any, **kwargs: Any) -> Any:
                # 2025-11-25 tasks (a 2026-07-28 answer drops this slot: tasks are an
                # extension there)
                capabilities = super().get_capabilities(*args, **kwargs)
                return capabilities.model_copy(update={"tasks": legacy_tasks_capability(listing)})

        outer = self
        self.registry = registry
        self.defer = defer
        #: how this server's clients are shown local paths (``None``: in full, over stdio)
        self.paths = paths
        #: more ``_meta`` for a tool's listing entry (a kernel adds its tools' test status)
        self.tool_meta = tool_meta
        #: tools that can be called but are not listed (a kernel's private tools)
        self.hidden = frozenset(hidden)
        #: list only the tools an MCP caller may call (:mod:`.mcp_grant`)
        self.granted_only = granted_only
        #: how long a tools/list may wait for sources still connecting (:mod:`.list_gate`)
        self.first_list_wait = first_list_wait
        self._gate: ListGate | None = None
        self._meta_stamp = 0
        self.log_levels = LogLevels()
        self.offers = OfferHandlers(catalog_of(registry), self.log_levels, paths)
        # A cluster passes its Redis bus (nexus_jupyter.cluster.bus), shared by replicas.
        self.bus = bus if bus is not None else InMemorySubscriptionBus()
        self.subscriptions = ResourceSubscriptions(self.offers.catalog, self.bus)
        self.tasks = tasks
        self.listen_handler = TasksListenHandler(self.bus, tasks)  # taskIds too
        self.server = _Server(
            name,
            version=__version__,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self.listen_handler,
            on_list_resources=self.offers.list_resources,
            on_list_resource_templates=self.offers.list_templates,
            on_read_resource=self.offers.read_resource,
            on_subscribe_resource=self.subscriptions.subscribe,
            on_unsubscribe_resource=self.subscriptions.unsubscribe,
            on_list_prompts=self.offers.list_prompts,
            on_get_prompt=self.offers.get_prompt,
            on_completion=self.offers.complete,
        )
        self.server.add_notification_handler(
            "notifications/initialized", NotificationParams, self._on_initialized
        )
        # Added by hand: the constructor's on_set_logging_level warns that logging is
        # deprecated at 2026-07-28, but handshake-era clients still set their level with it.
        self.server.add_request_handler(
            "logging/setLevel", SetLevelRequestParams, self._set_log_level
        )
        self.server.middleware.append(VersionSieve())  # no newer fields to older clients
        self.tasks.register(self.server)
        LegacyTasks(self.tasks, self.registry.find, self._serve_task).register(self.server)
        self._legacy: set[Any] = set()
        # per grant level (None: every tool): the registry state it was made for, the listing
        self._listing: dict[str | None, tuple[tuple[int, int], Any]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._unsubscribe: Any = None
        self._unsubscribe_catalog: Any = None
        self._pending: set[str] = set()  # kinds of list change waiting to be broadcast
        self.notifications_sent = 0

    def instructions(self) -> str:
        """What the agent is told when it connects (:mod:`.mcp_instructions`)."""
        try:
            return instructions_for(
                self.registry,
                defer=self.defer,
                hidden=self.hidden,
                name=self.server.name,
                paths=self.paths,
            )
        except Exception:  # an odd registry must not stop a client from connecting
            log.warning("cannot make the MCP instructions", exc_info=True)
            return "Tools served by nexus-tools: tools/list lists them."

    # -- lifecycle ------------------------------------------------------------------------

    def attach(self) -> None:
        """Subscribe to the registry; call from the loop that serves."""
        self._loop = asyncio.get_running_loop()
        if self._gate is None:  # the bounded wait counts from when serving begins
            self._gate = ListGate(self.registry, self.first_list_wait)
        if self._unsubscribe is None:
            self._unsubscribe = self.registry.subscribe(self._on_change)
            self._unsubscribe_catalog = self.subscriptions.attach(self._on_catalog_change)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe_catalog()
            self._unsubscribe = self._unsubscribe_catalog = None
        self.listen_handler.close()

    @property
    def sessions(self) -> int:
        """Handshake-era sessions that will get ``notifications/tools/list_changed``."""
        return len(self._legacy)

    # -- change notifications -------------------------------------------------------------

    def _on_change(self, change: RegistryChanged) -> None:
        if change.tools_changed:
            self._notify_soon("tools")

    def _on_catalog_change(self, catalog: Any) -> None:
        self._notify_soon("offers")

    def _notify_soon(self, kind: str) -> None:
        # Runs on whichever thread changed the registry (a watcher, the kernel).
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._schedule_broadcast, kind)
        except RuntimeError:
            pass  # the serving loop has just shut down

    def _schedule_broadcast(self, kind: str) -> None:
        # Change events are level triggers: one pending broadcast covers a burst of changes.
        if not self._pending:
            task = asyncio.get_running_loop().create_task(self._broadcast())
            _BACKGROUND.add(task)  # the loop keeps only weak references to tasks
            task.add_done_callback(_BACKGROUND.discard)
        self._pending.add(kind)

    async def _broadcast(self) -> None:
        from mcp.server.subscriptions import (
            PromptsListChanged,
            ResourcesListChanged,
            ToolsListChanged,
        )

        kinds, self._pending = self._pending, set()
        connections = list(self._legacy)
        sends = []
        # This registry changed: tell this server's clients only. On a cluster every
        # replica's registry changes once it has loaded the change, and tells its own.
        publish = getattr(self.bus, "publish_local", self.bus.publish)
        if "tools" in kinds:
            await publish(ToolsListChanged())
            sends += [c.send_tool_list_changed() for c in connections]
        if "offers" in kinds:
            await publish(ResourcesListChanged())
            await publish(PromptsListChanged())
            sends += [c.send_resource_list_changed() for c in connections]
            sends += [c.send_prompt_list_changed() for c in connections]
            sends.append(self.subscriptions.catalog_changed())  # and resources/updated
        # Side by side, so one client that is slow to read cannot hold up the others.
        await asyncio.gather(*sends, return_exceptions=True)  # best effort, like the SDK's
        self.notifications_sent += 1

    async def _on_initialized(self, ctx: Any, params: Any) -> None:
        # The SDK gives handlers a per-request session; the connection it wraps is what
        # outlives the request, so keep that (and forget it when the connection closes).
        connection = getattr(ctx.session, "_connection", None)
        if connection is None:
            log.warning("cannot track MCP session for list_changed: SDK internals changed")
            return
        self._legacy.add(connection)
        connection.exit_stack.callback(self._legacy.discard, connection)

    # -- handlers -------------------------------------------------------------------------

    async def _set_log_level(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        connection = getattr(ctx.session, "_connection", None)
        if connection is not None:
            self.log_levels.set(connection, params.level)
        return types.EmptyResult()

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.registry.find(name)
        return dict(tool.spec.input_schema) if tool is not None else None

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        if self._gate is not None:  # sources still on their first attempt, a bounded wait
            await self._gate.ready()
        level = None
        if self.granted_only:  # this caller's grant: the face's, its principal's, its token's
            principal, ceiling = identity_of(getattr(ctx, "request", None))
            level = mcp_grant(self.registry, principal, ceiling)
        generation = (self.registry.snapshot.generation, self._meta_stamp)
        cached = self._listing.get(level)
        if cached is not None and cached[0] == generation:
            return cached[1]
        # above the level: refused to every caller of it, so not offered
        entries = offered(self.registry, level, defer=self.defer, hidden=self.hidden).listed
        tools = []
        for entry in entries:
            try:
                tools.append(self._listed(entry))
            except Exception as exc:  # one odd schema must not hide every other tool
                log.warning("tool %s cannot be listed over MCP: %s", entry.name, exc)
        listing = types.ListToolsResult(tools=tools)
        if len(self._listing) > 8:  # a level per permission (and None): a guard, not an LRU
            self._listing.clear()
        self._listing[level] = (generation, listing)
        return listing

    def _listed(self, entry: Any) -> Any:
        tool = mcp_tool(entry.spec, self.paths)
        extra = self.tool_meta(entry.name) if self.tool_meta is not None else None
        if extra:
            tool = tool.model_copy(update={"meta": {**(tool.meta or {}), **extra}})
        return tool

    def relist(self) -> None:
        """What ``tool_meta`` says changed: list again and tell the clients (any thread)."""
        self._meta_stamp += 1
        self._notify_soon("tools")

    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        entry = self.registry.snapshot.entries.get(params.name)
        tool = entry.tool if entry is not None else None
        if tool is None or not self.tasks.runs_as_task(ctx, tool.spec.task_support):
            return await self._serve_call(ctx, params)

        meta = getattr(tool, "meta", None)
        starts_at_call = getattr(meta, "task_start", "call") == "call"
        serve = functools.partial(self._serve_task, ctx, params)
        return await self.tasks.start(ctx, params.name, serve, starts_at_call=starts_at_call)

    async def _serve_task(self, ctx: Any, params: Any, task: TaskChannel, progress: Any) -> Any:
        """The call, run inside a task (:mod:`.mcp_tasks`, :mod:`.mcp_tasks_legacy`)."""
        return await self._serve_call(ctx, params, task=task, progress=progress)

    async def _serve_call(
        self, ctx: Any, params: Any, *, task: TaskChannel | None = None, progress: Any = None
    ) -> Any:
        """One ``tools/call``, answered in the request, or in a task (``task``: its channel;
        a tool that cannot run at all is then a protocol error, so the task fails)."""
        from mcp.shared.exceptions import MCPError
        from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
        from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
        from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY

        name = params.name
        entry = self.registry.snapshot.entries.get(name)
        tool = entry.tool if entry is not None else None
        http = getattr(ctx, "request", None)
        principal, ceiling = identity_of(http)  # (None, None): no --auth
        request = RequestInfo(
            request_id=f"mcp-{ctx.request_id}",
            principal=principal,
            session_id=_session_id(http),
            caller=MCP_CALLER,
            ceiling=ceiling,
        )
        if task is None and progress_token_from_params(ctx.params) is not None:
            progress = _progress_sender(ctx.session, asyncio.get_running_loop())
        # A tool that takes a ToolContext can watch for cancellation: give it a token that a
        # client's notifications/cancelled (which cancels this handler) trips. Other tools are
        # stopped by the task cancellation itself (async) or cannot be stopped (sync threads),
        # and skipping the token keeps fast sync tools on the inline path.
        token = CancellationToken() if tool is not None and tool.wants_context else None
        arguments = params.arguments or {}
        try:
            round_trip = _round_trip(ctx, name, arguments, params)
        except StateError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from None
        caller = McpClientChannel(ctx, self.log_levels, round_trip)
        if task is not None:
            task.inner = caller
        bound = CURRENT_CHANNEL.set(task or caller)  # the tool's ToolContext picks it up
        try:
            options = {"request": request, "progress": progress, "cancellation": token}
            # a task's approval question waits in the task, like its other questions
            asker = task or caller
            result = await self._call_approving(name, arguments, options, asker, round_trip)
            await caller.flush()
            if task is not None and result is not None and result.error_type == "ToolUnavailable":
                raise MCPError(
                    INTERNAL_ERROR, self._shown(result.error or "the tool could not run")
                )
            if result is None or (round_trip is not None and round_trip.questions):
                assert round_trip is not None
                return round_trip.result()  # the tool asked: its error result only says so
            if (
                round_trip is not None
                and result.error_type == "CallerUnavailable"
                and caller.missing_capability
            ):
                # It failed for want of a capability the client did not declare (2026-07-28).
                raise MCPError(
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    result.error or "a client capability is missing",
                    data={"requiredCapabilities": {caller.missing_capability: {}}},
                )
        except ToolNotFound as exc:
            # Unknown tool: a protocol error (-32602) per the MCP spec, not a tool error.
            advice = "Call tool_search with what you want to do to find the right tool."
            text = exc.worded_for(advice)
            raise MCPError(INVALID_PARAMS, self._shown(text)) from None
        except NexusError as exc:
            if task is not None and isinstance(exc, ToolUnavailable):
                raise MCPError(INTERNAL_ERROR, self._shown(str(exc))) from None
            return error_result(exc, tool.spec if tool is not None else None, self.paths)
        except asyncio.CancelledError:
            if token is not None:
                token.cancel()
            raise
        finally:
            CURRENT_CHANNEL.reset(bound)
        if self.paths is not None and tool is not None:  # tool_search's descriptions too
            result = shown_search(result, tool.spec, self.registry, self.paths)
        return call_result(result, tool.spec if tool is not None else None, self.paths)

    def _shown(self, text: str) -> str:
        return self.paths.text(text) if self.paths is not None else text

    async def _call_approving(
        self,
        name: str,
        arguments: dict[str, Any],
        options: dict[str, Any],
        caller: ClientChannel,
        round_trip: RoundTrip | None,
    ) -> Any:
        """``registry.call``; a call that needs approval asks the client's user (once, for
        these arguments) when the client can be asked. ``None``: the question is pending."""
        try:
            return await self.registry.call(name, arguments, **options)
        except ApprovalRequired as refused:
            tool = self.registry.find(name)
            permission = tool.spec.permission if tool is not None else "unknown"
            shown = refused.arguments if isinstance(refused.arguments, dict) else arguments
            try:  # the arguments were valid: the question shows them as the tool gets them
                approved = await ask_client(caller, name, permission, shown)
            except CallerUnavailable:
                raise refused from None  # the client cannot be asked: the clear refusal
            except InputRequired:
                return None
            if not approved:
                raise PermissionDenied(
                    f"Tool {name!r} was not approved at the MCP client; it did not run."
                ) from None
            if round_trip is not None:
                round_trip.consume()
            return await self.registry.call(name, arguments, approved=True, **options)


def _session_id(http: Any) -> str | None:
    """The client's ``Mcp-Session-Id`` over streamable HTTP (earlier-protocol sessions)."""
    headers = getattr(http, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


def _round_trip(ctx: Any, target: str, arguments: dict[str, Any], params: Any) -> Any:
    """The call's :class:`RoundTrip` at 2026-07-28 (where questions go in the result)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    return RoundTrip(target, arguments, params.input_responses, params.request_state)


def _progress_sender(session: Any, loop: asyncio.AbstractEventLoop) -> Any:
    """A registry progress callback that sends ``notifications/progress`` for this request,
    from the loop or from a sync tool's worker thread."""

    def send(current: float, total: float | None = None, message: str | None = None) -> None:
        run_soon(loop, session.report_progress(current, total, message))

    return send


async def serve_stdio(registry: Any, *, defer: bool = False, first_list_wait: float = 0.0) -> None:
    """Serve ``registry`` on this process's stdin/stdout until the client closes stdin.
    ``first_list_wait``: how long a ``tools/list`` may wait for sources that are still
    connecting when serving begins (:mod:`.list_gate`)."""
    from mcp.server.stdio import stdio_server

    from .stdin_lines import EOF_ANSWER_WAIT_S, claimed_stdin

    app = RegistryServer(registry, defer=defer, granted_only=True, first_list_wait=first_list_wait)
    app.attach()
    try:
        # stdin read on a daemon thread: a stop (SIGTERM) does not wait for the next line
        with claimed_stdin() as stdin:
            async with stdio_server(stdin=stdin) as (read, write):
                # a malformed line gets its error; the end of input waits for the answers
                # (a first tools/list may wait first_list_wait for MCP servers: so may the end)
                wait = max(EOF_ANSWER_WAIT_S, first_list_wait + 0.5)
                answered, written = stdin.answering(read, write, eof_wait=wait)
                await app.server.run(answered, written, app.server.create_initialization_options())
    finally:
        app.detach()


async def serve_http(
    registry: Any,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    defer: bool = False,
    started: Any = None,
    allowed_hosts: Sequence[str] = (),
    bus: Any = None,
    task_store: TaskStore | None = None,
    auth: Any = None,
    first_list_wait: float = 0.0,
    **session_limits: Any,
) -> None:
    """Serve ``registry`` over streamable HTTP at ``http://host:port/mcp`` until cancelled.

    ``started`` (optional) is called with the bound ``(host, port)`` once listening.
    Requests must name loopback, ``host`` or one of ``allowed_hosts`` in ``Host``/``Origin``
    (DNS-rebinding protection). ``session_idle_s`` and ``max_sessions`` bound the stateful
    sessions (see :mod:`.mcp_http`). ``bus`` replaces the in-memory ``SubscriptionBus``
    (a cluster's Redis bus, started and closed here). ``task_store`` keeps the state of
    tasks (default: in memory; a shared store lets replicas answer each other's task polls).
    ``auth`` (a :class:`~.auth.ServeAuth`) requires a bearer token on every request; its
    subject is the calls' principal. ``first_list_wait`` as for :func:`serve_stdio`."""
    from .mcp_http import run_uvicorn

    app = RegistryServer(
        registry,
        defer=defer,
        bus=bus,
        task_store=task_store,
        granted_only=True,
        first_list_wait=first_list_wait,
        paths=ShownPaths(getattr(registry, "root", None) or os.getcwd()),  # a remote client
    )
    app.attach()
    if hasattr(bus, "start"):
        await bus.start()
    try:
        await run_uvicorn(
            app.server,
            host,
            port,
            started=started,
            closing=app.listen_handler.close,
            allowed_hosts=allowed_hosts,
            auth=auth,
            **session_limits,
        )
    finally:
        app.detach()
        for shared in (bus, task_store):  # a cluster's Redis connections, on this loop
            close = getattr(shared, "close", None)
            if close is not None:
                await close()
