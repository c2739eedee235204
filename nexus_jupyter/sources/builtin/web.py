"""The ``web`` toolset: ``web_fetch`` and ``web_search`` (read-only, they reach the internet).

Both read ``toolsets.web.options`` of nex.yaml: the fetch limits and ``allow_private`` (see
:mod:`.web_fetching`) and the search provider (see :mod:`.web_search_providers`).
``web_search`` is unavailable (:func:`web_unavailable`, with the reason) while no provider
is configured, and needs the provider's key (``requires_credentials``), so the registry lists
it as unavailable, saying how to set the key, until the key is there.
"""

from __future__ import annotations

from typing import Any

from ...core.errors import ConfigError
from ...core.registry.reasons import Reason
from ...core.tools.context import ToolContext
from ...core.tools.decorator import tool
from ...core.tools.tool import Tool
from .web_fetching import FetchLimits, fetch, to_markdown
from .web_search_providers import SearchConfig, search

__all__ = ["web_tools", "web_unavailable"]

MAX_RESULTS = 20


def web_tools(options: dict[str, Any]) -> list[Tool]:
    """``web_fetch`` and ``web_search`` configured by ``options``."""
    limits = FetchLimits.from_options(options)
    key = _search_key(options)

    @tool(
        permission="read_only",
        categories=["web"],
        capabilities=["internet", "fetch_url"],
        summary="Fetching {url}",
    )
    async def web_fetch(url: str, prompt: str = "") -> dict[str, Any]:
        """Fetch a web page and return it as readable markdown.

        Args:
            url: The http(s) URL to fetch. Private and loopback addresses are refused.
            prompt: What you are looking for on the page; returned with the page so the
                answer can focus on it.
        """
        page = await fetch(url, limits)
        out: dict[str, Any] = {
            "url": page.url,
            "status": page.status,
            "content_type": page.content_type,
            "markdown": to_markdown(page),
            "truncated": page.truncated,
            "redirects": page.redirects,
        }
        if prompt:
            out["prompt"] = prompt
        return out

    @tool(
        permission="read_only",
        categories=["web"],
        capabilities=["internet", "web_search"],
        summary="Searching the web for {query!r}",
        requires_credentials=[key] if key else None,
    )
    async def web_search(query: str, limit: int = 5, *, ctx: ToolContext) -> list[dict[str, str]]:
        """Search the web through the configured provider (Brave, Tavily or SearXNG).

        Args:
            query: What to search for.
            limit: How many results to return (1 to 20).
        """
        if not 1 <= limit <= MAX_RESULTS:
            raise ValueError(f"limit must be between 1 and {MAX_RESULTS}, got {limit!r}.")
        config = SearchConfig.from_options(options)
        return await search(config, query, limit, ctx.credentials.get, limits.timeout)

    return [
        Tool.from_function(fn, source="builtin", source_kind="builtin")
        for fn in (web_fetch, web_search)
    ]


def web_unavailable(options: dict[str, Any]) -> dict[str, str]:
    """The web tools that cannot run with ``options``, each with why and how to fix it:
    ``web_search`` without a (valid) search provider. The fix names nex.yaml for the person
    running nexus; an agent is told to ask them (:class:`~nexus_jupyter.core.registry.
    reasons.Reason`): it cannot edit nex.yaml or store a key."""
    try:
        SearchConfig.from_options(options)
    except ConfigError as exc:
        # a reason: the face ends the sentence
        return {"web_search": Reason(str(exc).rstrip("."), agent=_ask_the_user(options))}
    return {}


def _ask_the_user(options: dict[str, Any]) -> str:
    """Why ``web_search`` cannot run, for an agent: who can fix it, and what they must do."""
    search = options.get("search")
    provider = search.get("provider") if isinstance(search, dict) else None
    if provider:
        what = f"its search provider ({provider!r}) is not set up correctly on this server"
        todo = "fix the web search settings (toolsets.web.options.search) of nexus"
    else:
        what = "no search provider is configured on this server"
        todo = (
            "configure a search provider for web_search (brave, tavily or searxng) and "
            "store its API key (for brave, the credential brave/api_key)"
        )
    return f"{what}, and only the person running the server can change that: ask the user to {todo}"


def _search_key(options: dict[str, Any]) -> str | None:
    """``service/key`` of the configured provider's API key (``None``: no provider, or one
    without a key)."""
    try:
        credential = SearchConfig.from_options(options).credential
    except ConfigError:
        return None
    return f"{credential[0]}/{credential[1]}" if credential else None
