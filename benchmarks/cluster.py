"""Replicas on Redis behind nginx: throughput with 1 and 3 replicas, and how long a
publication takes to reach the clients of every replica.

    python benchmarks/cluster.py [--seconds 3] [--rounds 3] [--clients 2] [--concurrency 8] [--publishes 30]

Starts Debian ``redis-server``, three ``nexus-tools serve --cluster`` replicas and two nginx
balancers on loopback: one in front of replica 0 only, one round-robin over all three (the
same replicas, the same run). Load comes from ``--clients`` separate client processes, each
with ``--concurrency`` calls in flight on the SDK's ``mcp.Client`` (2026-07-28: every call is
its own HTTP request, so the balancer spreads them). Prints calls/s for both balancers, the
median over paired rounds, and the ratio 3/1. On a machine with fewer cores than replicas,
client and balancer, the ratio is bounded by the cores, not by the design.

Then, with a legacy session and a ``subscriptions/listen`` stream open on *each* replica, it
publishes a new version of a tool file straight into Redis (what ``nexus-tools publish``
does) and times publication -> the last of the six clients told: p50/p95 over
``--publishes`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
from mcp_throughput import throughput  # this folder: the same client loop, the same tool

from nexus_jupyter.cluster import ClusterAddress, ClusterStore
from nexus_jupyter.sources.loader import content_hash

# The cluster rig of the tests (redis-server, replicas, nginx), and the helpers it uses.
TESTS = Path(__file__).resolve().parent.parent / "tests"
sys.path[:0] = [str(TESTS / "cluster"), str(TESTS)]
from rig import ClusterRig, Nginx, cluster_rig, free_port, missing_programs  # noqa: E402

TOOL = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers{edit}."""
    return a + b
'''


def calls_per_second(url: str, seconds: float, clients: int, concurrency: int) -> float:
    """Total calls/s of ``clients`` client processes started together."""
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", url, str(seconds), str(concurrency)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(clients)
    ]
    total = 0.0
    for proc in procs:
        out, _ = proc.communicate(timeout=seconds + 60)
        assert proc.returncode == 0, out
        total += float(out.strip().splitlines()[-1])
    return total


async def notify_latency(rig: ClusterRig, publishes: int) -> list[float]:
    """Publication -> every replica's legacy and listen clients told, per round."""
    store = ClusterStore(ClusterAddress.parse(rig.redis.url))
    samples: list[float] = []
    async with contextlib.AsyncExitStack() as stack:
        told: list[asyncio.Event] = []

        def on_change(event: asyncio.Event) -> Any:
            async def handler(message: Any) -> None:
                if isinstance(message, types.ToolListChangedNotification):
                    event.set()

            return handler

        for replica in rig.replicas:
            event = asyncio.Event()
            told.append(event)
            legacy = await stack.enter_async_context(
                mcp.Client(replica.url, mode="legacy", message_handler=on_change(event))
            )
            await legacy.list_tools()
        streams = []
        for replica in rig.replicas:
            modern = await stack.enter_async_context(mcp.Client(replica.url))
            streams.append(
                aiter(await stack.enter_async_context(modern.listen(tools_list_changed=True)))
            )
        for i in range(publishes):
            for event in told:
                event.clear()
            text = TOOL.format(edit=f" (edit {i})")
            start = time.perf_counter()
            await store.publish_file("add.py", content_hash(text), text, "benchmark")
            await asyncio.wait_for(
                asyncio.gather(*(e.wait() for e in told), *(anext(s) for s in streams)), 10
            )
            samples.append(time.perf_counter() - start)
            await asyncio.sleep(0.05)
    await store.close()
    return samples


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--publishes", type=int, default=30)
    parser.add_argument("--worker", nargs=3, metavar=("URL", "SECONDS", "CONCURRENCY"))
    args = parser.parse_args()
    if args.worker:
        url, seconds, concurrency = args.worker
        rate, _cpu = asyncio.run(throughput(url, "auto", float(seconds), int(concurrency)))
        print(rate)
        return 0
    if missing_programs():
        print(f"needs {missing_programs()}: run `make cluster-deps`", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp, cluster_rig(Path(tmp), replicas=3) as rig:
        text = TOOL.format(edit="")
        asyncio.run(_publish(rig.redis.url, text))
        single = Nginx(
            Path(tmp) / "nginx-one",
            free_port(),
            [rig.replicas[0].port],
            host_header=f"127.0.0.1:{rig.nginx.port}",
        )
        single.start()
        try:
            one_url = f"http://127.0.0.1:{single.port}/mcp"
            ones, threes = [], []
            for _ in range(args.rounds):
                ones.append(calls_per_second(one_url, args.seconds, args.clients, args.concurrency))
                threes.append(
                    calls_per_second(rig.balancer_url, args.seconds, args.clients, args.concurrency)
                )
        finally:
            single.stop()
        one, three = statistics.median(ones), statistics.median(threes)
        print(
            f"calls/s through nginx ({args.clients} client processes x {args.concurrency} in "
            f"flight, median of {args.rounds} paired rounds of {args.seconds:g} s):"
        )
        print(f"  1 replica : {one:8.1f}   rounds {[round(x) for x in ones]}")
        print(f"  3 replicas: {three:8.1f}   rounds {[round(x) for x in threes]}")
        print(f"  ratio 3/1 : {three / one:.2f}x")
        samples = asyncio.run(notify_latency(rig, args.publishes))
        ms = [s * 1000 for s in samples]
        print(
            f"publish -> all 6 clients of 3 replicas told (3 legacy list_changed + 3 listen "
            f"streams), {len(ms)} publications: p50 {percentile(ms, 0.5):.1f} ms, "
            f"p95 {percentile(ms, 0.95):.1f} ms, max {max(ms):.1f} ms"
        )
    return 0


async def _publish(url: str, text: str) -> None:
    store = ClusterStore(ClusterAddress.parse(url))
    try:
        await store.publish_file("add.py", content_hash(text), text, "benchmark")
    finally:
        await store.close()


if __name__ == "__main__":
    sys.exit(main())
