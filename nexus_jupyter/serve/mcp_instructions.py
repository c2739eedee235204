"""The ``instructions`` an MCP client gets (``initialize``, and ``server/discover`` at
2026-07-28): a few lines for the agent, made from the registry as it is when the client
connects: how many tools it is offered and where they come from, how to find deferred
ones with ``tool_search``, and what an approval error means. Over HTTP a folder of tool files
is named as the client is shown paths (:mod:`.mcp_paths`).

    This server (nexus-tools) offers 12 tools: built-in files (6), web (1), meta (1); MCP
    server 'time' (2); tool files in tools (2). The list can change while you are connected
    (tools/list is always current).
    Only 3 are listed; 9 more are deferred: call tool_search with words for what you want
    to do, then tool_search with "select:NAME1,NAME2" for their full schemas, then call
    them by name.
    Some calls need the user's approval: the server asks them through your client. ...
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from typing import Any

from ..core.tools.context import MCP_CALLER, RequestInfo
from ..core.toolsets.names import BUILTIN_TOOLSETS
from .mcp_grant import SEARCH_TOOL, mcp_grant, offered
from .mcp_paths import ShownPaths

__all__ = ["instructions_for"]

_TOOLSET_OF = {tool: toolset for toolset, tools in BUILTIN_TOOLSETS.items() for tool in tools}


def _group(spec: Any, paths: ShownPaths | None) -> str:
    """Where a tool comes from, as the agent is told it."""
    source = paths.source(str(spec.source)) if paths is not None else str(spec.source)
    kind, _, name = source.partition(":")
    if source == "builtin":
        return f"built-in {_TOOLSET_OF.get(spec.name, 'tools')}"
    if kind == "mcp":
        return f"MCP server {name!r}"
    if kind == "directory":
        return f"tool files in {name}"
    if kind == "toolset":
        return f"toolset {name!r}"
    if spec.source_kind in ("notebook", "kernel"):
        return "notebook tools"
    if spec.source_kind == "config":
        return "tools declared in the server's settings"
    return source or "other tools"


def _counts(specs: list[Any], paths: ShownPaths | None) -> str:
    """``built-in files (6), web (1); MCP server 'time' (2)``: the built-ins by toolset
    (in their usual order), then the other sources by name."""
    by_group = Counter(_group(s, paths) for s in specs)
    order = list(BUILTIN_TOOLSETS)
    builtin = sorted(
        (g.removeprefix("built-in "), n) for g, n in by_group.items() if g.startswith("built-in ")
    )
    builtin.sort(key=lambda pair: order.index(pair[0]) if pair[0] in order else len(order))
    parts = []
    if builtin:
        parts.append("built-in " + ", ".join(f"{g} ({n})" for g, n in builtin))
    parts += [f"{g} ({n})" for g, n in sorted(by_group.items()) if not g.startswith("built-in ")]
    return "; ".join(parts)


def _may_ask(registry: Any, specs: list[Any]) -> bool:
    """Whether a call of one of ``specs`` by an MCP client may need a person's approval."""
    policy = getattr(registry, "policy", None)
    if policy is None:
        return False
    if any(getattr(rule, "action", None) == "ask" for rule in getattr(policy, "rules", ())):
        return True
    request = RequestInfo(caller=MCP_CALLER)
    try:
        return any(policy.check(s, {}, request).action == "ask" for s in specs)
    except Exception:  # a custom policy that cannot say: tell the agent how approvals go
        return True


def instructions_for(
    registry: Any,
    *,
    defer: bool = False,
    hidden: Collection[str] = (),
    name: str = "nexus-tools",
    paths: ShownPaths | None = None,
) -> str:
    """The instructions for a client connecting now (the face's grant: the tools a client
    without a token of its own is offered; ``paths``: how it is shown this machine's paths,
    ``None`` in full)."""
    listed, deferred = offered(registry, mcp_grant(registry), defer=defer, hidden=hidden)
    specs = [e.spec for e in [*listed, *deferred]]
    lines = [
        f"This server ({name}) offers {len(specs)} tools"
        + (f": {_counts(specs, paths)}." if specs else ".")
        + " The list can change while you are connected (tools/list is always current)."
    ]
    if deferred:
        lines.append(
            f"Only {len(listed)} are listed; {len(deferred)} more are deferred: call "
            f"{SEARCH_TOOL} with words for what you want to do, then {SEARCH_TOOL} with "
            '"select:NAME1,NAME2" for their full schemas, then call them by name.'
        )
    elif any(s.name == SEARCH_TOOL for s in specs):
        lines.append(f"{SEARCH_TOOL} finds the tools that fit a task when you are unsure.")
    if _may_ask(registry, specs):
        lines.append(
            "Some calls need the user's approval: the server asks them through your client. "
            "An error that a call needs approval, or was not approved, means the tool did not "
            "run: tell the user, and do not repeat the call unchanged."
        )
    lines.append(
        "A tool's error says what was wrong and what to do; a fix only the person running "
        "this server can make is worded as something to ask the user."
    )
    return "\n".join(lines)
