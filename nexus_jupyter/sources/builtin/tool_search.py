"""``tool_search``: find deferred tools by text, or load their schemas by name.

The deferred-loading pattern: an agent is shown the eager tools with their full schemas
and only the names of the rest; it calls ``tool_search("weather forecast")`` to find
candidates and ``tool_search("select:get_weather,get_forecast")`` to load their schemas.
An agent over MCP is not offered the tools that cannot run now (as ``tools/list`` leaves them
out): ``select:`` names them under ``not_available`` with the reason, worded for it.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ...core.registry.reasons import reason_for
from ...core.tools.context import RequestInfo, ToolContext
from ...core.tools.decorator import tool
from ...core.tools.spec import PERMISSIONS, permission_rank
from ...core.tools.tool import Tool

__all__ = ["tool_search_tool"]

MAX_RESULTS = 50


def _brief(spec: Any) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.summary, "input_schema": dict(spec.input_schema)}


def _full(spec: Any) -> dict[str, Any]:
    out = {
        "name": spec.name,
        "description": spec.description,
        "input_schema": dict(spec.input_schema),
    }
    schema = spec.wire_output_schema  # as tools/list shows it: results come back that way
    if schema is not None:
        out["output_schema"] = schema
    return out


def tool_search_tool(registry: Any) -> Tool:
    """The ``tool_search`` tool over ``registry``."""

    @tool(
        permission="read_only",
        categories=["meta", "search"],
        capabilities=["find_tools"],
        eager=True,
        summary="Searching the tools for {query!r}",
    )
    def tool_search(
        query: str,
        ctx: ToolContext,
        max_results: Annotated[int, Field(ge=1, le=MAX_RESULTS)] = 5,
    ) -> dict[str, Any]:
        """Search the available tools, or load the full schemas of named ones.

        Eager tools (those already listed with their schemas) need no search. Use free text
        ('convert currency') to find tools, ranked best first; use 'select:NAME1,NAME2' to
        get the complete definitions of tools you already know by name. Each hit found by
        text has a score: the search's confidence from 0 to 1 that the tool fits (1 for its
        exact name); the answer's min_score is the least confidence a hit must reach.

        Args:
            query: Free text, or 'select:' followed by comma-separated tool names.
            max_results: Maximum number of tools returned for a free-text query (1 to 50).
        """
        text = query.strip()
        allowed = _allowed(registry, ctx.request)  # what this caller may call at all
        down = _cannot_run(registry, ctx.request)  # an agent: not those that cannot run now
        if text.lower().startswith("select:"):
            names = [n.strip() for n in text[len("select:") :].split(",") if n.strip()]
            if not names:
                raise ValueError("select: needs tool names, like 'select:read,grep'.")
            specs = registry.search_index.select(names)
            found = {s.name.lower() for s in specs}
            missing = [n for n in names if n.lower() not in found]
            out: dict[str, Any] = {
                "tools": [_full(s) for s in specs if s.permission in allowed and s.name not in down]
            }
            refused = {
                s.name: f"needs permission {s.permission!r}, above what this caller is granted"
                for s in specs
                if s.permission not in allowed
            }
            if missing:
                out["not_found"] = missing
                out["suggestions"] = {n: registry.suggest(n) for n in missing}
            if refused:  # it exists, but a call would be refused: the agent should not plan on it
                out["not_allowed"] = refused
            unrunnable = {s.name: down[s.name] for s in specs if s.name in down}
            if unrunnable:
                out["not_available"] = unrunnable
            return out
        if not text:
            raise ValueError("query is empty; give words describing the tool, or 'select:NAME'.")
        narrowed = {"permission": list(allowed)} if len(allowed) < len(PERMISSIONS) else {}
        found = registry.search_results(text, limit=max_results + len(down), **narrowed)
        hits = [h for h in found.hits if h.spec.name not in down][:max_results]
        offered = registry.list(**narrowed) if narrowed else registry.list()
        answer: dict[str, Any] = {
            "query": text,
            "tools": [{**_brief(h.spec), "score": round(h.score, 3)} for h in hits],
            # the tools this caller is offered (not those above its grant, nor, for an
            # agent, those that cannot run now)
            "total_tools": sum(1 for t in offered if t.spec.name not in down),
            "min_score": registry.search_index.threshold,
        }
        if found.respelled:  # misspelt words were read as the catalogue's own
            answer["searched_for"] = found.searched_for
        unserved = list(found.unserved)
        if not hits and not unserved:
            answer["note"] = (
                "No tool fits this request confidently (every hit must reach confidence "
                f"{registry.search_index.threshold:g}); describe the task in other words, "
                "or ask 'select:NAME' for a tool you know."
            )
        if unserved:
            answer["not_installed"] = unserved
            answer["note"] = f"No installed tool works with {', '.join(unserved)}; " + (
                "these tools fit the rest of the request but not that service."
                if hits
                else "the user would need to add a tool or MCP server for it."
            )
        return answer

    return Tool.from_function(tool_search, source="builtin", source_kind="builtin")


def _cannot_run(registry: Any, request: RequestInfo) -> dict[str, str]:
    """For an agent over MCP, the tools that cannot run now (the listing leaves them out),
    each with the reason worded for it; none for the other faces, whose user sees them
    listed with their reason (``%tool list``, ``nexus-tools list``)."""
    if request.caller.face != "mcp":
        return {}
    snapshot = getattr(registry, "snapshot", None)
    entries = getattr(snapshot, "entries", {})
    return {
        name: str(reason_for(e.reason, request.caller) or "it cannot run now")
        for name, e in entries.items()
        if e.status != "ok"
    }


def _allowed(registry: Any, request: RequestInfo) -> tuple[str, ...]:
    """The permissions ``request`` may use under ``registry``'s policy: a tool above them
    is refused on every call, so search does not offer it (every one when the policy does
    not say, a custom one)."""
    granted = getattr(getattr(registry, "policy", None), "granted", None)
    if not callable(granted):
        return PERMISSIONS
    rank = permission_rank(granted(request))
    return tuple(p for p in PERMISSIONS if permission_rank(p) <= rank)
