"""Per-call cost of ``registry.call`` next to pydantic ``validate_call`` and the mcp SDK's
in-memory client, all calling the same two-int tool in the same run.

    python benchmarks/call_overhead.py [--calls 20000] [--rounds 7]

Prints medians over rounds (the machine is shared and noisy) and the ratios.
Targets: registry call <= 3x validate_call, and >= 30x faster than the mcp in-memory client.

Also a tool file loaded with ``isolation: process``: p50 of single calls into a warm worker
process, next to the same p50 for the in-process tool (target: worker call <= 300 us p50).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable
from typing import Any

from pydantic import validate_call

from nexus_jupyter import Registry


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def per_call_sync(fn: Callable[[], Any], calls: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


async def per_call_async(fn: Callable[[], Any], calls: int, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            await fn()
        samples.append((time.perf_counter() - start) / calls)
    return statistics.median(samples)


async def measure_mcp(calls: int, rounds: int) -> float:
    from mcp import Client
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")
    server.add_tool(add)
    async with Client(server) as client:
        for _ in range(50):  # warm up (the first structured call imports jsonschema)
            await client.call_tool("add", {"a": 1, "b": 2})
        return await per_call_async(
            lambda: client.call_tool("add", {"a": 1, "b": 2}), calls, rounds
        )


async def per_call_p50(fn: Callable[[], Any], calls: int) -> float:
    """The median of ``calls`` single, separately timed calls."""
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def measure_worker(calls: int) -> tuple[float, float]:
    """p50 of a call into a warm worker process, and of the same tool in process."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tools"
        folder.mkdir()
        (folder / "add_file.py").write_text(
            "from nexus_jupyter import tool\n\n\n@tool\ndef add_file(a: int, b: int) -> int:\n"
            '    """Add two integers."""\n    return a + b\n'
        )
        results = []
        for isolation in ("process", "thread"):
            reg = Registry(search="keyword")
            reg.watch(folder, isolation=isolation, versions=False)
            payload = {"a": 1, "b": 2}
            for _ in range(200):  # warm up: the worker has the file, the pool its threads
                await reg.call("add_file", payload)
            results.append(await per_call_p50(lambda: reg.call("add_file", payload), calls))
            reg.close()
        return results[0], results[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--mcp-calls", type=int, default=1_000)
    parser.add_argument("--worker-calls", type=int, default=3_000)
    args = parser.parse_args()

    reg = Registry(search="keyword")
    reg.add(add)
    payload = {"a": 1, "b": 2}
    assert reg.call_sync("add", payload).value == 3

    validated = validate_call(add)
    t_validate = per_call_sync(lambda: validated(**payload), args.calls, args.rounds)
    t_plain = per_call_sync(lambda: add(**payload), args.calls, args.rounds)
    t_sync = per_call_sync(lambda: reg.call_sync("add", payload), args.calls, args.rounds)

    async def registry_async() -> float:
        for _ in range(100):  # warm up: a proven-fast sync tool then runs inline
            await reg.call("add", payload)
        return await per_call_async(lambda: reg.call("add", payload), args.calls, args.rounds)

    t_async = asyncio.run(registry_async())
    t_mcp = asyncio.run(measure_mcp(args.mcp_calls, max(3, args.rounds // 2)))
    t_worker, t_file = asyncio.run(measure_worker(args.worker_calls))
    reg.close()

    us = 1e6
    print(
        f"median per-call cost over {args.rounds} rounds of {args.calls} calls "
        f"(mcp: {args.mcp_calls} calls)"
    )
    print(f"  plain function call            {t_plain * us:9.2f} us")
    print(f"  pydantic validate_call         {t_validate * us:9.2f} us")
    print(f"  await registry.call            {t_async * us:9.2f} us")
    print(f"  registry.call_sync             {t_sync * us:9.2f} us")
    print(f"  mcp in-memory Client.call_tool {t_mcp * us:9.2f} us")
    print(f"ratio registry.call / validate_call      = {t_async / t_validate:6.2f}x (target <= 3)")
    print(f"ratio registry.call_sync / validate_call = {t_sync / t_validate:6.2f}x (target <= 3)")
    print(
        f"mcp client / registry.call               = {t_mcp / t_async:6.1f}x faster (target >= 30)"
    )
    print(f"p50 of {args.worker_calls} single calls of a tool file:")
    print(f"  in process (isolation: thread) {t_file * us:9.2f} us")
    print(f"  warm worker (isolation: process){t_worker * us:8.2f} us (target <= 300)")
    print(
        f"ratio worker / in process = {t_worker / t_file:6.1f}x; mcp client / worker = "
        f"{t_mcp / t_worker:5.1f}x"
    )


if __name__ == "__main__":
    main()
