"""Which tools MCP clients may call at all: the grant of the MCP face (``grant: {mcp: ...}``
in nex.yaml, ``workspace_write`` by default), lowered by the scopes of the client's token.

A tool above that level is refused on every call, whoever makes it: ``nexus-tools serve``
does not list it (an agent would otherwise pick it, fail and have no way to fix it), tells
the person running the server which tools that leaves out and how to offer them
(:func:`above_grant_notice`), and still answers a call by name with the refusal and its
reason. A tool that cannot run (its source says so: no search provider for ``web_search``,
a program that is not installed, an MCP server that is down) is not offered either, until it
can: only the person running the server can fix it, and ``nexus-tools list``/``check`` and
serve's stderr tell them how. A tool that lacks only a credential stays listed: setting one
is not announced to clients, and its call tells the agent whom to ask. :func:`offered` is
what a client is offered, listed or deferred: the listing and every count said about it
come from it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any, NamedTuple, cast

from ..core.tools.context import MCP_CALLER, RequestInfo
from ..core.tools.spec import permission_rank

__all__ = [
    "SEARCH_TOOL",
    "Offered",
    "above_grant",
    "above_grant_notice",
    "cannot_run_now",
    "mcp_grant",
    "offered",
]

#: Listed with ``defer`` too: the tool that finds the deferred ones.
SEARCH_TOOL = "tool_search"


def mcp_grant(
    registry: Any, principal: str | None = None, ceiling: str | None = None
) -> str | None:
    """The highest permission an MCP caller (``principal``, with a token whose scopes grant
    at most ``ceiling``) can use under ``registry``'s policy: what the call path applies
    (:meth:`~nexus_jupyter.core.policy.policy.Policy.granted`: the face's grant, the
    principal's ``policies:``, the token). ``None`` when the policy does not say (a custom
    one): then every tool is listed."""
    granted = getattr(getattr(registry, "policy", None), "granted", None)
    if not callable(granted):
        return None
    request = RequestInfo(caller=MCP_CALLER, principal=principal, ceiling=cast(Any, ceiling))
    try:
        level = str(granted(request))
        permission_rank(level)
    except Exception:  # an odd policy must not stop the listing: list everything
        return None
    return level


def above_grant(specs: Iterable[Any], level: str | None) -> list[str]:
    """The names of ``specs`` whose permission is above ``level`` (none when ``None``)."""
    if level is None:
        return []
    rank = permission_rank(level)
    return [s.name for s in specs if permission_rank(s.permission) > rank]


def cannot_run_now(registry: Any, names: Iterable[str]) -> set[str]:
    """Those of ``names`` whose source says they cannot run now (an ``unavailable`` or
    ``error`` status in the registry's snapshot; a missing credential alone is not one)."""
    entries = registry.snapshot.entries
    return {n for n in names if (e := entries.get(n)) is not None and e.status != "ok"}


def above_grant_notice(registry: Any, names: list[str]) -> str:
    """For the person running the server: which tools MCP clients are not offered, why,
    and the nex.yaml line that offers them."""
    by_level: dict[str, list[str]] = {}
    for name in names:
        tool = registry.find(name)
        if tool is not None:
            by_level.setdefault(tool.spec.permission, []).append(name)
    level = mcp_grant(registry) or "workspace_write"
    needs = "; ".join(f"{', '.join(sorted(n))} need {p}" for p, n in sorted(by_level.items()))
    top = max(by_level, key=permission_rank, default="danger_full_access")
    ask = ""
    if top == "danger_full_access":
        ask = " (their calls still need approval: asked at the client, or `approvals:`)"
    return (
        f"not listed to MCP clients: {needs}, above the grant for MCP callers ({level}). "
        f"To offer them, set `grant: {{mcp: {top}}}` in nex.yaml{ask}."
    )


class Offered(NamedTuple):
    """The tools an MCP client is offered: ``listed`` in ``tools/list``, and ``deferred``
    (with ``defer``: found through ``tool_search``, callable by name)."""

    listed: list[Any]
    deferred: list[Any]


def offered(
    registry: Any,
    level: str | None,
    *,
    defer: bool = False,
    hidden: Collection[str] = (),
) -> Offered:
    """The entries of ``registry`` a client whose grant is ``level`` is offered (``None``:
    all): those above it are not, nor the ``hidden`` ones; with ``defer`` only the eager
    ones and ``tool_search`` are listed, the rest deferred. Tools that cannot run now
    (:func:`cannot_run_now`) are not offered."""
    entries = [e for e in registry.entries() if e.name not in hidden]
    over = set(above_grant((e.spec for e in entries), level))
    over |= cannot_run_now(registry, (e.name for e in entries))
    entries = [e for e in entries if e.name not in over]
    if not defer:
        return Offered(entries, [])
    listed = [e for e in entries if e.spec.eager or e.name == SEARCH_TOOL]
    shown = {e.name for e in listed}
    return Offered(listed, [e for e in entries if e.name not in shown])
