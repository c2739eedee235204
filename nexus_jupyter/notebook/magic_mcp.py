"""``%tool mcp add|list|remove|restart`` (MCP servers as a source) and ``%tool serve``
(serve the kernel's registry over MCP without blocking the kernel).

Each subcommand is a thin shim over the functions below, which work without IPython too:

    add_mcp_server("time", command="mcp-server-time")
    add_mcp_server("remote", url="http://127.0.0.1:8765/mcp")
    serve(port=8765).url; stop_serving()
"""

from __future__ import annotations

import html
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import NexusError, SourceError
from ..render.tables import left_aligned
from .options import parse_options
from .subcommands import MagicContext, subcommand

__all__ = [
    "McpServerList",
    "add_mcp_server",
    "list_mcp_servers",
    "remove_mcp_server",
    "restart_mcp_server",
    "serve",
    "stop_serving",
]

#: The states of a server that failed: its last error, or trying again after it.
_BROKEN = ("error", "reconnecting")
_STATE_COLOURS = {"ready": "#1a7f37", "error": "#cf222e", "reconnecting": "#cf222e"}

_ADD_USAGE = (
    "%tool mcp add NAME [--env K=V ...] [--cwd DIR] [--wait] -- COMMAND ARGS...  |  "
    "%tool mcp add NAME --url URL [--header K=V ...] "
    "[--auth oauth [--client-id ID] [--scope S]] [--wait]"
)
_HANDLES: dict[int, Any] = {}  # id(registry) -> McpServerHandle
_HANDLES_LOCK = threading.Lock()


def _registry(registry: Any) -> Any:
    from ..core.registry.registry import Registry
    from .api import current_registry

    reg = current_registry(registry)
    # the magics hand us a lazy proxy; the handle table needs the registry itself
    return reg if isinstance(reg, Registry) else current_registry()


def _wait(reg: Any, source: Any, timeout: float) -> None:
    """Block until ``source`` is ready or failed (re-checking on every registry change)."""
    changed = threading.Event()
    unsubscribe = reg.subscribe(lambda _change: changed.set())
    deadline = time.monotonic() + timeout
    try:
        while source.state not in ("ready", *_BROKEN) and time.monotonic() < deadline:
            changed.wait(max(0.0, deadline - time.monotonic()))
            changed.clear()
    finally:
        unsubscribe()


def add_mcp_server(
    name: str,
    *,
    command: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    auth: Mapping[str, Any] | None = None,
    wait: float | None = None,
    registry: Any = None,
) -> McpServerList:
    """Add an MCP server (stdio ``command`` or HTTP ``url``) as a source named ``mcp:NAME``;
    it connects in the background. ``wait`` (seconds) blocks until it is ready or failed.
    ``auth`` signs in to an OAuth-protected server, as ``auth:`` in nex.yaml does
    (``{"type": "oauth", "client_id": ..., "scope": ...}``; the sign-in link shows in the
    cell's output)."""
    from ..sources.mcp import McpSource

    reg = _registry(registry)
    if any(s.name == f"mcp:{name}" for s in reg.sources()):
        raise SourceError(
            f"An MCP server named {name!r} is already added; remove it first with "
            f"`%tool mcp remove {name}` or pick another name."
        )
    source = McpSource(
        name,
        command=command,
        args=args,
        env=env,
        cwd=cwd,
        url=url,
        headers=headers,
        auth=dict(auth) if auth else None,
        credentials=getattr(reg, "credentials", None),
    )
    reg.add_source(source)
    if wait:
        _wait(reg, source, wait)
    return list_mcp_servers(registry=reg, only=name)


def _mcp_source(reg: Any, name: str) -> Any:
    for state in reg.sources():
        if state.name == f"mcp:{name}":
            return state.source
    known = [s.name.removeprefix("mcp:") for s in reg.sources() if s.kind == "mcp"]
    raise SourceError(
        f"No MCP server named {name!r}; added: {', '.join(known) or 'none'}. "
        "Add one with `%tool mcp add NAME -- COMMAND ARGS`."
    )


def remove_mcp_server(name: str, *, registry: Any = None) -> None:
    """Disconnect MCP server ``name`` and remove its tools."""
    reg = _registry(registry)
    _mcp_source(reg, name)
    reg.remove_source(f"mcp:{name}")


def restart_mcp_server(
    name: str, *, wait: float | None = None, registry: Any = None
) -> McpServerList:
    """Reconnect MCP server ``name`` now (a stdio server is started again)."""
    reg = _registry(registry)
    source = _mcp_source(reg, name)
    if not hasattr(source, "restart"):
        raise SourceError(f"MCP server {name!r} could not be configured: {source.error}")
    source.restart().result(30)
    if wait:
        _wait(reg, source, wait)
    return list_mcp_servers(registry=reg, only=name)


class McpServerList:
    """What ``%tool mcp list`` shows: one row per server with its state and tools."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def __repr__(self) -> str:
        if not self.rows:
            return "No MCP servers. Add one with `%tool mcp add NAME -- COMMAND ARGS...`."
        lines = []
        for r in self.rows:
            reason = f" ({r['reason']})" if r["reason"] else ""
            lines.append(
                f"{r['name']}: {r['state']}{reason}; {len(r['tools'])} tools; {r['target']}"
            )
            lines += [f"    stderr| {line}" for line in r["stderr"][-5:] if r["state"] in _BROKEN]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        if not self.rows:
            return f"<p>{html.escape(repr(self))}</p>"
        body = ""
        for r in self.rows:
            color = _STATE_COLOURS.get(r["state"], "#9a6700")  # amber: on its way
            detail = html.escape(r["reason"] or "")
            if r["state"] in _BROKEN and r["stderr"]:
                detail += "<pre>" + html.escape("\n".join(r["stderr"][-5:])) + "</pre>"
            body += (
                f"<tr><td><code>{html.escape(r['name'])}</code></td>"
                f"<td style='color:{color}'>{html.escape(r['state'])}</td>"
                f"<td>{len(r['tools'])}</td><td><code>{html.escape(r['target'])}</code></td>"
                f"<td>{detail}</td></tr>"
            )
        return left_aligned(
            "<table><thead><tr><th>server</th><th>state</th><th>tools</th><th>target</th>"
            f"<th>details</th></tr></thead><tbody>{body}</tbody></table>"
        )


def list_mcp_servers(*, registry: Any = None, only: str | None = None) -> McpServerList:
    """Every MCP server source with its state, reason, tools and stderr tail."""
    reg = _registry(registry)
    rows = []
    for state in reg.sources():
        if state.kind != "mcp" or (only is not None and state.name != f"mcp:{only}"):
            continue
        status = getattr(state.source, "status", None) or {}
        rows.append(
            {
                "name": state.name.removeprefix("mcp:"),
                "state": status.get("state", "error" if state.error else "?"),
                "reason": status.get("reason") or state.error,
                "tools": sorted(state.tools),
                "target": status.get("target", ""),
                "stderr": status.get("stderr", []),
            }
        )
    return McpServerList(rows)


def serve(
    *, port: int = 0, host: str = "127.0.0.1", defer: bool = False, registry: Any = None
) -> Any:
    """Serve the registry over streamable HTTP from the registry's background loop (the
    kernel stays free); returns the :class:`McpServerHandle` (``.url``, ``.stop()``)."""
    from ..serve.mcp_http import check_address
    from ..serve.mcp_server import McpServerHandle

    reg = _registry(registry)
    with _HANDLES_LOCK:
        running = _HANDLES.get(id(reg))
        if running is not None and running.running:
            raise NexusError(
                f"Already serving at {running.url}; stop it with `%tool serve --stop`."
            )
        check_address(host, port)  # a ConfigError (one clear sentence) before any thread starts
        try:
            handle = McpServerHandle.start(reg, host=host, port=port, defer=defer)
        except OSError as exc:
            raise NexusError(
                f"Cannot serve on {host}:{port}: {exc}; pick another --port."
            ) from None
        _HANDLES[id(reg)] = handle
    return handle


def stop_serving(*, registry: Any = None) -> str:
    """Stop the server that :func:`serve` started for this registry."""
    reg = _registry(registry)
    with _HANDLES_LOCK:
        handle = _HANDLES.pop(id(reg), None)
    if handle is None or not handle.running:
        return "Not serving; start with `%tool serve [--port N]`."
    handle.stop()
    return f"Stopped serving {handle.url}."


# -- the magics -------------------------------------------------------------------------


def _pairs(values: list[str], option: str) -> dict[str, str]:
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise NexusError(f"{option} takes KEY=VALUE, got {item!r}.")
        out[key] = value
    return out


def _mcp_add(ctx: MagicContext, argv: list[str]) -> Any:
    head, command = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    opts = parse_options(
        "%tool mcp add",
        head,
        {
            "--url": "one",
            "--env": "many",
            "--cwd": "one",
            "--header": "many",
            "--wait": "flag",
            "--auth": "one",
            "--client-id": "one",
            "--scope": "one",
        },
    )
    if len(opts["args"]) != 1:
        raise NexusError(f"Give one server name: {_ADD_USAGE}")
    if bool(command) == bool(opts.get("url")):
        raise NexusError(f"Give either `-- COMMAND ARGS...` or `--url URL`: {_ADD_USAGE}")
    auth: dict[str, Any] | None = None
    if opts.get("auth") is not None:
        if opts["auth"] != "oauth" or not opts.get("url"):
            raise NexusError(
                f"--auth takes oauth (sign in; client credentials go in nex.yaml's auth:), "
                f"for a --url server, got {opts['auth']!r}: {_ADD_USAGE}"
            )
        auth = {
            "type": opts["auth"],
            "client_id": opts.get("client_id"),
            "scope": opts.get("scope"),
        }
        auth = {k: v for k, v in auth.items() if v is not None}
    return add_mcp_server(
        opts["args"][0],
        command=command[0] if command else None,
        args=command[1:],
        env=_pairs(opts.get("env", []), "--env"),
        cwd=opts.get("cwd"),
        url=opts.get("url"),
        headers=_pairs(opts.get("header", []), "--header"),
        auth=auth,
        wait=30.0 if opts.get("wait") else None,
        registry=ctx.registry,
    )


@subcommand(
    "mcp",
    usage="%tool mcp add|list|remove|restart ...",
    summary="Add, list, remove or restart MCP servers whose tools join the registry.",
    details=f"{_ADD_USAGE}\n%tool mcp list  ·  %tool mcp remove NAME  ·  "
    "%tool mcp restart NAME\nTools are named mcp__NAME__TOOL.",
    example="%tool mcp add time -- mcp-server-time",
)
def _mcp(ctx: MagicContext, argv: list[str]) -> Any:
    action, rest = (argv[0], argv[1:]) if argv else ("list", [])
    if action == "add":
        return _mcp_add(ctx, rest)
    if action == "list":
        return list_mcp_servers(registry=ctx.registry)
    if action in ("remove", "restart"):
        if len(rest) != 1:
            raise NexusError(f"Give one server name: `%tool mcp {action} NAME`.")
        if action == "remove":
            remove_mcp_server(rest[0], registry=ctx.registry)
            return None
        return restart_mcp_server(rest[0], registry=ctx.registry)
    raise NexusError(f"Unknown `%tool mcp` action {action!r}; use add, list, remove or restart.")


@subcommand(
    "serve",
    usage="%tool serve [--port N] [--host H] [--defer] | --stop",
    summary="Serve this kernel's tools over MCP (streamable HTTP) without blocking it.",
    details="Binds 127.0.0.1 unless --host says otherwise; --port 0 picks a free port. "
    "Connected clients get tools/list_changed as you add or edit tools.",
    example="%tool serve --port 8765",
)
def _serve(ctx: MagicContext, argv: list[str]) -> Any:
    opts = parse_options(
        "%tool serve",
        argv,
        {"--port": "one", "--host": "one", "--defer": "flag", "--stop": "flag"},
        max_args=0,
    )
    if opts.get("stop"):
        return _Text(stop_serving(registry=ctx.registry))
    try:
        port = int(opts.get("port", 0))
    except ValueError:
        raise NexusError(f"--port must be a whole number, got {opts['port']!r}.") from None
    handle = serve(
        port=port,
        host=opts.get("host", "127.0.0.1"),
        defer=bool(opts.get("defer")),
        registry=ctx.registry,
    )
    listed, deferred = handle.offered()  # what a client lists: not len(registry)
    more = f" ({len(deferred)} more deferred: found with tool_search)" if handle.defer else ""
    return _Text(
        f"Serving {len(listed)} tools{more} over MCP at {handle.url} "
        "(stop with `%tool serve --stop`)."
    )


class _Text(str):
    """A message that shows without quotes."""

    def __repr__(self) -> str:
        return str(self)
