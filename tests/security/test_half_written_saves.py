"""Finding: a tool file saved in two chunks 80 ms apart published its first half (calls
failed with "No tool named 'r2'"), and 115 half-written versions entered the unbounded
history.

Against a real ``nexus-tools serve``, a client calls ``r2`` without pause while the file is
saved again and again: by writers that keep the file open between two chunks 80 ms and
300 ms apart, by writers that close it between chunks cut mid-definition or between two
halves that are each valid Python, and by atomic renames. No call may fail and no half-written version may be published or kept.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest
from serving import call_text, mcp_client, serve_http

pytestmark = pytest.mark.e2e

R1 = '''from nexus_jupyter import tool


@tool
def r1() -> int:
    """First tool of the file."""
    return {v}

'''
R2 = '''
@tool
def r2() -> int:
    """Second tool of the file."""
    return {v}
'''
SAVES_PER_WRITER = 4


def version(v: int) -> str:
    return R1.format(v=v) + R2.format(v=v)


def save_open_between_chunks(path: Path, v: int, gap_s: float) -> None:
    """The first chunk alone is a complete module that defines only r1."""
    with open(path, "w") as handle:
        handle.write(R1.format(v=v))
        handle.flush()
        time.sleep(gap_s)
        handle.write(R2.format(v=v))


def save_closed_between_chunks(path: Path, v: int, gap_s: float) -> None:
    """Closed between chunks, cut inside r2's definition (the first chunk does not parse)."""
    text = version(v)
    cut = text.index("def r2") + len("def r2(")
    path.write_text(text[:cut])
    time.sleep(gap_s)
    with open(path, "a") as handle:
        handle.write(text[cut:])


def save_closed_between_whole_halves(path: Path, v: int, gap_s: float) -> None:
    """Closed between chunks that are each whole lines of valid Python: the first alone is
    a module that defines only r1 (so it parses, and ends with a newline)."""
    path.write_text(R1.format(v=v))
    time.sleep(gap_s)
    with open(path, "a") as handle:
        handle.write(R2.format(v=v))


def save_atomically(path: Path, v: int) -> None:
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(version(v))
    os.replace(temp, path)


def write_all(path: Path, done: threading.Event) -> int:
    v = 0
    try:
        for gap in (0.08, 0.3):
            for _ in range(SAVES_PER_WRITER):
                v += 1
                save_open_between_chunks(path, v, gap)
                time.sleep(0.15)
        for gap in (0.08, 0.3):
            for _ in range(SAVES_PER_WRITER):
                v += 1
                save_closed_between_chunks(path, v, gap)
                time.sleep(0.15)
        for gap in (0.08, 0.3):
            for _ in range(SAVES_PER_WRITER):
                v += 1
                save_closed_between_whole_halves(path, v, gap)
                time.sleep(0.15)
        for _ in range(SAVES_PER_WRITER):
            v += 1
            save_atomically(path, v)
            time.sleep(0.15)
    finally:
        done.set()
    return v


async def test_only_whole_saves_are_published_and_kept(tmp_path: Path) -> None:
    folder = tmp_path / "tools" / "dynamic"
    folder.mkdir(parents=True)
    path = folder / "pair.py"
    path.write_text(version(0))
    home = tmp_path / "home"
    with serve_http(tmp_path, env={"NEXUS_HOME": str(home)}) as server:
        async with mcp_client(server.url) as client:
            is_error, text = await call_text(client, "r2", {})
            assert not is_error and text == "0"
            done = threading.Event()
            writer = asyncio.ensure_future(asyncio.to_thread(write_all, path, done))
            calls, failures, seen = 0, [], set()
            while not done.is_set():
                for name in ("r1", "r2"):
                    is_error, text = await call_text(client, name, {})
                    calls += 1
                    if is_error:
                        failures.append(f"{name}: {text}")
                    else:
                        seen.add(int(text))
            last = await writer
            deadline = time.monotonic() + 10
            while (await call_text(client, "r2", {}))[1] != str(last):
                assert time.monotonic() < deadline, "the last save was never published"
                await asyncio.sleep(0.05)
    complete = {version(v) for v in range(last + 1)}
    kept = [p.read_text() for p in home.glob("versions/dynamic-*/objects/*.py")]
    half = [t for t in kept if t not in complete]
    print(
        f"\nchunked and atomic saves: {last} saves, {calls} calls during them, "
        f"failed calls: {len(failures)}, versions kept: {len(kept)}, half-written kept: {len(half)}"
    )
    assert failures == [], failures[:5]
    assert half == []
    assert len(kept) >= SAVES_PER_WRITER  # the whole saves are history
