"""Tool files in worker processes (the default of ``nexus-tools serve``) keep what a tool
in the server's own process has: progress reports, the caller's ``ctx.request``, log lines
to the client, and a cancel or timeout that stops the work and says so in the audit log.
A real ``nexus-tools serve`` process, the real SDK client."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from serving import result_text, serve_http

pytestmark = pytest.mark.e2e

TOOLS = '''import os
import time

from nexus_jupyter import ToolContext, tool


@tool
async def count(n: int, ctx: ToolContext) -> dict:
    """Count to n, reporting progress, and say who asked and where it ran."""
    for i in range(1, n + 1):
        await ctx.progress(i, n, f"step {i}")
    ctx.log.warning("counted to %d", n)
    return {"pid": os.getpid(), "client": ctx.request.client, "face": ctx.request.caller.face}


@tool(timeout=0.5)
def overrun(path: str) -> str:
    """Sleeps past its timeout, then would leave a marker."""
    time.sleep(2)
    open(path, "w").write("still ran")
    return "done"
'''


def audit_lines(home: Path) -> list[dict[str, Any]]:
    path = home / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_workers_relay_progress_request_and_logs_and_audit_their_kills(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "tools" / "dynamic"
    folder.mkdir(parents=True)
    (folder / "counting.py").write_text(TOOLS)
    marker = tmp_path / "marker.txt"
    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_progress(current: float, total: float | None, message: str | None) -> None:
        progress.append((current, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    home = tmp_path / "home"
    with serve_http(tmp_path, env={"NEXUS_HOME": str(home)}) as server:
        async with mcp.Client(server.url, mode="legacy", logging_callback=on_log) as client:
            result = await client.call_tool("count", {"n": 3}, progress_callback=on_progress)
            assert not result.is_error, result_text(result)
            seen = result.structured_content
            assert seen is not None
            assert seen["pid"] != server.proc.pid, "the tool ran in the server's own process"
            assert (seen["client"], seen["face"]) == ("mcp", "mcp")
            assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            assert [(m.level, m.data) for m in logs] == [("warning", "counted to 3")]

            timed_out = await client.call_tool("overrun", {"path": str(marker)})
            assert timed_out.is_error
            assert "worker process was killed" in result_text(timed_out)
            await asyncio.sleep(2.5)
            assert not marker.exists(), "the timed-out call kept running"
    (line,) = [a for a in audit_lines(home) if a.get("tool") == "overrun"]
    assert "timed out" in line["error"] and "worker process was killed" in line["error"]
