"""``%tool test | stats | eval``: thin shims over :mod:`.testing`.

- ``%tool test [NAME ...] [--yes]`` -> :func:`.testing.run_tests`
- ``%tool test save NAME {args} [--expect V | --expect-error T | --subset J | --check E]
  [--name LABEL] [--timeout S]`` -> :func:`.testing.save_test`
- ``%tool stats [NAME ...]`` -> :func:`.testing.call_stats`
- ``%tool eval FILE [--mode keyword|hybrid]`` -> :func:`.testing.eval_queries`
"""

from __future__ import annotations

import re
from typing import Any

from ..core.errors import NexusError
from ..core.tools.arguments import parse_call_arguments, split_top_level, typed_value
from .magic_core import complete_tool_names
from .options import parse_options
from .subcommands import MagicContext, subcommand

__all__ = ["parse_save_line"]

_SAVE_OPTIONS = ("--expect", "--expect-error", "--subset", "--check", "--name", "--timeout")
_SAVE_RE = re.compile(r"^\s*test\s+save(?:\s+(\S+))?(.*)$", re.DOTALL)
_USAGE = (
    "%tool test save NAME {args} [--expect VALUE | --expect-error TEXT | --subset JSON | "
    "--check EXPRESSION] [--name LABEL] [--timeout SECONDS]"
)


def parse_save_line(line: str) -> dict[str, Any]:
    """The parts of a ``%tool test save ...`` line: ``name``, ``arguments`` and the options
    (``expect``, ``expect_error``, ``subset``, ``check``, ``label`` for ``--name``,
    ``timeout``; values as JSON where they parse, quotes removed: ``--check "result['x'] >
    0"``)."""
    match = _SAVE_RE.match(line)
    name = match.group(1) if match else None
    if not name or name.startswith("--"):
        raise NexusError(f"Give the tool and its arguments: `{_USAGE}`.")
    tokens = split_top_level(match.group(2) if match else "")
    first_option = next((i for i, t in enumerate(tokens) if t.startswith("--")), len(tokens))
    arguments = parse_call_arguments(tokens[:first_option], name, command="%tool test save")
    options: dict[str, Any] = {}
    rest = tokens[first_option:]
    i = 0
    while i < len(rest):
        option = rest[i]
        if option not in _SAVE_OPTIONS:
            import difflib

            close = difflib.get_close_matches(option, _SAVE_OPTIONS, n=1, cutoff=0.5)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise NexusError(
                f"Unknown option {option!r} for `%tool test save`.{hint} Usage: `{_USAGE}`."
            )
        if i + 1 >= len(rest):
            raise NexusError(f"{option} needs a value; usage: `{_USAGE}`.")
        raw = rest[i + 1]
        key = "label" if option == "--name" else option[2:].replace("-", "_")
        text_only = key in ("expect_error", "check", "label")
        value = typed_value(raw)
        options[key] = value if not text_only or isinstance(value, str) else raw
        i += 2
    return {"name": name, "arguments": arguments, **options}


@subcommand(
    "test",
    usage="%tool test [NAME ...] [--yes]  ·  " + _USAGE,
    summary="Run the tools' saved test cases, or save a call as a new one.",
    details="Cases live beside a tool file (<file>.tests.yaml) or in this notebook's metadata "
    "(for its own tools), and run after every change of the tool. --yes runs cases whose "
    "tools ask for approval. Values are JSON where they parse, else text.",
    example='%tool test save add {"a": 1, "b": 2} --expect 3   ·   %tool test add',
    complete=complete_tool_names,
)
def _test(ctx: MagicContext, argv: list[str]) -> Any:
    from . import testing  # on first use: %load_ext stays fast

    if argv[:1] == ["save"] and (len(argv) > 1 or ctx.registry.find("save") is None):
        parts = parse_save_line(ctx.line)
        expectation: dict[str, Any] = {}
        for key in ("expect", "expect_error", "subset", "check"):
            if key in parts:
                expectation[key] = parts[key]
        timeout = parts.get("timeout")
        if timeout is not None and not isinstance(timeout, int | float):
            raise NexusError(f"--timeout is a number of seconds, got {timeout!r}.")
        return testing.save_test(
            parts["name"],
            parts["arguments"],
            case_name=str(parts.get("label") or ""),
            timeout=timeout,
            registry=ctx.registry,
            **expectation,
        )
    opts = parse_options("%tool test", argv, {"--yes": "flag"})
    return testing.run_tests(
        opts["args"] or None, approved=bool(opts.get("yes")), registry=ctx.registry
    )


@subcommand(
    "stats",
    usage="%tool stats [NAME ...]",
    summary="Calls, errors, refusals and p50/p95 latency per tool in this session.",
    example="%tool stats add",
    complete=complete_tool_names,
)
def _stats(ctx: MagicContext, argv: list[str]) -> Any:
    from . import testing

    opts = parse_options("%tool stats", argv, {})
    return testing.call_stats(opts["args"], registry=ctx.registry)


@subcommand(
    "eval",
    usage="%tool eval QUERIES.yaml|json [--mode keyword|hybrid]",
    summary="Measure search on labelled queries: recall@1/@5, MRR, misses, confusable pairs.",
    details="QUERIES is a list of {query, relevant: [tool, ...]} ([] for a query no tool "
    "serves), the shape of the toolret files.",
    example="%tool eval queries.yaml --mode hybrid",
)
def _eval(ctx: MagicContext, argv: list[str]) -> Any:
    from . import testing

    opts = parse_options("%tool eval", argv, {"--mode": "one"}, max_args=1)
    if not opts["args"]:
        raise NexusError("Give the queries file: `%tool eval QUERIES.yaml [--mode hybrid]`.")
    return testing.eval_queries(opts["args"][0], mode=opts.get("mode"), registry=ctx.registry)
