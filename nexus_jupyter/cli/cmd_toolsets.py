"""``nexus-tools toolsets``: the toolsets, their tools, approval defaults and errors."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from ..core.toolsets.overview import toolset_rows
from .output import stdout

__all__ = ["add_parser", "cmd_toolsets", "toolsets_text"]


def add_parser(sub: Any, shared: Sequence[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "toolsets",
        help="list the toolsets (groups of tools) and their settings",
        parents=list(shared),
    )
    p.add_argument("name", nargs="?", help="show only this toolset's tools")


def toolsets_text(rows: list[dict[str, Any]]) -> str:
    """The rows as a plain-text table (also used by ``%tool toolsets``): name, on or off,
    where it comes from, the approval default and the tools; an error on the next line."""
    name_w = max((len(r["toolset"]) for r in rows), default=7)
    from_w = max((len(str(r["origin"])) for r in rows), default=4)
    lines = []
    for row in rows:
        state = "on " if row["enabled"] else "off"
        tools = ", ".join(row["tools"]) or "-"
        line = (
            f"{row['toolset']:<{name_w}}  {state}  {row['origin']:<{from_w}}  "
            f"approval: {row['approval']:<13}  {tools}"
        )
        if row["error"]:
            line += f"\n{'':<{name_w}}  error: {' '.join(str(row['error']).split())}"
        lines.append(line)
    return "\n".join(lines)


def cmd_toolsets(reg: Any, args: argparse.Namespace) -> int:
    rows = toolset_rows(reg)
    if args.name:
        rows = [r for r in rows if r["toolset"] == args.name]
        if not rows:
            known = ", ".join(r["toolset"] for r in toolset_rows(reg))
            print(
                f"nexus-tools: error: no toolset {args.name!r}; toolsets: {known}.", file=sys.stderr
            )
            return 2
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False), file=stdout())
    else:
        print(toolsets_text(rows), file=stdout())
    return 1 if any(r["error"] for r in rows) else 0
