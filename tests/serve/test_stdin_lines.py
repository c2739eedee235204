"""Stdin's lines under the SDK's real ``stdio_server``: each line is parsed once, by the
SDK's reader; only a line it could not take is looked at again, to word its JSON-RPC error
(the answers themselves are checked against a real ``serve`` process in
``test_mcp_agent_face.py``)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
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
    json.dumps([{"jsonrpc": "2.0", "id": 5, "method": "ping"}]),  # a batch: one SDK item
    json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": "x"}),
    "",  # no message
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
]


class Watched:
    """``lines`` as the SDK's reader iterates them, noting when it has taken one."""

    def __init__(self, lines: StdinLines) -> None:
        self._lines = lines
        self.taken = anyio.Event()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._read()

    async def _read(self) -> AsyncIterator[str]:
        async for line in self._lines:
            self.taken.set()
            yield line


async def serve_lines(
    tmp_path: Path, sent: list[str], before_answering: Callable[[Watched], Awaitable[Any]]
) -> tuple[list[Any], list[dict[str, Any]]]:
    """What the server reads of ``sent`` through :meth:`StdinLines.answering`, and the
    answers written for the lines it does not read; ``before_answering`` runs first."""
    stdin_file, answered = tmp_path / "stdin", tmp_path / "stdout"
    stdin_file.write_text("\n".join(sent) + "\n")
    stdin = os.open(stdin_file, os.O_RDONLY)
    stdout = anyio.wrap_file(answered.open("w", encoding="utf-8"))
    lines = StdinLines(stdin)
    watched = Watched(lines)
    received: list[Any] = []
    try:
        with anyio.fail_after(30):
            async with stdio_server(stdin=watched, stdout=stdout) as (read, write):  # type: ignore[arg-type]
                await before_answering(watched)
                async for item in lines.answering(read, write)[0]:
                    received.append(item)
                await write.aclose()
    finally:
        await stdout.aclose()
        os.close(stdin)
    return received, [json.loads(line) for line in answered.read_text().splitlines()]


async def at_once(watched: Watched) -> None:
    return None


async def test_good_lines_are_parsed_once_and_only_bad_ones_looked_at_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    looked_at: list[str] = []
    word = stdin_lines.malformed

    def spied(line: str) -> Any:
        looked_at.append(line)
        return word(line)

    monkeypatch.setattr(stdin_lines, "malformed", spied)
    received, answers = await serve_lines(tmp_path, LINES, at_once)

    assert all(isinstance(item, SessionMessage) for item in received)
    assert [getattr(i.message, "id", None) for i in received] == [1, 2, None]
    assert received[1].message.params == BIG
    codes = [(a["id"], a["error"]["code"]) for a in answers]
    assert codes == [(None, -32700), (None, -32600), (4, -32600)]
    assert "batches are not part of MCP" in answers[1]["error"]["message"]
    assert [line.strip() for line in looked_at] == [LINES[2], LINES[3], LINES[4]]


async def test_a_line_the_sdk_read_before_answering_began_is_answered(tmp_path: Path) -> None:
    """Finding: a line the SDK's reader took before :meth:`StdinLines.answering` was called
    was not kept, so its item went unanswered and every later item was paired with the
    line after its own."""

    async def first_line_taken(watched: Watched) -> None:
        await watched.taken.wait()

    sent = [LINES[2], LINES[0], LINES[4], LINES[6]]
    received, answers = await serve_lines(tmp_path, sent, first_line_taken)

    assert all(isinstance(item, SessionMessage) for item in received), received
    assert [getattr(i.message, "id", None) for i in received] == [1, None]
    assert [(a["id"], a["error"]["code"]) for a in answers] == [(None, -32700), (4, -32600)]


async def test_the_end_of_input_waits_for_open_requests_only() -> None:
    """Answered, cancelled (never answered: the SDK's rule) and repeated ids; "7" and 7 are
    one id to the SDK."""
    import mcp_types

    from nexus_jupyter.serve.stdin_lines import TrackedWrites

    sent: list[Any] = []

    class Sink:
        async def send(self, item: Any) -> None:
            sent.append(item)

    writes = TrackedWrites(Sink())

    def request(rid: Any) -> SessionMessage:
        return SessionMessage(mcp_types.JSONRPCRequest(jsonrpc="2.0", id=rid, method="ping"))

    def answer(rid: Any) -> SessionMessage:
        return SessionMessage(mcp_types.JSONRPCResponse(jsonrpc="2.0", id=rid, result={}))

    cancel = mcp_types.JSONRPCNotification(
        jsonrpc="2.0", method="notifications/cancelled", params={"requestId": 2}
    )
    for rid in (1, 2, 3, 3):
        writes.asked(request(rid))
    writes.asked(SessionMessage(cancel))  # 2 is settled without an answer
    await writes.send(answer(1))
    await writes.send(answer(3))  # one of the two 3s
    with anyio.fail_after(5):
        began = anyio.current_time()
        await writes.all_answered(0.3)  # 3 is still open once: it waits it out
        assert anyio.current_time() - began >= 0.25
        await writes.send(answer("3"))
        began = anyio.current_time()
        await writes.all_answered(3.0)  # nothing open: at once
        assert anyio.current_time() - began < 0.1
    assert len(sent) == 3
