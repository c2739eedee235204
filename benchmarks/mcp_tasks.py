"""MCP tasks over streamable HTTP at 2026-07-28: what running a call as a task costs.

    python benchmarks/mcp_tasks.py [--calls 200]

One real ``nexus-tools serve`` process serves ``add`` (a plain tool) and ``add_later`` (the
same body, ``@tool(task=True)``). The client posts JSON-RPC over HTTP itself, declaring the
tasks extension, and times, serially and interleaved: a plain ``tools/call`` of ``add`` (the
peer), a ``tools/call`` of ``add_later`` that answers with a task, and ``tasks/get`` of a
finished task (its inlined result). Prints the medians (ms) and the ratios to the peer.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp_throughput import free_port, run_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from raw_jsonrpc import RawMcp  # the tests' plain-HTTP MCP poster

TOOL_FILE = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(task=True)
def add_later(a: int, b: int) -> int:
    """Add two integers, as a task."""
    return a + b
'''

TASKS = "io.modelcontextprotocol/tasks"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tools"
        folder.mkdir()
        (folder / "adding.py").write_text(TOOL_FILE)
        port = free_port()
        args = [
            "-m",
            "nexus_jupyter.serve.cli_serve",
            "--transport",
            "http",
            "--port",
            str(port),
            "--dir",
            str(folder),
        ]
        with run_server(args, port, cwd=tmp) as (url, _pid):
            post = RawMcp(url, extensions=[TASKS])
            arguments = {"a": 2, "b": 3}
            for _ in range(20):  # warm up both paths (first-call imports)
                post("tools/call", {"name": "add", "arguments": arguments})
                post("tools/call", {"name": "add_later", "arguments": arguments})
            timings: dict[str, list[float]] = {
                "plain call": [],
                "call -> task": [],
                "tasks/get (done)": [],
            }
            for _ in range(opts.calls):
                start = time.perf_counter()
                post("tools/call", {"name": "add", "arguments": arguments})
                timings["plain call"].append(time.perf_counter() - start)
                start = time.perf_counter()
                created = post("tools/call", {"name": "add_later", "arguments": arguments})
                timings["call -> task"].append(time.perf_counter() - start)
                assert created["resultType"] == "task", created
                while (got := post("tasks/get", {"taskId": created["taskId"]}))[
                    "status"
                ] != "completed":
                    time.sleep(0.001)
                start = time.perf_counter()
                got = post("tasks/get", {"taskId": created["taskId"]})
                timings["tasks/get (done)"].append(time.perf_counter() - start)
                assert got["result"]["structuredContent"] == {"result": 5}, got
    peer = statistics.median(timings["plain call"])
    print(f"MCP tasks, 2026-07-28 over HTTP, {opts.calls} calls each, serial (median ms):")
    for label, values in timings.items():
        median = statistics.median(values)
        print(f"  {label:18} {median * 1000:7.2f} ms  {median / peer:5.2f}x the plain call")


if __name__ == "__main__":
    main()
