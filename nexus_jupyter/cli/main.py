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
the same. A command's options may stand anywhere among its words (``call read --json
path=a.txt``); after ``--`` every word is an argument.

Errors are one line on stderr (``call --json`` also answers them as a JSON object on stdout).
Exit codes: 0 success; 1 the call or command failed (a tool error, a policy refusal, a
missing credential, a bad nex.yaml); 2 the command line was wrong (unknown command, tool,
source or category, bad arguments, a ``--root`` that is not a folder); 130 interrupted
(Ctrl-C). stdout is the command's own output: what tools print goes to stderr
(:mod:`.output`).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import NexusError, ToolNotFound, ToolValidationError
from . import cmd_tokens

__all__ = ["build_parser", "main"]

_SERVE = "nexus_jupyter.serve.cli_serve"


class UsageProblem(Exception):
    """A mistake on the command line (exit code 2)."""


_NUMBER = re.compile(r"-\d+(\.\d*)?")
_INVALID_CHOICE = re.compile(r"invalid choice: '?([^' ]+)'? \(choose from (.*)\)")


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are one line, and whose options may stand anywhere among a
    command's words: ``call read --json path=notes.txt`` is ``call read path=notes.txt
    --json``. Words after ``--`` are never options (``call echo -- --text=x``)."""

    #: The last command-line error, for ``call --json``'s JSON answer.
    last_error: str | None = None
    #: The command line being read (to name the command of an unknown option).
    argv: Sequence[str] = ()
    _intermixing = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        # argparse reads the positional words of a command as one run, so a list such as
        # `call`'s key=value pairs ends at the first option. The intermixed parse reads the
        # options first, then the words; it calls back in here, and it cannot read a parser
        # that has subcommands (the top level, `credentials`, `tokens`).
        if self._intermixing or self._has_subcommands():
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False

    def add_argument(self, *names: Any, **kwargs: Any) -> argparse.Action:
        # argparse makes a `nargs="*"` positional without a default required, which the
        # intermixed parse then names in "the following arguments are required" when an
        # earlier word is missing (`call` alone: "name, arguments"); none is ever required
        if kwargs.get("nargs") == "*" and "default" not in kwargs and not _is_option(names):
            kwargs["default"] = []
        return super().add_argument(*names, **kwargs)

    def _has_subcommands(self) -> bool:
        return any(a.nargs == argparse.PARSER for a in self._get_positional_actions())

    def error(self, message: str) -> Any:  # one line, exit 2 (argparse prints usage too)
        _Parser.last_error = _with_suggestion(message, self)
        self.exit(2, f"{self.prog}: error: {_Parser.last_error}\n")


def _is_option(names: Sequence[Any]) -> bool:
    return bool(names) and str(names[0]).startswith("-")


def _with_suggestion(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's "invalid choice" message with the closest choice named first."""
    if message.startswith("unrecognized arguments: "):
        return _unknown_options(message.removeprefix("unrecognized arguments: "), parser)
    found = _INVALID_CHOICE.search(message)
    if found is None:
        return message
    given = found.group(1)
    choices = [c.strip(" '\"") for c in found.group(2).split(",")]
    close = difflib.get_close_matches(given, choices, n=1, cutoff=0.5)
    hint = f"Did you mean {close[0]!r}? " if close else ""
    what = "command" if message.startswith("argument COMMAND") else "choice"
    return f"unknown {what} {given!r}. {hint}Choose from: {', '.join(choices)}."


def _unknown_options(words: str, parser: argparse.ArgumentParser) -> str:
    """argparse lists an unknown option with every word after it (fine as they are): name
    the options only, with the command's closest one."""
    unknown = [w.split("=", 1)[0] for w in words.split() if w.startswith("-")]
    unknown = [w for w in unknown if not _NUMBER.fullmatch(w)]
    if not unknown:
        return f"unrecognized arguments: {words}"
    command = _command_of(_Parser.argv)
    found = _subcommand(parser, command) if command else None
    options = list(found._option_string_actions) if found is not None else []
    close = difflib.get_close_matches(unknown[0], options, n=2, cutoff=0.6)
    hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
    help_of = f"nexus-tools {command} --help" if found is not None else "nexus-tools --help"
    named = ", ".join(map(repr, unknown))
    return f"unknown option {named}.{hint} `{help_of}` lists the options."


def _subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser | None = action.choices.get(name)
            return found
    return None


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
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    _Parser.argv = argv
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        if exc.code == 2 and _Parser.last_error and _json_call(argv):
            _print_call_error(None, _Parser.last_error, None)
        raise
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return _dispatch(args, parser)
    except (NexusError, UsageProblem, KeyboardInterrupt, BrokenPipeError) as exc:
        code = reported_failure(exc, args)
        assert code is not None
        return code


def reported_failure(exc: BaseException, args: argparse.Namespace) -> int | None:
    """Say ``exc`` on stderr as the command line words it and give its exit code; ``None``
    for an error it has no words for (Python's traceback shows it, exit code 1)."""
    if isinstance(exc, ToolNotFound):
        text = exc.worded_for("See `nexus-tools list` or `nexus-tools search WORDS`.")
        return _fail(text, 2, args, exc)
    if isinstance(exc, ToolValidationError):
        from .call_args import validation_message

        return _fail(validation_message(exc), 2, args, exc)
    if isinstance(exc, UsageProblem):
        return _fail(exc, 2, args, exc)
    if isinstance(exc, NexusError):
        return _fail(exc, 1, args, exc)
    if isinstance(exc, KeyboardInterrupt):  # Ctrl-C: `call --json` answers in JSON too
        return _fail("interrupted", 130, args, exc)
    if isinstance(exc, BrokenPipeError):
        return 1
    return None


def _fail(message: Any, code: int, args: argparse.Namespace | None = None, exc: Any = None) -> int:
    """The error on stderr, one line; with ``call --json`` also as JSON on stdout (a failed
    call's result says what went wrong there too)."""
    text = " ".join(str(message).split()) or type(message).__name__
    print(f"nexus-tools: error: {text}", file=sys.stderr)
    if args is not None and args.command == "call" and getattr(args, "json", False):
        _print_call_error(args.name, text, exc)
    return code


def _print_call_error(tool: str | None, message: str, exc: Any) -> None:
    import json

    from .call_args import error_object
    from .output import stdout

    data = error_object(tool, message, exc)
    print(json.dumps(data, indent=2, default=str, ensure_ascii=False), file=stdout())


#: Global options that take a value (to find the command in an argv argparse refused).
_VALUED = ("--root", "--config", "--wait")


def _json_call(argv: Sequence[str]) -> bool:
    """Whether ``argv`` asks for ``call`` with ``--json`` (its errors are answered in JSON)."""
    return _command_of(argv) == "call" and "--json" in argv


def _command_of(argv: Sequence[str]) -> str | None:
    """The command word of ``argv`` (the first word that is not a global option)."""
    words = iter(argv)
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _check_root(args: argparse.Namespace) -> None:
    """``--root`` must be an existing folder (the workspace: tools, files, nex.yaml)."""
    root = getattr(args, "root", None)
    if root is None or args.command == "credentials":  # credentials do not use it
        return
    path = Path(root).expanduser()
    if not path.exists():
        raise UsageProblem(
            f"the workspace root {root!r} does not exist; give an existing folder with "
            "--root DIR (default: the current folder)."
        )
    if not path.is_dir():
        raise UsageProblem(
            f"the workspace root {root!r} is a file, not a folder; give the project's folder "
            "with --root DIR (default: the current folder)."
        )


#: Commands that show every broken source themselves (``check NAME`` shows tools only).
_REPORT_SOURCES = ("list", "check", "toolsets")


def _dispatch(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from . import commands
    from .output import masked_output, tools_print_to_stderr

    _check_root(args)
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
        with tools_print_to_stderr():
            return cmd_manifest.run(args)
    if args.command in cmd_tests.COMMANDS:
        return cmd_tests.run(args)  # its registry loads with tool prints on stderr
    handler: Any = getattr(commands, f"cmd_{args.command}", None)
    if args.command == "check" and args.names:
        handler = cmd_manifest.check_named
    if args.command == "toolsets":
        from .cmd_toolsets import cmd_toolsets

        handler = cmd_toolsets
    # these commands say each broken source themselves: the registry's log line would say it
    # twice (list: a warning per source; check: its table; toolsets: the toolset's error)
    reports = args.command in _REPORT_SOURCES and not getattr(args, "names", None)
    opened = commands.open_registry(args, quiet_load_failures=reports)
    # what tools print (a tool file at import, a tool during a call) goes to stderr: stdout
    # is the command's own output (`--json` must parse), as under `nexus-tools serve`
    with tools_print_to_stderr(), opened as reg:
        store = getattr(reg, "credentials", None)
        with masked_output(store.mask if store is not None else None):
            result: int = handler(reg, args)
            return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
