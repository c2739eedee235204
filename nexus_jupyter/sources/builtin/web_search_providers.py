"""The search providers ``web_search`` speaks: Brave, Tavily and SearXNG.

Configured in nex.yaml::

    toolsets:
      web:
        options:
          search: {provider: brave}                       # key: credential brave/api_key
          # search: {provider: tavily, credential: tavily/api_key}
          # search: {provider: searxng, url: "https://searx.example.org"}

``url`` overrides a provider's endpoint (a self-hosted SearXNG must give one). The API key
comes from the credential store (``nexus-tools credentials set brave api_key``), never from
nex.yaml itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ...core.errors import ConfigError

__all__ = ["PROVIDERS", "SearchConfig", "search"]

PROVIDERS = ("brave", "tavily", "searxng")
_ENDPOINTS = {
    "brave": "https://api.search.brave.com/res/v1/web/search",
    "tavily": "https://api.tavily.com/search",
}


@dataclass(frozen=True, slots=True)
class SearchConfig:
    provider: str
    url: str
    credential: tuple[str, str] | None  # (service, key), None for providers without a key

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> SearchConfig:
        raw = options.get("search")
        if not raw or not raw.get("provider"):
            raise ConfigError(
                "web_search has no search provider configured. Set one in nex.yaml, e.g. "
                "toolsets: {web: {options: {search: {provider: brave}}}} (brave, tavily or "
                "searxng with a url), and store its key: `nexus-tools credentials set brave "
                "api_key` (or the environment variable NEXUS_CRED_BRAVE_API_KEY)."
            )
        provider = str(raw["provider"]).lower()
        if provider not in PROVIDERS:
            raise ConfigError(
                f"Unknown web_search provider {provider!r}; use one of {', '.join(PROVIDERS)}."
            )
        url = raw.get("url") or _ENDPOINTS.get(provider)
        if not url:
            raise ConfigError(
                "web_search provider searxng needs the instance's url in nex.yaml: "
                "search: {provider: searxng, url: https://searx.example.org}."
            )
        credential = None
        if provider != "searxng" or raw.get("credential"):
            service, _, key = str(raw.get("credential") or f"{provider}/api_key").partition("/")
            credential = (service, key or "api_key")
        return cls(provider, str(url).rstrip("/"), credential)


async def search(
    config: SearchConfig,
    query: str,
    limit: int,
    secret: Callable[[str, str], Awaitable[str]],
    timeout: float = 20.0,
) -> list[dict[str, str]]:
    """Up to ``limit`` results ``{title, url, snippet}`` for ``query``."""
    import httpx

    key = await secret(*config.credential) if config.credential else None
    async with httpx.AsyncClient(timeout=timeout) as client:
        if config.provider == "brave":
            response = await client.get(
                config.url,
                params={"q": query, "count": limit},
                headers={"X-Subscription-Token": key or "", "Accept": "application/json"},
            )
            items = _ok(response).get("web", {}).get("results", [])
            return [_hit(i, "description") for i in items][:limit]
        if config.provider == "tavily":
            response = await client.post(
                config.url,
                json={"query": query, "max_results": limit},
                headers={"Authorization": f"Bearer {key}"},
            )
            return [_hit(i, "content") for i in _ok(response).get("results", [])][:limit]
        url = config.url if config.url.endswith("/search") else config.url + "/search"
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        response = await client.get(url, params={"q": query, "format": "json"}, headers=headers)
        return [_hit(i, "content") for i in _ok(response).get("results", [])][:limit]


def _ok(response: Any) -> dict[str, Any]:
    if response.status_code >= 400:
        raise ConnectionError(
            f"The search provider answered HTTP {response.status_code}: {response.text[:200]!r}."
        )
    data: dict[str, Any] = response.json()
    return data


def _hit(item: dict[str, Any], snippet_key: str) -> dict[str, str]:
    return {
        "title": str(item.get("title", "")),
        "url": str(item.get("url", "")),
        "snippet": str(item.get(snippet_key, "") or ""),
    }
