"""The load test of the hardening review: for 20 s a real ``nexus-tools serve`` (tool files in
worker processes) gets hostile calls in turn (one that hangs and is cancelled, one that
loops until its timeout, one that ends its process) while a second client calls ordinary
tools without pause. Every ordinary call must answer; the p99 latency, the server's thread
count and its RSS are printed, and neither threads nor memory may keep growing.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import pytest
from serving import call_text, mcp_client, serve_http

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(180)]

DURATION_S = 20.0
HOSTILE = '''import os
import time

from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
def hang() -> int:
    """Never returns."""
    time.sleep(3600)
    return 0


@tool(timeout=0.5)
def spin() -> int:
    """Loops until its timeout."""
    while True:
        pass


@tool
def die() -> int:
    """Ends its process."""
    os._exit(9)
'''


def threads_and_rss(pid: int) -> tuple[int, int]:
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0])


async def hostile_turns(client: object, stop: float) -> int:
    turns = 0
    while time.monotonic() < stop:
        hang = asyncio.ensure_future(client.call_tool("hang", {}))  # type: ignore[attr-defined]
        await asyncio.sleep(0.3)
        hang.cancel()
        await asyncio.gather(hang, return_exceptions=True)
        for name in ("spin", "die"):
            is_error, _ = await call_text(client, name, {})  # type: ignore[arg-type]
            assert is_error
        turns += 1
    return turns


async def test_other_calls_keep_answering_while_hostile_tools_run(tmp_path: Path) -> None:
    folder = tmp_path / "tools" / "dynamic"
    folder.mkdir(parents=True)
    (tmp_path / "nex.yaml").write_text("isolation: process\nsearch: {mode: keyword}\n")
    (folder / "hostile.py").write_text(HOSTILE)
    (tmp_path / "notes.txt").write_text("hello\n")
    with serve_http(tmp_path) as server:
        pid = server.proc.pid
        async with mcp_client(server.url) as attacker, mcp_client(server.url) as user:
            await call_text(user, "add", {"a": 1, "b": 1})  # warm up both paths
            await call_text(user, "read", {"path": "notes.txt"})
            start_threads, start_rss = threads_and_rss(pid)
            stop = time.monotonic() + DURATION_S
            hostile = asyncio.ensure_future(hostile_turns(attacker, stop))
            latencies, failures = [], []
            mid: tuple[int, int] | None = None
            while time.monotonic() < stop:
                for name, arguments in (("add", {"a": 2, "b": 3}), ("read", {"path": "notes.txt"})):
                    started = time.perf_counter()
                    is_error, text = await asyncio.wait_for(call_text(user, name, arguments), 10)
                    latencies.append(time.perf_counter() - started)
                    if is_error:
                        failures.append(f"{name}: {text}")
                if mid is None and time.monotonic() > stop - DURATION_S / 2:
                    mid = threads_and_rss(pid)
            turns = await hostile
            end_threads, end_rss = threads_and_rss(pid)
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
    assert mid is not None
    print(
        f"\nload {DURATION_S:g} s: {len(latencies)} ordinary calls, failed {len(failures)}, "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms; {turns} hostile turns (hang+cancel, loop, exit); "
        f"threads {start_threads} -> {mid[0]} -> {end_threads}; "
        f"RSS {start_rss // 1024} -> {mid[1] // 1024} -> {end_rss // 1024} MB"
    )
    assert failures == [], failures[:3]
    assert end_threads <= mid[0] + 4, "threads keep growing"
    assert end_rss < start_rss * 1.5, "memory keeps growing"
