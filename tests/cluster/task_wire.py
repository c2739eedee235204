"""The tasks extension's wire as a client without the SDK's help sees it (2026-07-28): one
JSON-RPC request per HTTP POST, so each can go to a different replica."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from nexus_jupyter.sources.mcp_tasks import TASKS_EXTENSION

_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}},
}


async def post(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The ``result`` of one request to ``url`` (fails on a JSON-RPC error)."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    name = params.get("name") or params.get("taskId")
    if name:
        headers["Mcp-Name"] = name
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": _META}}
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=body, headers=headers)
    text = response.text
    if text.startswith(("event:", "data:", ":")):  # an SSE answer: its last data line
        text = [line for line in text.splitlines() if line.startswith("data:")][-1][5:]
    message = json.loads(text)
    assert "result" in message, message
    return dict(message["result"])
