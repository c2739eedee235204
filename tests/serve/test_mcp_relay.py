"""Upstream questions during concurrent calls reach the client whose call asked: a real
upstream MCP server process (``tests/mcp_peers/asking_server.py``, or server-everything)
aggregated by nexus, real SDK clients calling through nexus at the same time."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from waiting import wait_until

from nexus_jupyter import Registry
from nexus_jupyter.serve.mcp_server import McpServerHandle
from nexus_jupyter.sources.mcp import McpSource

PEERS = Path(__file__).resolve().parents[1] / "mcp_peers"
ASKING = PEERS / "asking_server.py"
EVERYTHING = PEERS / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE22 = PEERS.parent / "conformance/node_modules/.bin/node"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_upstream(request: pytest.FixtureRequest) -> Iterator[str]:
    """``asking_server.py http PORT [--legacy]`` as a real process; its URL."""
    port = _free_port()
    extra = ["--legacy"] if request.param == "legacy" else []
    process = subprocess.Popen(
        [sys.executable, str(ASKING), "http", str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:  # a process's port, not a registry event: poll it, bounded
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, "no upstream"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def _serving(source: McpSource, tool: str) -> AsyncIterator[tuple[str, McpSource]]:
    reg = Registry()
    reg.add_source(source)
    handle = McpServerHandle.start(reg, port=0)
    try:
        await asyncio.to_thread(wait_until, reg, lambda: reg.find(tool) is not None)
        yield handle.url, source
    finally:
        handle.stop()
        reg.close()


class User:
    """One client's user: answers every question with their own name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.asked: list[str] = []
        self.logs: list[str] = []

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": self.name})

    async def log(self, params: Any) -> None:
        self.logs.append(str(params.data))


async def _call_as(url: str, user: User, tag: str, delay: float) -> str:
    async with mcp.Client(
        url,
        mode="legacy",
        elicitation_callback=user.elicit,
        logging_callback=user.log,
        log_level="info",
    ) as client:
        result = await client.call_tool("mcp__asking__ask", {"tag": tag, "delay": delay})
        assert not result.is_error, result
        return "".join(getattr(b, "text", "") for b in result.content)


async def _two_calls_at_once(url: str, source: McpSource) -> tuple[User, User, str, str]:
    """alice's call asks after 2 s; bob's starts once hers is in flight and asks after 3 s,
    so her question comes while his (later) call is in flight too."""
    alice, bob = User("alice"), User("bob")
    first = asyncio.create_task(_call_as(url, alice, "A", 2.0))
    deadline = time.monotonic() + 30
    while source.relay.calls_in_flight == 0:  # a counter, not an event: poll it, bounded
        assert time.monotonic() < deadline and not first.done(), "alice's call never started"
        await asyncio.sleep(0.02)
    second = await _call_as(url, bob, "B", 3.0)
    return alice, bob, await first, second


@pytest.mark.parametrize("http_upstream", ["legacy", "modern"], indirect=True)
async def test_each_question_reaches_the_client_whose_call_asked(http_upstream: str) -> None:
    """2025-11-25 over HTTP (questions on each call's response stream) and 2026-07-28
    (input-required results): with two calls in flight, each question and log message goes
    to its own caller, and each answer back to its own call."""
    async for url, source in _serving(McpSource("asking", url=http_upstream), "mcp__asking__ask"):
        alice, bob, first, second = await _two_calls_at_once(url, source)
        assert (first, second) == ("A:alice", "B:bob")
        assert alice.asked == ["question for A"] and bob.asked == ["question for B"]
        if source.protocol_version == "2025-11-25":  # logs during the call, on its stream
            assert "log for A" in alice.logs and "log for B" not in alice.logs
            assert "log for B" in bob.logs and "log for A" not in bob.logs


async def test_a_stdio_server_of_2026_is_asked_per_call_too() -> None:
    source = McpSource("asking", command=sys.executable, args=[str(ASKING), "stdio"])
    async for url, served in _serving(source, "mcp__asking__ask"):
        assert served.protocol_version == "2026-07-28"
        alice, bob, first, second = await _two_calls_at_once(url, served)
        assert (first, second) == ("A:alice", "B:bob")
        assert alice.asked == ["question for A"] and bob.asked == ["question for B"]


@pytest.mark.skipif(not EVERYTHING.exists(), reason="run `make npm-deps` (tests/mcp_peers)")
async def test_an_untraceable_question_during_concurrent_calls_is_refused() -> None:
    """A 2025-11-25 server over stdio (server-everything) cannot say which call asks: with
    another call in flight nexus refuses the question instead of asking the wrong user."""
    node = str(NODE22) if NODE22.exists() else "node"
    source = McpSource("everything", command=node, args=[str(EVERYTHING), "stdio"])
    tool = "mcp__everything__trigger-elicitation-request"
    async for url, served in _serving(source, tool):
        assert served.protocol_version == "2025-11-25"
        carol, dave = User("carol"), User("dave")
        async with (
            mcp.Client(url, mode="legacy", elicitation_callback=carol.elicit) as busy,
            mcp.Client(url, mode="legacy", elicitation_callback=dave.elicit) as asking,
        ):
            started = asyncio.Event()

            async def progress(done: float, total: float | None, message: str | None) -> None:
                started.set()

            long_call = asyncio.create_task(
                busy.call_tool(
                    "mcp__everything__trigger-long-running-operation",
                    {"duration": 3, "steps": 3},
                    progress_callback=progress,
                )
            )
            await asyncio.wait_for(started.wait(), 30)  # carol's call is in flight
            refused = await asking.call_tool(tool, {})
            text = "".join(getattr(b, "text", "") for b in refused.content)
            assert "calls to it were in flight" in text, text
            assert carol.asked == [] and dave.asked == []
            assert not (await long_call).is_error
        # on its own, the same question is asked
        async with mcp.Client(url, mode="legacy", elicitation_callback=dave.elicit) as alone:
            answered = await alone.call_tool(tool, {})
            assert not answered.is_error and len(dave.asked) == 1
