"""Stdin's lines under the SDK's real ``stdio_server``: each line is parsed once, by the
SDK's reader; only a line it could not take is looked at again, to word its JSON-RPC error
(the answers themselves are checked against a real ``serve`` process in
``test_mcp_agent_face.py``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from nexus_jupyter.serve import stdin_lines
from nexus_jupyter.serve.stdin_lines import StdinLines

BIG = {"text": "x" * 200_000, "items": list(range(5_000))}
LINES = [
    json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
    json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": BIG}),
    '{"jsonrpc": "2.0", "id": 3, "method": "tools/list"',  # cut short: not JSON
    json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": "x"}),
    "",  # no message
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
]


async def test_good_lines_are_parsed_once_and_only_bad_ones_looked_at_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    looked_at: list[str] = []
    word = stdin_lines.malformed

    def spied(line: str) -> Any:
        looked_at.append(line)
        return word(line)

    monkeypatch.setattr(stdin_lines, "malformed", spied)
    sent, answered = tmp_path / "stdin", tmp_path / "stdout"
    sent.write_text("\n".join(LINES) + "\n")
    stdin = os.open(sent, os.O_RDONLY)
    stdout = anyio.wrap_file(answered.open("w", encoding="utf-8"))
    lines = StdinLines(stdin)
    received: list[Any] = []
    try:
        with anyio.fail_after(30):
            async with stdio_server(stdin=lines, stdout=stdout) as (read, write):  # type: ignore[arg-type]
                async for item in lines.answering(read, write):
                    received.append(item)
                await write.aclose()
    finally:
        await stdout.aclose()
        os.close(stdin)
    answers = [json.loads(line) for line in answered.read_text().splitlines()]

    assert all(isinstance(item, SessionMessage) for item in received)
    assert [getattr(i.message, "id", None) for i in received] == [1, 2, None]
    assert received[1].message.params == BIG
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32700), (4, -32600)]
    assert [line.strip() for line in looked_at] == [LINES[2], LINES[3]]
