"""What each protocol revision is sent: ``nexus-tools serve`` answering raw JSON-RPC sessions
that negotiated 2024-11-05, 2025-06-18 and 2025-11-25 (no SDK client in between, so what
the server sent is what the test sees)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from serving import serve_tool_file  # tests/ is on sys.path (rootdir conftest)

TOOLS = '''
from nexus_jupyter import tool


@tool
def count(n: int) -> int:
    """Count."""
    return n


@tool(task=True)
def slow(n: int) -> dict:
    """A long one."""
    return {"n": n}
'''


class LegacySession:
    """One handshake-era session over streamable HTTP, by hand."""

    def __init__(self, url: str, version: str) -> None:
        self.url, self.version = url, version
        self.http = httpx2.Client(timeout=15)
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }
        self.ids = 0
        self.initialized = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        self.headers["MCP-Protocol-Version"] = version
        self.http.post(
            url,
            headers=self.headers,
            content=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        body = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}
        answer = self.http.post(self.url, headers=self.headers, content=json.dumps(body))
        session = answer.headers.get("mcp-session-id")
        if session:
            self.headers["Mcp-Session-Id"] = session
        text = answer.text
        if answer.headers.get("content-type", "").startswith("text/event-stream"):
            datas = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
            messages = [json.loads(d) for d in datas if d]
            message = next(m for m in messages if m.get("id") == self.ids)
        else:
            message = json.loads(text)
        assert "result" in message, message
        return dict(message["result"])


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_tool_file(tmp_path_factory.mktemp("versions"), "versions.py", TOOLS) as url:
        yield url


@pytest.mark.parametrize(
    ("version", "structured", "tasks"),
    [("2024-11-05", False, False), ("2025-06-18", True, False), ("2025-11-25", True, True)],
)
def test_each_revision_gets_only_its_own_fields(
    url: str, version: str, structured: bool, tasks: bool
) -> None:
    session = LegacySession(url, version)
    assert session.initialized["protocolVersion"] == version
    assert ("tasks" in session.initialized["capabilities"]) is tasks
    listed = {t["name"]: t for t in session.request("tools/list", {})["tools"]}
    assert ("outputSchema" in listed["count"]) is structured
    assert ("execution" in listed["slow"]) is tasks
    assert "execution" not in listed["count"]  # a tool that runs no task never had it
    called = session.request("tools/call", {"name": "count", "arguments": {"n": 3}})
    assert called["content"][0]["text"] == "3"
    assert ("structuredContent" in called) is structured
    if structured:
        assert called["structuredContent"] == {"result": 3}
