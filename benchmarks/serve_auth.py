"""What client authentication costs ``nexus-tools serve --transport http``: the same tool
served three ways in the same run (no auth, ``--auth tokens``, ``--auth oauth`` against a local
issuer whose JWKS is fetched over HTTP), each called serially by the SDK's ``mcp.Client``.

    python benchmarks/serve_auth.py [--seconds 2] [--rounds 6] [--mode auto|legacy]

Prints calls/s and the server's CPU ms per call (medians of interleaved rounds) and the ratio
of each authenticated server to the unauthenticated one, measured round by round.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import mcp
from mcp.client.streamable_http import streamable_http_client
from mcp_throughput import TOOL_FILE, cpu_seconds, free_port, run_server

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from oauth_issuer import running_issuer


async def serial_calls(
    url: str, token: str | None, mode: str, seconds: float, pid: int
) -> tuple[float, float]:
    """Calls/s of one client calling ``add`` back to back, and server CPU ms per call."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        mcp.Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        for _ in range(20):
            await client.call_tool("add", {"a": 1, "b": 2})
        count, cpu = 0, cpu_seconds(pid)
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            result = await client.call_tool("add", {"a": 20, "b": 22})
            assert result.structured_content == {"result": 42}, result
            count += 1
        elapsed = time.perf_counter() - start
    return count / elapsed, (cpu_seconds(pid) - cpu) * 1000 / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--mode", default="auto", help="client mode: auto (2026-07-28) or legacy")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, running_issuer() as issuer:
        folder = Path(tmp) / "tools" / "dynamic"
        folder.mkdir(parents=True)
        (folder / "add.py").write_text(TOOL_FILE)
        os.environ["NEXUS_HOME"] = str(Path(tmp) / "home")  # the servers inherit it
        from nexus_jupyter.serve.auth import FileTokenStore

        _, secret = FileTokenStore().create("bench", "workspace_write")
        common = [
            "-m",
            "nexus_jupyter.serve.cli_serve",
            "--transport",
            "http",
            "--dir",
            str(folder),
        ]
        ports = {name: free_port() for name in ("none", "tokens", "oauth")}
        extra = {
            "none": [],
            "tokens": ["--auth", "tokens"],
            "oauth": ["--auth", "oauth", "--issuer", issuer.url, "--audience", issuer.audience],
        }
        tokens = {"none": None, "tokens": secret, "oauth": issuer.mint("bench", expires_in=3600)}
        with (
            run_server([*common, "--port", str(ports["none"])], ports["none"], cwd=tmp) as none,
            run_server(
                [*common, "--port", str(ports["tokens"]), *extra["tokens"]],
                ports["tokens"],
                cwd=tmp,
            ) as tok,
            run_server(
                [*common, "--port", str(ports["oauth"]), *extra["oauth"]], ports["oauth"], cwd=tmp
            ) as oau,
        ):
            servers = {"none": none, "tokens": tok, "oauth": oau}
            runs: dict[str, list[tuple[float, float]]] = {k: [] for k in servers}
            ratios: dict[str, list[float]] = {"tokens": [], "oauth": []}
            for n in range(opts.rounds):
                order = list(servers) if n % 2 == 0 else list(reversed(servers))
                for name in order:
                    url, pid = servers[name]
                    runs[name].append(
                        asyncio.run(serial_calls(url, tokens[name], opts.mode, opts.seconds, pid))
                    )
                for name in ratios:
                    ratios[name].append(runs[name][-1][0] / runs["none"][-1][0])
    print(
        f"nexus-tools serve, serial tools/call, client mode={opts.mode!r}, medians of {opts.rounds} "
        f"interleaved rounds of {opts.seconds:g} s, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}"
    )
    for name, results in runs.items():
        calls = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        ratio = f"{statistics.median(ratios[name]):.2f}x of no auth" if name in ratios else "(peer)"
        print(f"  --auth {name:<7}{calls:>8.0f} calls/s{cpu:>7.2f} ms server cpu/call   {ratio}")


if __name__ == "__main__":
    main()
