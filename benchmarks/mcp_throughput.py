"""MCP over streamable HTTP: ``nexus-tools serve`` next to a bare mcp SDK ``MCPServer`` that
exposes the same tool, in the same run, plus the time from saving a tool file to a connected
client receiving ``notifications/tools/list_changed``.

    python benchmarks/mcp_throughput.py [--seconds 3] [--rounds 2] [--mode auto|legacy] [--saves 20]

Both servers are real processes on 127.0.0.1; the client is the SDK's ``mcp.Client``.
Prints calls/s (serial, and 8 concurrent on one client) for both and the ratio
(target >= 1.0x), and the p50/p90 of save -> list_changed (target p50 <= 150 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types

TOOL_FILE = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''

BARE_SERVER = '''
import sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare", log_level="WARNING")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_listening(port: int, proc: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("server did not start listening")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def run_server(args: list[str], port: int, cwd: str | None = None) -> Iterator[tuple[str, int]]:
    proc = subprocess.Popen([sys.executable, *args], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stderr is not None
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    try:
        wait_listening(port, proc)
        yield f"http://127.0.0.1:{port}/mcp", proc.pid
    finally:
        proc.terminate()
        proc.wait(10)


async def throughput(
    url: str, mode: str, seconds: float, concurrency: int, pid: int | None = None
) -> tuple[float, float]:
    """Calls per second, and the server's CPU milliseconds per call (when ``pid`` is given:
    unlike calls/s it does not depend on what else the machine is running)."""
    async with mcp.Client(url, mode=mode) as client:
        for _ in range(20):  # warm up (first structured call imports jsonschema)
            await client.call_tool("add", {"a": 1, "b": 2})
        count = 0
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal count
            while time.perf_counter() < deadline:
                result = await client.call_tool("add", {"a": 20, "b": 22})
                assert result.structured_content == {"result": 42}, result
                count += 1

        cpu = cpu_seconds(pid) if pid else 0.0
        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - start
        cpu_ms = (cpu_seconds(pid) - cpu) * 1000 / count if pid else float("nan")
        return count / elapsed, cpu_ms


async def list_changed_latency(url: str, folder: Path, saves: int) -> list[float]:
    arrived = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            arrived.set()

    samples = []
    async with mcp.Client(url, mode="legacy", message_handler=on_message) as client:
        await client.list_tools()
        for i in range(saves):
            arrived.clear()
            text = TOOL_FILE.replace("Add two integers.", f"Add two integers (edit {i}).")
            start = time.perf_counter()
            (folder / "add.py").write_text(text)
            await asyncio.wait_for(arrived.wait(), 10)
            samples.append(time.perf_counter() - start)
            await asyncio.sleep(0.05)  # let the watcher settle between saves
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="duration of each run")
    parser.add_argument("--mode", default="auto", help="client mode: auto (2026-07-28) or legacy")
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2, help="interleaved runs per server")
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tools" / "dynamic"
        folder.mkdir(parents=True)
        (folder / "add.py").write_text(TOOL_FILE)
        ours_port, bare_port = free_port(), free_port()
        ours_args = ["-m", "nexus_jupyter.serve.cli_serve", "--transport", "http",
                     "--port", str(ours_port), "--dir", str(folder)]  # fmt: skip
        with run_server(ours_args, ours_port, cwd=tmp) as (ours_url, ours_pid), \
                run_server(["-c", BARE_SERVER, str(bare_port)], bare_port) as (bare_url, bare_pid):  # fmt: skip
            rows = []
            for label, concurrency in (("serial", 1), ("8 concurrent", 8)):
                runs: dict[str, list[tuple[float, float]]] = {"ours": [], "bare": []}
                for _ in range(opts.rounds):  # interleaved, so a load spike hits both
                    runs["bare"].append(
                        asyncio.run(
                            throughput(bare_url, opts.mode, opts.seconds, concurrency, bare_pid)
                        )
                    )
                    runs["ours"].append(
                        asyncio.run(
                            throughput(ours_url, opts.mode, opts.seconds, concurrency, ours_pid)
                        )
                    )
                best = {k: (max(r[0] for r in v), min(r[1] for r in v)) for k, v in runs.items()}
                rows.append((label, best["ours"], best["bare"]))
            latency = asyncio.run(list_changed_latency(ours_url, folder, opts.saves))

    print(f"MCP tools/call over streamable HTTP, client mode={opts.mode!r}, best of "
          f"{opts.rounds} x {opts.seconds:g} s runs, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"{'':14}{'nexus-tools serve':>22}{'bare MCPServer':>22}{'ratio':>8}")
    for label, (ours, ours_cpu), (bare, bare_cpu) in rows:
        print(
            f"{label:14}{ours:>10.0f} c/s{ours_cpu:>6.2f} ms cpu"
            f"{bare:>10.0f} c/s{bare_cpu:>6.2f} ms cpu{ours / bare:>7.2f}x"
        )
    print("(ms cpu = server CPU time per call; ratio = calls/s ours / bare, target >= 1.0x)")
    ms = sorted(s * 1000 for s in latency)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    print(
        f"save -> list_changed over {len(ms)} saves: p50 {statistics.median(ms):.0f} ms, "
        f"p90 {p90:.0f} ms, max {ms[-1]:.0f} ms (target p50 <= 150 ms)"
    )


if __name__ == "__main__":
    main()
