"""``nexus-tools install | register | sync`` and ``check NAME ...``: the tool manifest.

nexus-tools check build lint             # exit 1 when a named tool is unavailable
nexus-tools install build [--yes]        # show the install command, ask, run, re-check
nexus-tools install --all-missing --yes
nexus-tools register tools/lint.yaml [--user | --project]
nexus-tools sync                         # re-discover; print added, removed, changed
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .main import UsageProblem
from .output import stdout

__all__ = ["COMMANDS", "add_parsers", "check_named", "run"]

COMMANDS = ("install", "register", "sync")


def add_parsers(sub: Any, shared: Sequence[argparse.ArgumentParser]) -> None:
    """Register the manifest commands on the ``nexus-tools`` sub-parsers."""
    p = sub.add_parser(
        "install", help="install declared tools: NAME ... or --all-missing", parents=shared
    )
    p.add_argument("names", nargs="*", metavar="NAME")
    p.add_argument("--all-missing", action="store_true", help="every unavailable declared tool")
    p.add_argument("--yes", "-y", action="store_true", help="run the commands without asking")

    p = sub.add_parser(
        "register", help="add tool definitions from FILE to a nex.yaml", parents=shared
    )
    p.add_argument("file")
    level = p.add_mutually_exclusive_group()
    level.add_argument("--user", action="store_true", help="the user level (~/.nexus/nex.yaml)")
    level.add_argument("--project", action="store_true", help="the project level (default)")

    sub.add_parser(
        "sync",
        help="re-discover every source; print what was added, removed, changed",
        parents=shared,
    )


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    _say(json.dumps(data, indent=2, default=str) if args.json else text)


def _say(text: str) -> None:
    """A line of the command's own output (stdout; what tools print goes to stderr)."""
    print(text, file=stdout())


def check_named(reg: Any, args: argparse.Namespace) -> int:
    """``check NAME ...``: each tool's availability; exit 1 when one is unavailable."""
    from ..sources.maintenance import check_tools

    rows = check_tools(reg, args.names)
    lines = [
        f"{r['name']}: " + ("available" if r["available"] else f"unavailable -- {r['reason']}")
        for r in rows
    ]
    _print(args, rows, "\n".join(lines))
    return 0 if all(r["available"] for r in rows) else 1


def run(args: argparse.Namespace) -> int:
    from .commands import open_registry

    if args.command == "register":
        return _register(args)
    with open_registry(args) as reg:
        if args.command == "install":
            return _install(reg, args)
        return _sync(reg, args)


def _install(reg: Any, args: argparse.Namespace) -> int:
    from ..core.errors import ToolNotFound
    from ..sources.maintenance import declared_source, install_tools, terminal_confirm

    if bool(args.names) == args.all_missing:
        raise UsageProblem("install needs tool names or --all-missing (not both).")
    if args.yes:
        confirm: Any = lambda _command: True  # noqa: E731
    elif sys.stdin.isatty():
        confirm = terminal_confirm
    else:
        confirm = None  # install_tool refuses, saying to pass --yes
    report = (lambda _line: None) if args.json else _say
    try:
        outcomes = install_tools(
            reg, args.names, all_missing=args.all_missing, confirm=confirm, report=report
        )
    except ToolNotFound as exc:
        if exc.suggestions or exc.cause:
            raise
        declared = declared_source(reg)
        names = ", ".join(sorted(declared.declarations)) if declared is not None else ""
        raise UsageProblem(
            f"No declared tool named {exc.name!r}: `install` installs the tools declared under "
            f"`tools:` in nex.yaml, here {names}."
        ) from None
    if args.json:
        _print(args, [o.__dict__ for o in outcomes], "")
    return 0 if all(o.ok for o in outcomes) else 1


def _register(args: argparse.Namespace) -> int:
    from ..core.config.loading import CONFIG_FILENAME, nexus_home
    from ..core.config.register import read_definitions, register_definitions

    if not Path(args.file).is_file():
        raise UsageProblem(
            f"No file {args.file!r}; give the path of a YAML file with one tool definition "
            "(or a list of them)."
        )
    definitions = read_definitions(Path(args.file))
    if args.user:
        bound = [d.id for d in definitions if d.entry.get("project_specific")]
        if bound:
            raise UsageProblem(
                f"{', '.join(map(repr, bound))} is marked project_specific; register it in "
                "the project's nex.yaml (--project), not at the user level."
            )
        target = nexus_home() / CONFIG_FILENAME
    elif args.config:
        target = Path(args.config)
    else:
        target = Path(args.root) / CONFIG_FILENAME
    done = register_definitions(definitions, target)
    text = "\n".join(f"{name}: {what} in {target}" for name, what in done.items())
    _print(args, {"file": str(target), "tools": done}, text)
    return 0


def _sync(reg: Any, args: argparse.Namespace) -> int:
    from ..sources.maintenance import sync

    report = sync(reg, Path(args.root).resolve())
    if args.json:
        _print(args, report, "")
        return 0
    if report["first"]:
        _say(f"First sync of this project: {len(report['added'])} tools recorded.")
        return 0
    for name in report["added"]:
        _say(f"added    {name}")
    for name in report["removed"]:
        _say(f"removed  {name}")
    for change in report["changed"]:
        parts = [f"{k} {change['before'][k]} -> {change['after'][k]}" for k in change["changed"]]
        _say(f"changed  {change['name']}: " + ", ".join(parts))
    if not (report["added"] or report["removed"] or report["changed"]):
        _say("No changes since the last sync.")
    return 0
