"""MCP over plain HTTP POSTs at 2026-07-28, with no SDK in between, for tests and benchmarks
that look at the wire itself (used by tests/serve/test_mcp_tasks.py and
benchmarks/mcp_tasks.py)::

    post = RawMcp(url, extensions=["io.modelcontextprotocol/tasks"])
    created = post("tools/call", {"name": "slow", "arguments": {}})
    error = post("tasks/get", {"taskId": "nope"}, error=True)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx2

SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"


class RawMcp:
    """Posts one JSON-RPC request per call, with the per-request ``_meta`` and headers
    2026-07-28 asks for; returns the ``result`` (without the server-info stamp), or with
    ``error=True`` the ``error``."""

    def __init__(self, url: str, *, extensions: Sequence[str] = ()) -> None:
        self.url = url
        self.http = httpx2.Client(timeout=10)
        self.capabilities = {"extensions": {e: {} for e in extensions}} if extensions else {}
        self.ids = 0

    def __call__(self, method: str, params: dict[str, Any], *, error: bool = False) -> Any:
        self.ids += 1
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        }
        headers = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": method,
        }
        name = params.get("name") or params.get("taskId")
        if name:
            headers["Mcp-Name"] = str(name)
        body = {
            "jsonrpc": "2.0",
            "id": self.ids,
            "method": method,
            "params": {**params, "_meta": meta},
        }
        text = self.http.post(self.url, json=body, headers=headers).text
        if not text.startswith("{"):  # an SSE answer: its last data line
            text = [ln for ln in text.splitlines() if ln.startswith("data:")][-1][5:]
        message = json.loads(text)
        if error:
            assert "error" in message, message
            return message["error"]
        assert "result" in message, message
        result = dict(message["result"])
        meta_out = result.get("_meta")
        if isinstance(meta_out, dict):
            meta_out.pop(SERVER_INFO_KEY, None)
            if not meta_out:
                del result["_meta"]
        return result

    def close(self) -> None:
        self.http.close()
