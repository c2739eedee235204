"""The core ``%tool`` subcommands: list, search, info, call, try, browse, remove, history, help.

Each one parses its arguments and calls :mod:`nexus_jupyter.notebook.api`; nothing else.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.errors import NexusError
from ..core.tools.arguments import parse_call_arguments
from . import api
from .options import parse_options
from .subcommands import SUBCOMMANDS, MagicContext, subcommand

__all__ = ["complete_tool_names", "parse_call_arguments"]


def complete_tool_names(ctx: MagicContext, argv: list[str]) -> list[str]:
    """Tool names for the first argument of a subcommand."""
    return list(ctx.registry.names()) if len(argv) <= 1 else []


def _one_name(command: str, argv: list[str], what: str = "NAME") -> str:
    if not argv:
        raise NexusError(f"Give a tool name: `%tool {command} {what}`.")
    if len(argv) > 1:
        raise NexusError(f"`%tool {command}` takes one tool name, got {' '.join(argv)!r}.")
    return argv[0]


@subcommand(
    "list",
    usage="%tool list [--source S] [--category C]",
    summary="List the tools, optionally only one source (name or kind) or category.",
    example="%tool list --source notebook",
)
def _list(ctx: MagicContext, argv: list[str]) -> Any:
    opts = parse_options("%tool list", argv, {"--source": "one", "--category": "one"}, max_args=0)
    return api.list_tools(
        source=opts.get("source"), category=opts.get("category"), registry=ctx.registry
    )


@subcommand(
    "search",
    usage="%tool search QUERY [--limit N]",
    summary="Rank the tools by how well they match QUERY (name, description, params).",
    example="%tool search add two numbers",
)
def _search(ctx: MagicContext, argv: list[str]) -> Any:
    opts = parse_options("%tool search", argv, {"--limit": "one"})
    try:
        limit = int(opts.get("limit", 10))
    except ValueError:
        raise NexusError(f"--limit must be a whole number, got {opts['limit']!r}.") from None
    if limit < 1:
        raise NexusError(f"--limit must be at least 1, got {limit!r}.")
    return api.search_tools(" ".join(opts["args"]), limit=limit, registry=ctx.registry)


@subcommand(
    "info",
    usage="%tool info NAME",
    summary="Show a tool: badges, description, parameters, origin, shadowed versions.",
    example="%tool info add",
    complete=complete_tool_names,
)
def _info(ctx: MagicContext, argv: list[str]) -> Any:
    return api.tool_info(_one_name("info", argv), registry=ctx.registry)


_CALL_RE = re.compile(r"^\s*call(?:\s+(\S+))?(.*)$", re.DOTALL)


@subcommand(
    "call",
    usage="%tool call NAME {json} | key=value ...",
    summary="Call a tool and show its result; the call goes into the history.",
    details="Values of key=value are parsed as JSON where they parse, else kept as text; "
    'a parameter that takes text gets the text (`content=42` is "42").',
    example='%tool call add a=1 b=2   ·   %tool call add {"a": 1, "b": 2}',
    complete=complete_tool_names,
)
def _call(ctx: MagicContext, argv: list[str]) -> Any:
    match = _CALL_RE.match(ctx.line)
    name = match.group(1) if match else None
    if not name:
        raise NexusError('Give a tool name: `%tool call NAME a=1` or `%tool call NAME {"a": 1}`.')
    found = ctx.registry.find(name)  # its schema: a string parameter takes `text=42` as text
    schema = found.spec.input_schema if found is not None else None
    arguments = parse_call_arguments(match.group(2) if match else "", name, schema=schema)
    return api.call_tool(name, arguments, registry=ctx.registry)


@subcommand(
    "try",
    usage="%tool try NAME",
    summary="Open a test-call form for a tool (fields from its schema, Run, Cancel).",
    example="%tool try add",
    complete=complete_tool_names,
)
def _try(ctx: MagicContext, argv: list[str]) -> Any:
    return api.try_tool(_one_name("try", argv), registry=ctx.registry)


@subcommand(
    "browse",
    usage="%tool browse [QUERY]",
    summary="Open the catalog: search as you type, filters, details and Try.",
    example="%tool browse weather   (or %tools)",
)
def _browse(ctx: MagicContext, argv: list[str]) -> Any:
    return api.browse(" ".join(argv), registry=ctx.registry)


@subcommand(
    "remove",
    usage="%tool remove NAME",
    summary="Remove a tool this notebook registered.",
    example="%tool remove add",
    complete=complete_tool_names,
)
def _remove(ctx: MagicContext, argv: list[str]) -> None:
    api.remove_tool(_one_name("remove", argv), registry=ctx.registry)


@subcommand(
    "history",
    usage="%tool history [NAME]",
    summary="Show past calls (of one tool when NAME is given), oldest first.",
    example="%tool history add",
    complete=complete_tool_names,
)
def _history(ctx: MagicContext, argv: list[str]) -> Any:
    if len(argv) > 1:
        raise NexusError(f"`%tool history` takes at most one tool name, got {' '.join(argv)!r}.")
    return api.call_history(argv[0] if argv else None, registry=ctx.registry)


def _complete_subcommands(ctx: MagicContext, argv: list[str]) -> list[str]:
    return sorted(SUBCOMMANDS) if len(argv) <= 1 else []


@subcommand(
    "help",
    usage="%tool help [SUBCOMMAND]",
    summary="Explain one subcommand (or all of them) with an example.",
    example="%tool help call",
    complete=_complete_subcommands,
)
def _help(ctx: MagicContext, argv: list[str]) -> Any:
    from .magics import build_help
    from .views import HelpText

    if len(argv) > 1:
        raise NexusError(f"`%tool help` takes one subcommand, got {' '.join(argv)!r}.")
    return HelpText(build_help(argv[0] if argv else None))
