"""MCP over streamable HTTP: ``nexus-tools serve`` next to a bare mcp SDK ``MCPServer`` that
exposes the same tool, in the same run, plus the time from saving a tool file to a connected
client receiving ``notifications/tools/list_changed``.

    python benchmarks/mcp_throughput.py [--seconds 2] [--rounds 6] [--mode auto|legacy] [--saves 20]

Both servers are real processes on 127.0.0.1; the client is the SDK's ``mcp.Client``.
Prints calls/s (serial, and 8 concurrent on one client) for both and the ratio
(target >= 1.0x): the median over paired rounds, each round running both servers back to back,
since on a shared 2-core machine the client's own CPU and other jobs move single runs by 10%, and the p50/p90 of save -> list_changed (target p50 <= 150 ms).
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
    proc = subprocess.Popen(
        [sys.executable, *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
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


async def handler_cost(calls: int = 3000) -> tuple[float, float]:
    """Microseconds per ``tools/call`` inside the server, transport left out: our handler
    (registry lookup, policy, validation, the call, audit, result conversion) next to the bare
    ``MCPServer.call_tool`` for the same function. Steady where calls/s over HTTP is not."""
    from types import SimpleNamespace

    from mcp.server.mcpserver import MCPServer

    from nexus_jupyter import Registry, tool
    from nexus_jupyter.core.policy.audit import AuditLog
    from nexus_jupyter.serve.mcp_server import RegistryServer

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    bare = MCPServer("bare", log_level="WARNING")
    bare.tool()(add)
    with tempfile.TemporaryDirectory() as tmp:
        registry = Registry(search="keyword", audit=AuditLog(Path(tmp) / "audit.jsonl"))
        registry.add(tool(add))
        ours = RegistryServer(registry)
        params = types.CallToolRequestParams(name="add", arguments={"a": 1, "b": 2})
        ctx = SimpleNamespace(
            request_id=1, params=params, session=None, protocol_version="2026-07-28", meta=None
        )

        async def per_call(call: Any) -> float:
            for _ in range(100):
                await call()
            start = time.perf_counter()
            for _ in range(calls):
                await call()
            return (time.perf_counter() - start) / calls * 1e6

        ours_us = await per_call(lambda: ours._call_tool(ctx, params))
        bare_us = await per_call(lambda: bare.call_tool("add", {"a": 1, "b": 2}))
        registry.close()
    return ours_us, bare_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="duration of each run")
    parser.add_argument("--mode", default="auto", help="client mode: auto (2026-07-28) or legacy")
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=6, help="paired runs per server")
    opts = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tools" / "dynamic"
        folder.mkdir(parents=True)
        (folder / "add.py").write_text(TOOL_FILE)
        ours_port, bare_port = free_port(), free_port()
        ours_args = [
            "-m",
            "nexus_jupyter.serve.cli_serve",
            "--transport",
            "http",
            "--port",
            str(ours_port),
            "--dir",
            str(folder),
        ]
        with (
            run_server(ours_args, ours_port, cwd=tmp) as (ours_url, ours_pid),
            run_server(["-c", BARE_SERVER, str(bare_port)], bare_port) as (bare_url, bare_pid),
        ):
            rows = []
            targets = {"ours": (ours_url, ours_pid), "bare": (bare_url, bare_pid)}
            for label, concurrency in (("serial", 1), ("8 concurrent", 8)):
                runs: dict[str, list[tuple[float, float]]] = {"ours": [], "bare": []}
                ratios = []
                for n in range(opts.rounds):
                    # Paired and interleaved, first one then the other first, so load drift
                    # and order effects hit both sides alike; each round gives one ratio.
                    for side in ("bare", "ours") if n % 2 == 0 else ("ours", "bare"):
                        url, pid = targets[side]
                        runs[side].append(
                            asyncio.run(throughput(url, opts.mode, opts.seconds, concurrency, pid))
                        )
                    ratios.append(runs["ours"][-1][0] / runs["bare"][-1][0])
                median = {
                    k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
                    for k, v in runs.items()
                }
                rows.append((label, median["ours"], median["bare"], ratios))
            latency = asyncio.run(list_changed_latency(ours_url, folder, opts.saves))

    print(
        f"MCP tools/call over streamable HTTP, client mode={opts.mode!r}, medians of "
        f"{opts.rounds} paired rounds of {opts.seconds:g} s, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'':14}{'nexus-tools serve':>22}{'bare MCPServer':>22}{'ratio':>8}   per round")
    for label, (ours, ours_cpu), (bare, bare_cpu), ratios in rows:
        print(
            f"{label:14}{ours:>10.0f} c/s{ours_cpu:>6.2f} ms cpu"
            f"{bare:>10.0f} c/s{bare_cpu:>6.2f} ms cpu{statistics.median(ratios):>7.2f}x   "
            + " ".join(f"{r:.2f}" for r in ratios)
        )
    print(
        "(ms cpu = server CPU time per call; ratio = median of the rounds' calls/s ours / bare,"
        " target >= 1.0x)"
    )
    ours_us, bare_us = asyncio.run(handler_cost())
    print(
        f"in-process handler, no transport: {ours_us:.0f} us/call ours, {bare_us:.0f} us/call "
        f"MCPServer.call_tool ({bare_us / ours_us:.1f}x)"
    )
    ms = sorted(s * 1000 for s in latency)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    print(
        f"save -> list_changed over {len(ms)} saves: p50 {statistics.median(ms):.0f} ms, "
        f"p90 {p90:.0f} ms, max {ms[-1]:.0f} ms (target p50 <= 150 ms)"
    )


if __name__ == "__main__":
    main()
