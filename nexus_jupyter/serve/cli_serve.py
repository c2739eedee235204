"""``nexus-tools serve``: serve the default registry (built-in tools, the tools folder, the
MCP servers of ``nex.yaml``) to MCP clients over stdio or streamable HTTP.

    nexus-tools serve                                   # stdio (for an agent's config)
    nexus-tools serve --transport http --port 8765      # http://127.0.0.1:8765/mcp
    nexus-tools serve --transport http --host 0.0.0.0 --auth tokens
    nexus-tools serve --transport http --auth oauth --issuer URL --audience AUD
    nexus-tools serve --jupyter http://127.0.0.1:8888/ --token T   # + a Jupyter server's
    python -m nexus_jupyter.serve.cli_serve --dir tools/dynamic --defer

Over stdio, stdout is the protocol channel: everything else goes to stderr, where the
operator also reads one line per broken source (at start and whenever one breaks), the
tools above the MCP grant (not listed to clients) and the number of tools served. The HTTP
options (--host, --port, --auth ...) need --transport http: given without it, serve exits
with code 2 and says so.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from .child_processes import end_children
from .cli_jupyter import add_jupyter_arguments, attach_jupyter
from .cli_serve_auth import add_auth_arguments, auth_from_arguments
from .serve_notices import ServeNotices
from .serve_stop import FORCED_EXIT_S, ServeStop

__all__ = ["add_parser", "build_registry", "main", "run"]

DEFAULT_PORT = 8765
DEFAULT_HOST = "127.0.0.1"

#: The options that only mean something to ``--transport http``: dest -> option.
HTTP_OPTIONS = {
    "host": "--host",
    "port": "--port",
    "allow_host": "--allow-host",
    "session_idle": "--session-idle",
    "max_sessions": "--max-sessions",
    "auth": "--auth",
    "issuer": "--issuer",
    "audience": "--audience",
    "jwks_url": "--jwks-url",
    "public_url": "--public-url",
}


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``serve`` subcommand to an ``argparse`` subparsers object."""
    parser = subparsers.add_parser(
        "serve",
        help="Serve the tools over MCP (stdio or streamable HTTP).",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)
    parser.set_defaults(func=run)
    return parser


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    # --transport, --host and --port default to None: an HTTP option given without
    # --transport http is refused (_check_transport), not ignored while stdio serves
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default=None,
        help="stdio (default) or streamable HTTP",
    )
    parser.add_argument(
        "--host",
        default=None,
        help=f"HTTP address to bind (default {DEFAULT_HOST}: this machine only)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"HTTP port (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--dir",
        default=None,
        help="tools folder to watch (default: nex.yaml's, else tools/dynamic)",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another Host header name clients may use (e.g. an alias of this machine); "
        "NAME:PORT allows exactly that Host (a load balancer in front); "
        "loopback names are always allowed",
    )
    # SUPPRESS: when nested under `nexus-tools`, a default here would overwrite the value the
    # main parser already took (`nexus-tools --root X serve`).
    parser.add_argument("--config", default=argparse.SUPPRESS, help="a nex.yaml to use")
    parser.add_argument(
        "--root", default=argparse.SUPPRESS, help="project root (default: the current directory)"
    )
    parser.add_argument(
        "--defer",
        action="store_true",
        help="list only the eager tools plus tool_search (deferred loading)",
    )
    parser.add_argument(
        "--list-wait",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="how long a tools/list may wait, after serving begins, for the MCP servers and "
        "checks of nex.yaml still on their first attempt, so a client that lists once gets "
        "their tools (default 5; 0: never wait)",
    )
    parser.add_argument(
        "--session-idle",
        type=float,
        default=None,
        metavar="SECONDS",
        help="close an HTTP session idle this long (default: nex.yaml serve.session_idle_s, "
        "else 600)",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=None,
        metavar="N",
        help="refuse new HTTP sessions (503) while N are open (default: nex.yaml "
        "serve.max_sessions, else 1000)",
    )
    parser.add_argument(
        "--cluster",
        default=None,
        metavar="redis://HOST:PORT/N",
        help="act as one replica of a cluster sharing tools, events, approvals and audit "
        "through this Redis (default: nex.yaml cluster:, else none)",
    )
    parser.add_argument("--log-level", default="WARNING", help="stderr log level (default WARNING)")
    add_auth_arguments(parser)
    add_jupyter_arguments(parser)


def build_registry(
    *,
    root: str | None = None,
    tools_dir: str | None = None,
    config: str | None = None,
    quiet_load_failures: bool = False,
) -> Any:
    """``Registry.default`` for ``root`` and ``config`` (a nex.yaml path), watching
    ``tools_dir`` instead of the configured folder when given. ``quiet_load_failures``:
    the caller says each broken source itself (serve's notices)."""
    from ..core.registry.registry import Registry

    if tools_dir is not None:
        # Registry.default reads the folder from NEXUS_TOOLS_DIR first; this process only.
        os.environ["NEXUS_TOOLS_DIR"] = str(Path(tools_dir).resolve())
    # tool files run in worker processes unless nex.yaml says otherwise: one file that
    # crashes, loops or holds the GIL must not take the server down
    return Registry.default(
        root=root, config=config, isolation="process", quiet_load_failures=quiet_load_failures
    )


def _check_transport(args: argparse.Namespace) -> str | None:
    """Settle ``args.transport`` (stdio unless told) and the HTTP address's defaults; what
    is wrong when HTTP options were given to stdio, which would ignore them."""
    given = [f for dest, f in HTTP_OPTIONS.items() if getattr(args, dest, None) not in (None, [])]
    transport = args.transport or "stdio"
    problem = None
    if given and transport == "stdio":
        named = " and ".join([", ".join(given[:-1]), given[-1]] if len(given) > 1 else given)
        verb = "applies" if len(given) == 1 else "apply"
        stdio = (
            "not to --transport stdio (MCP on stdio, for an agent that starts serve)"
            if args.transport
            else "and without it serve speaks MCP on stdio (for an agent that starts it)"
        )
        port = f" --port {args.port}" if args.port is not None else ""
        problem = (
            f"{named} only {verb} to --transport http, {stdio}. Add --transport http "
            f"(nexus-tools serve --transport http{port} ...), or leave out {named} to "
            "serve on stdio."
        )
    args.transport = transport
    args.host = args.host or DEFAULT_HOST
    args.port = DEFAULT_PORT if args.port is None else args.port
    return problem


def run(args: argparse.Namespace) -> int:
    """Run ``nexus-tools serve`` with parsed ``args``; returns the exit code."""
    problem = _check_transport(args)
    if problem is not None:
        print(f"nexus-tools serve: {problem}", file=sys.stderr)
        return 2
    logging.basicConfig(
        stream=sys.stderr,
        level=str(args.log_level).upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
    # SIGTERM or Ctrl-C ends the server the same clean way as a client that goes away:
    # sessions closed, MCP servers stopped, exit code 0 (serve_stop says how)
    stop = ServeStop()
    code = 0
    failure: BaseException | None = None
    try:
        stop.install()
        code = _run(args, stop)
    except BaseException as exc:
        # A signal while starting: nothing is served yet, and whatever the interrupted code
        # made of StartAbandoned (a library that wraps errors in its own) is no failure.
        if not stop.abandoned:
            failure = exc
            raise
    finally:
        stop.cleaning()
        # whatever ended serve, no process it started outlives it: MCP servers, workers,
        # command-line tools (the sources stop theirs first; this is for what is left)
        end_children(spare=stop.spare)
        stop.uninstall(keep_deadline=True)  # the process ends next: still bounded
        if failure is not None and stop.exits_now():  # said here: raising on would wait
            stop.exit_if_warming(_said(failure, args))
    code = 0 if stop.abandoned else code
    stop.exit_if_warming(code)  # the search model is still being prepared: no waiting
    return code


def _said(failure: BaseException, args: argparse.Namespace) -> int:
    """Say ``failure`` as ``nexus-tools`` says an error that ends it; its exit code."""
    from ..cli.main import reported_failure

    code = reported_failure(failure, args)
    if code is None:  # no words for it: Python's own traceback, as an uncaught error
        traceback.print_exception(failure)
        code = 1
    return code


def _run(args: argparse.Namespace, stop: ServeStop) -> int:
    from .mcp_server import serve_http, serve_stdio

    # the notices say each broken source (one line, with its fix): the registry's own
    # warning about a source that failed to load would say it a second time
    reg = build_registry(
        root=getattr(args, "root", None),
        tools_dir=args.dir,
        config=getattr(args, "config", None),
        quiet_load_failures=True,
    )
    replica = notices = None
    try:
        level = logging.getLevelName(str(args.log_level).upper())
        quiet = isinstance(level, int) and level > logging.WARNING
        notices = ServeNotices(reg, quiet=quiet, defer=args.defer)

        def announce(address: tuple[str, int]) -> None:
            host, port = address
            shown = f"[{host}]" if ":" in host else host
            notices.serving(f"at http://{shown}:{port}/mcp")

        _mask_output(reg, stdout=args.transport == "http")
        where = ""  # what failed: the settings (auth, limits, Jupyter) or the address itself
        try:
            attach_jupyter(reg, args)
            limits = _session_limits(args, reg) if args.transport == "http" else {}
            if args.transport == "http":
                from .mcp_http import check_address

                limits["auth"] = auth_from_arguments(args, reg)
                where = f"cannot listen on {args.host}:{args.port}: "
                check_address(args.host, args.port, authenticated=limits["auth"].enabled)
        except ConfigError as exc:
            print(f"nexus-tools serve: {where}{exc}", file=sys.stderr)
            return 2
        try:
            replica = _join_cluster(args, reg)
            if "auth" in limits:
                limits["auth"], limits["token_store"] = _cluster_tokens(limits["auth"], replica)
        except ConfigError as exc:
            print(f"nexus-tools serve: {exc}", file=sys.stderr)
            return 2
        notices.start()  # broken sources, tools above the MCP grant: now and as they change
        _preload(args.transport)
        stop.ready()  # a signal from now on no longer interrupts: serving is skipped instead
        # Only once the settings are known good: exiting while the model loads aborts the
        # process.
        stop.warming = reg.warm_search()  # a first tool_search should not wait for the model
        reg.tests.watch()  # the tools' test cases run after every change of a tool
        try:
            if args.transport == "stdio":
                notices.serving("on stdio")
                asyncio.run(
                    stop.serving(serve_stdio(reg, defer=args.defer, first_list_wait=args.list_wait))
                )
            else:
                server = serve_http(
                    reg,
                    args.host,
                    args.port,
                    defer=args.defer,
                    first_list_wait=args.list_wait,
                    started=announce,
                    allowed_hosts=args.allow_host,
                    bus=replica.bus if replica is not None else None,
                    task_store=replica.task_store if replica is not None else None,
                    **limits,
                )
                asyncio.run(stop.serving(server))
        except KeyboardInterrupt:
            pass
        except (OSError, ConfigError) as exc:
            print(
                f"nexus-tools serve: cannot listen on {args.host}:{args.port}: {exc}",
                file=sys.stderr,
            )
            return 2
    finally:
        stop.cleaning()  # a signal now cuts nothing short: the MCP servers are being stopped
        if notices is not None:
            notices.stop()
        if replica is not None:
            replica.close()
        _close(reg, stop.spare)
    return 0


#: How long the sources have to stop on their own (an MCP server is told by its stdin
#: closing) before what still runs is ended: an MCP client gives serve 2 s after closing
#: its stdin, then SIGTERM, 2 s more, then SIGKILL, which an MCP server would outlive.
CLOSE_GRACE_S = 1.0


def _close(reg: Any, spare: frozenset[int]) -> None:
    """Close ``reg``; the child processes still running after :data:`CLOSE_GRACE_S` are
    ended, but those in ``spare`` (the sources' own stops then find them gone)."""
    # the search warm-up is not waited for: serve then ends by os._exit (ServeStop)
    closing = threading.Thread(
        target=reg.close, kwargs={"search_wait": 0}, name="serve-close", daemon=True
    )
    closing.start()
    closing.join(CLOSE_GRACE_S)
    if closing.is_alive():
        end_children(spare=spare)
        closing.join(FORCED_EXIT_S)


def _preload(transport: str) -> None:
    """Import the SDK's server modules while a signal still abandons the start: imported
    inside the serving loop, they hold a stop off for seconds (the loop cannot cancel an
    import)."""
    import mcp.server.lowlevel.server
    import mcp.server.subscriptions

    if transport == "stdio":
        import mcp.server.stdio  # noqa: F401
    else:
        from . import mcp_http  # noqa: F401


def _join_cluster(args: argparse.Namespace, reg: Any) -> Any:
    """``--cluster`` (else ``cluster:`` in nex.yaml): join that cluster as a replica."""
    url = args.cluster or getattr(getattr(reg, "settings", None), "cluster", None)
    if not url:
        return None
    from ..cluster import ClusterReplica
    from ..core.config.paths import resolve_tools_dir

    folder = args.dir or resolve_tools_dir(reg.root, reg.settings.tools_dir)
    return ClusterReplica.join(reg, url, folder)


def _cluster_tokens(auth: Any, cluster: Any) -> tuple[Any, Any]:
    """On a cluster, API tokens live in its Redis (unless a token file is named): ``auth``
    saying so, and the replica's token store (its outages are the ``cluster`` source's to
    say), else ``None`` (the store ``auth`` names is opened as it is)."""
    if cluster is None or auth.mode != "tokens":
        return auth, None
    if not auth.token_file:
        auth = auth.model_copy(update={"token_file": cluster.node.address.url})
    return auth, cluster.token_store(auth.token_file)


def _mask_output(reg: Any, *, stdout: bool) -> None:
    """Mask stored secrets in what tools print: stderr always; stdout only over HTTP (over
    stdio it is the protocol channel, which tools must not write to)."""
    store = getattr(reg, "credentials", None)
    if store is None:
        return
    from ..core.policy.masking import MaskingStream

    sys.stderr = MaskingStream(sys.stderr, store.mask)
    if stdout:
        sys.stdout = MaskingStream(sys.stdout, store.mask)


def _session_limits(args: argparse.Namespace, reg: Any) -> dict[str, Any]:
    """``--session-idle`` / ``--max-sessions``, else ``serve:`` in nex.yaml, else defaults."""
    from .mcp_http import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_S

    configured = dict(getattr(getattr(reg, "settings", None), "serve", None) or {})
    idle = args.session_idle or configured.get("session_idle_s") or DEFAULT_SESSION_IDLE_S
    cap = args.max_sessions or configured.get("max_sessions") or DEFAULT_MAX_SESSIONS
    if float(idle) <= 0 or int(cap) <= 0:
        raise ConfigError(
            f"session_idle_s and max_sessions must be positive, got {idle!r} and {cap!r}; "
            "check --session-idle / --max-sessions or serve: in nex.yaml."
        )
    return {"session_idle_s": float(idle), "max_sessions": int(cap)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="nexus-tools serve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
