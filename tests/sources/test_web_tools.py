"""web_fetch and web_search against local HTTP servers started here (127.0.0.1 only)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import ToolUnavailable

PAGE = b"""<html><head><title>Demo</title><script>var secret = 1;</script></head>
<body><h1>Tool catalog</h1><p>Register a <b>tool</b> from a <a href="/cell">cell</a>.</p>
<ul><li>search</li><li>serve</li></ul></body></html>"""


class Handler(BaseHTTPRequestHandler):
    seen: list[dict[str, Any]] = []

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, kind: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Handler.seen.append({"path": self.path, "body": body, "headers": dict(self.headers)})
        if self.path == "/tavily/search":  # Tavily's API
            results = [{"title": "tavily hit", "url": "https://t.org", "content": "tc"}]
            self._send(200, json.dumps({"results": results}).encode(), "application/json")
        else:
            self._send(404, b"no", "text/plain")

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        Handler.seen.append({"path": url.path, "query": query, "headers": dict(self.headers)})
        if url.path == "/page":
            self._send(200, PAGE, "text/html; charset=utf-8")
        elif url.path == "/loop":
            self._send(302, b"", "text/plain", Location="/loop")
        elif url.path == "/moved":
            self._send(301, b"", "text/plain", Location="/page")
        elif url.path == "/big":
            self._send(200, b"x" * 50_000, "text/plain")
        elif url.path == "/logo.png":
            self._send(200, b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "image/png")
        elif url.path == "/drip":  # every read comes within a second; the whole takes 6 s
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "30")
            self.end_headers()
            for _ in range(30):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.2)
        elif url.path == "/res/v1/web/search":  # Brave's API
            results = [
                {"title": f"{query['q'][0]} {i}", "url": f"https://e.org/{i}", "description": "d"}
                for i in range(int(query["count"][0]))
            ]
            self._send(200, json.dumps({"web": {"results": results}}).encode(), "application/json")
        elif url.path == "/search":  # SearXNG's API
            results = [{"title": "searx hit", "url": "https://s.org", "content": "c"}]
            self._send(200, json.dumps({"results": results}).encode(), "application/json")
        else:
            self._send(404, b"no", "text/plain")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def registry(tmp_path: Path, options: dict[str, Any]) -> Registry:
    return Registry.default(
        root=tmp_path,
        config={"toolsets": {"web": {"options": options}}, "audit": False},
        watch=False,
        mcp=False,
        search="keyword",
    )


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Registry]:
    reg = registry(tmp_path, {"allow_private": True, "max_bytes": 10_000, "max_redirects": 3})
    yield reg
    reg.close()


def test_html_page_becomes_markdown(web: Registry, server: str) -> None:
    result = web.call_sync("web_fetch", {"url": f"{server}/page", "prompt": "what is it"})
    assert result.ok, result.error
    page = result.value
    assert "# Tool catalog" in page["markdown"]
    assert "a **tool** from a [cell](/cell)." in page["markdown"]
    assert "* search" in page["markdown"] or "- search" in page["markdown"]
    assert "secret" not in page["markdown"]  # scripts are dropped
    assert page["status"] == 200 and page["prompt"] == "what is it"
    assert result.summary == f"Fetching {server}/page"


def test_redirects_are_followed_and_a_loop_is_capped(web: Registry, server: str) -> None:
    moved = web.call_sync("web_fetch", {"url": f"{server}/moved"})
    assert moved.value["redirects"] == 1 and "Tool catalog" in moved.value["markdown"]
    looped = web.call_sync("web_fetch", {"url": f"{server}/loop"})
    assert looped.is_error and "Stopped after 3 redirects" in (looped.error or "")


def test_oversize_body_is_cut(web: Registry, server: str) -> None:
    big = web.call_sync("web_fetch", {"url": f"{server}/big"}).value
    assert big["truncated"] is True and len(big["markdown"]) == 10_000


def test_loopback_is_refused_unless_allowed(tmp_path: Path, server: str) -> None:
    reg = registry(tmp_path, {})
    try:
        for url in (f"{server}/page", "http://localhost:9/", "http://[::1]:9/", "http://10.0.0.1/"):
            result = reg.call_sync("web_fetch", {"url": url})
            assert result.error_type == "AddressRefused", (url, result.error)
            assert "allow_private: true" in (result.error or "")
        bad = reg.call_sync("web_fetch", {"url": "file:///etc/passwd"})
        assert bad.is_error and "http(s) URL" in (bad.error or "")
    finally:
        reg.close()


def test_web_search_speaks_brave_with_the_stored_key(
    tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXUS_CRED_BRAVE_API_KEY", "brave-secret-123")
    search = {"provider": "brave", "url": f"{server}/res/v1/web/search"}
    reg = registry(tmp_path, {"search": search})
    try:
        result = reg.call_sync("web_search", {"query": "mcp tools", "limit": 3})
        assert result.ok, result.error
        assert [h["title"] for h in result.value] == ["mcp tools 0", "mcp tools 1", "mcp tools 2"]
        assert Handler.seen[-1]["headers"]["X-Subscription-Token"] == "brave-secret-123"
        assert result.summary == "Searching the web for 'mcp tools'"
    finally:
        reg.close()


def test_a_slow_body_is_cut_off_at_the_time_limit(tmp_path: Path, server: str) -> None:
    reg = registry(tmp_path, {"allow_private": True, "timeout": 1})
    try:
        result = reg.call_sync("web_fetch", {"url": f"{server}/drip"})
        assert result.error_type == "TimeoutError", result.value  # not 6 s later, complete
        assert "after 1 s (the whole fetch" in (result.error or "")
    finally:
        reg.close()


def test_a_binary_body_is_named_not_shown(web: Registry, server: str) -> None:
    page = web.call_sync("web_fetch", {"url": f"{server}/logo.png"}).value
    assert page["markdown"] == (
        "(not shown: the body is image/png, 1032 bytes; web_fetch returns HTML as markdown "
        "and text as it is)"
    )


def test_web_search_speaks_tavily_with_the_stored_key(
    tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXUS_CRED_TAVILY_API_KEY", "tvly-secret-456")
    reg = registry(tmp_path, {"search": {"provider": "tavily", "url": f"{server}/tavily/search"}})
    try:
        result = reg.call_sync("web_search", {"query": "mcp", "limit": 2})
        assert result.value == [{"title": "tavily hit", "url": "https://t.org", "snippet": "tc"}]
        assert Handler.seen[-1]["body"] == {"query": "mcp", "max_results": 2}
        assert Handler.seen[-1]["headers"]["Authorization"] == "Bearer tvly-secret-456"
    finally:
        reg.close()


def test_web_search_speaks_searxng(tmp_path: Path, server: str) -> None:
    reg = registry(tmp_path, {"search": {"provider": "searxng", "url": server}})
    try:
        result = reg.call_sync("web_search", {"query": "q"})
        assert result.value == [{"title": "searx hit", "url": "https://s.org", "snippet": "c"}]
        assert Handler.seen[-1]["query"]["format"] == ["json"]
    finally:
        reg.close()


def test_web_search_without_provider_is_unavailable_and_says_how_to_configure(
    tmp_path: Path,
) -> None:
    reg = registry(tmp_path, {})
    try:
        entry = reg.entry("web_search")
        assert entry.status == "unavailable"
        assert "web_search has no search provider configured" in (entry.reason or "")
        assert "{search: {provider: brave}}" in (entry.reason or "")
        assert "NEXUS_CRED_BRAVE_API_KEY" in (entry.reason or "")
        assert "web_search" not in [t.spec.name for t in reg.list(available=True)]
        assert reg.entry("web_fetch").status == "ok"
        with pytest.raises(ToolUnavailable, match="Tool 'web_search' cannot run now: web_search"):
            reg.call_sync("web_search", {"query": "q"})
    finally:
        reg.close()


def test_web_search_with_a_provider_needs_its_key(
    tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    search = {"provider": "brave", "url": f"{server}/res/v1/web/search"}
    reg = Registry.default(
        root=tmp_path,
        config={"toolsets": {"web": {"prefix": "net_", "options": {"search": search}}}},
        watch=False,
        mcp=False,
        search="keyword",
    )
    try:
        entry = reg.entry("net_web_search")
        assert entry.status == "unavailable"
        assert (entry.reason or "").startswith("missing credential 'brave/api_key'; set it with")
        monkeypatch.setenv("NEXUS_CRED_BRAVE_API_KEY", "brave-secret-123")
        assert reg.entry("net_web_search").status == "ok"  # live: no reload needed
    finally:
        reg.close()


async def test_the_connection_itself_is_guarded_against_rebinding(server: str) -> None:
    """The check before a request is repeated where the socket is opened: a name that
    resolved to a public address for the check still cannot connect to a private one."""
    import httpx

    from nexus_jupyter.core.errors import AddressRefused
    from nexus_jupyter.sources.builtin.web_fetching import FetchLimits, _transport

    port = server.rsplit(":", 1)[1]
    async with httpx.AsyncClient(transport=_transport(FetchLimits())) as client:
        for host in ("127.0.0.1", "localhost"):
            with pytest.raises(AddressRefused, match="private or loopback"):
                await client.get(f"http://{host}:{port}/page")
    async with httpx.AsyncClient(transport=_transport(FetchLimits(allow_private=True))) as client:
        assert (await client.get(f"{server}/page")).status_code == 200
