"""Finding: a tool file could kill or freeze its host: ``os._exit(0)`` at import ended the
server silently, an endless loop at import spun on every save, and a GIL-holding call
stopped the server from answering.

With ``isolation: process`` in nex.yaml, a real ``nexus-tools serve`` loads and runs the
folder's files in worker processes: each of these costs one worker, which is replaced, and
the server keeps answering; a timeout or a cancel kills the worker, so the work really stops.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from serving import call_text, mcp_client, serve_http

pytestmark = pytest.mark.e2e

HOSTILE = '''import os
import re
import time
from pathlib import Path

from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
def die() -> int:
    """Ends its process."""
    os._exit(7)


@tool(timeout=1)
def spin() -> int:
    """Loops forever."""
    while True:
        pass


@tool(timeout=1)
def hold_gil() -> bool:
    """Backtracks for hours inside one C call (holds the GIL)."""
    return re.match(r"(a+)+$", "a" * 40 + "!") is not None


@tool
def slow_marker(path: str) -> str:
    """Writes a marker after two seconds."""
    time.sleep(2)
    Path(path).write_text("still ran")
    return "done"
'''


async def test_hostile_tool_files_cost_one_worker_each(tmp_path: Path) -> None:
    folder = tmp_path / "tools" / "dynamic"
    folder.mkdir(parents=True)
    (tmp_path / "nex.yaml").write_text("isolation: process\nsearch: {mode: keyword}\n")
    (folder / "hostile.py").write_text(HOSTILE)
    (folder / "exits.py").write_text("import os\nos._exit(0)\n")
    marker = tmp_path / "marker.txt"
    with serve_http(tmp_path) as server:
        async with mcp_client(server.url) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"add", "die", "spin", "hold_gil"} <= names
            # warm up: the first calls after start cost more on a loaded machine
            await call_text(client, "read", {"path": "nex.yaml"})
            await call_text(client, "add", {"a": 1, "b": 1})
            survived, slowest_other = 0, 0.0
            for name in ("die", "spin", "hold_gil", "die"):
                call = asyncio.ensure_future(call_text(client, name, {}))
                started = time.perf_counter()
                # the server answers other calls while the hostile one runs
                is_error, text = await call_text(client, "read", {"path": "nex.yaml"})
                took = time.perf_counter() - started
                slowest_other = max(slowest_other, took)
                assert not is_error and "isolation" in text
                is_error, text = await asyncio.wait_for(call, 15)
                assert is_error, (name, text)
                is_error, text = await call_text(client, "add", {"a": 2, "b": 3})
                assert not is_error and text == "5", text
                survived += 1
            # a cancelled call's worker is killed: the work stops
            slow = asyncio.ensure_future(client.call_tool("slow_marker", {"path": str(marker)}))
            await asyncio.sleep(0.5)
            slow.cancel()
            await asyncio.gather(slow, return_exceptions=True)
            await asyncio.sleep(2.5)
            assert not marker.exists(), "the cancelled call kept running"
            assert server.proc.poll() is None
    print(
        f"\nprocess isolation: hostile calls={survived} (os._exit x2, endless loop, GIL hold), "
        f"server crashes=0, import os._exit contained, slowest other call during them "
        f"{slowest_other * 1000:.0f} ms, cancelled work stopped"
    )
    assert slowest_other < 2.0
