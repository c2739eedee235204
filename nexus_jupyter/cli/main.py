"""``nexus-tools``: the registry on the command line.

    nexus-tools list [--source S] [--permission P] [--category C] [--capability C] [--available]
    nexus-tools search "convert currency" [--limit 5]
    nexus-tools info NAME
    nexus-tools call NAME '{"a": 1}'        # or: nexus-tools call NAME a=1 b=hello
    nexus-tools check [NAME ...] [--all]     # every tool's availability and every source's status
    nexus-tools test [NAME ...] [--junit F]  # the tools' saved test cases (cmd_tests)
    nexus-tools eval QUERIES [--mode M]      # search quality on labelled queries
    nexus-tools stats [NAME ...] [--since T] # calls, errors, latency per tool (audit log)
    nexus-tools install NAME ... | --all-missing [--yes]; register FILE; sync   (cmd_manifest)
    nexus-tools credentials set SERVICE KEY | list | delete SERVICE [KEY]
    nexus-tools tokens create NAME [--grant G] | list | revoke NAME   # for serve --auth tokens
    nexus-tools serve ...                    # when the MCP server module is installed
    nexus-tools publish FILE [--cluster URL] # a tool file to every replica of a cluster

Global options: ``--root DIR`` (workspace and project ``nex.yaml``), ``--config FILE`` (use
this file as the project level), ``--json`` (machine-readable output), ``--wait SECONDS``. They
go before or after the command: ``nexus-tools --json list`` and ``nexus-tools list --json`` are
the same.

Errors are one line on stderr. Exit codes: 0 success; 1 the call or command failed (a tool
error, a policy refusal, a missing credential, a bad nex.yaml); 2 the command line was wrong
(unknown command or tool, bad arguments).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib.util
import re
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from ..core.errors import NexusError, ToolNotFound, ToolValidationError
from . import cmd_tokens

__all__ = ["build_parser", "main"]

_SERVE = "nexus_jupyter.serve.cli_serve"


class UsageProblem(Exception):
    """A mistake on the command line (exit code 2)."""


_INVALID_CHOICE = re.compile(r"invalid choice: '?([^' ]+)'? \(choose from (.*)\)")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2 (argparse prints usage too)
        self.exit(2, f"{self.prog}: error: {_with_suggestion(message)}\n")


def _with_suggestion(message: str) -> str:
    """argparse's "invalid choice" message with the closest choice named first."""
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return message
    given = found.group(1)
    choices = [c.strip(" '\"") for c in found.group(2).split(",")]
    close = difflib.get_close_matches(given, choices, n=1, cutoff=0.5)
    hint = f"Did you mean {close[0]!r}? " if close else ""
    what = "command" if message.startswith("argument COMMAND") else "choice"
    return f"unknown {what} {given!r}. {hint}Choose from: {', '.join(choices)}."


def _add_global_options(parser: argparse.ArgumentParser, *, nested: bool) -> None:
    """``--root``, ``--config``, ``--json`` and ``--wait``. On a subcommand (``nested``) they
    default to SUPPRESS, so ``nexus-tools --json list`` keeps the value the main parser took
    and ``nexus-tools list --json`` sets it."""

    def default(value: Any) -> Any:
        return argparse.SUPPRESS if nested else value

    parser.add_argument(
        "--root", default=default("."), help="workspace root (default: current folder)"
    )
    parser.add_argument(
        "--config", default=default(None), help="nex.yaml to use as the project level"
    )
    parser.add_argument("--json", action="store_true", default=default(False), help="print JSON")
    parser.add_argument(
        "--wait",
        type=float,
        default=default(15.0),
        help="seconds to wait for MCP servers and checks (default 15)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="nexus-tools",
        description="Browse, search, call and check the tools of a nexus_jupyter registry.",
    )
    _add_global_options(parser, nested=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    globals_parser = _Parser(add_help=False)
    _add_global_options(globals_parser, nested=True)
    shared = [globals_parser]

    p = sub.add_parser("list", help="list the tools", parents=shared)
    p.add_argument("--source", help="source name or kind (builtin, mcp, mcp:time, ...)")
    p.add_argument("--permission", choices=["read_only", "workspace_write", "danger_full_access"])
    p.add_argument("--category")
    p.add_argument("--capability")
    p.add_argument("--available", action="store_true", help="only tools that can run now")

    p = sub.add_parser("search", help="search the tools", parents=shared)
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)

    p = sub.add_parser("info", help="show a tool's definition and status", parents=shared)
    p.add_argument("name")

    p = sub.add_parser(
        "call", help="call a tool: NAME '{json}' or NAME key=value ...", parents=shared
    )
    p.add_argument("name")
    p.add_argument("arguments", nargs="*", help="one JSON object, or key=value pairs")
    p.add_argument("--timeout", type=float, default=None)
    p.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="approve a call that asks for approval (dangerous tools)",
    )

    p = sub.add_parser(
        "check", help="show every tool's availability and every source's status", parents=shared
    )
    p.add_argument(
        "names", nargs="*", metavar="NAME", help="only these tools (exit 1: one is not available)"
    )
    p.add_argument("--all", action="store_true", help="every tool and source (the default)")
    p.add_argument("--no-tests", action="store_true", help="do not run the tools' test cases")

    p = sub.add_parser(
        "credentials", help="set, list or delete credentials (never shown)", parents=shared
    )
    csub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser)
    c = csub.add_parser(
        "set", help="set SERVICE KEY (prompts, or reads stdin when piped)", parents=shared
    )
    c.add_argument("service")
    c.add_argument("key", nargs="?", default="api_key")
    c.add_argument("--provider", choices=["file", "keyring"], default=None)
    csub.add_parser("list", help="list services and keys (never values)", parents=shared)
    c = csub.add_parser("delete", help="delete SERVICE [KEY]", parents=shared)
    c.add_argument("service")
    c.add_argument("key", nargs="?", default=None)
    c.add_argument("--provider", choices=["file", "keyring"], default=None)

    from . import cmd_manifest

    cmd_manifest.add_parsers(sub, shared)
    from .cmd_toolsets import add_parser as add_toolsets_parser

    add_toolsets_parser(sub, shared)
    from . import cmd_publish, cmd_tests

    cmd_tests.add_parsers(sub, shared)
    cmd_publish.add_parser(sub, shared)
    cmd_tokens.add_parser(sub, shared)
    if importlib.util.find_spec(_SERVE) is not None:
        import importlib as _il

        _il.import_module(_SERVE).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by the console script)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return _dispatch(args, parser)
    except ToolNotFound as exc:
        return _fail(exc.worded_for("See `nexus-tools list` or `nexus-tools search WORDS`."), 2)
    except (UsageProblem, ToolValidationError) as exc:
        return _fail(exc, 2)
    except NexusError as exc:
        return _fail(exc, 1)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return 1


def _fail(exc: Any, code: int) -> int:
    text = " ".join(str(exc).split()) or type(exc).__name__
    print(f"nexus-tools: error: {text}", file=sys.stderr)
    return code


def _dispatch(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from . import commands

    if args.command == "serve":
        import importlib as _il

        code: int = _il.import_module(_SERVE).run(args)
        return code
    if args.command == "publish":
        from . import cmd_publish

        return cmd_publish.run(args)
    if args.command == "tokens":
        return cmd_tokens.run(args)
    if args.command == "credentials":
        if args.action is None:
            raise UsageProblem("credentials needs an action: set, list or delete.")
        return commands.credentials(args)
    from . import cmd_manifest, cmd_tests

    if args.command in cmd_manifest.COMMANDS:
        return cmd_manifest.run(args)
    if args.command in cmd_tests.COMMANDS:
        return cmd_tests.run(args)
    handler: Any = getattr(commands, f"cmd_{args.command}", None)
    if args.command == "check" and args.names:
        handler = cmd_manifest.check_named
    if args.command == "toolsets":
        from .cmd_toolsets import cmd_toolsets

        handler = cmd_toolsets
    with commands.open_registry(args) as reg, _masked_output(reg):
        result: int = handler(reg, args)
        return result


@contextlib.contextmanager
def _masked_output(reg: Any) -> Iterator[None]:
    """While a command runs, what it (and any tool it calls) prints has stored secrets
    masked, like the results it shows."""
    store = getattr(reg, "credentials", None)
    if store is None:
        yield
        return
    from ..core.policy.masking import MaskingStream

    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = MaskingStream(out, store.mask), MaskingStream(err, store.mask)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = out, err


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
