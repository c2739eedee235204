"""Hot reload vs process restart: how long from saving a tool file to the new behaviour.

Hot reload: a registry watches a folder (the real watchfiles watcher); the file is saved the
way most editors save (truncate, then write); the clock stops when ``call_sync`` returns the
new result. Restart: a fresh ``python`` process builds a registry, loads the folder and
answers the same call (what restarting a tool server costs). Both run here, in one run.

    .venv/bin/python benchmarks/hot_reload.py [--saves 60] [--restarts 5]

Targets: p50 <= 60 ms, p95 <= 150 ms, >= 20x faster than a restart.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from nexus_jupyter import Registry

TOOL = '''from nexus_jupyter import tool


@tool
def bench(x: int = 0) -> int:
    """Return the version of this file plus x."""
    return {version} + x
'''

RESTART = """
import sys
from nexus_jupyter import Registry
reg = Registry(search="keyword")
reg.watch(sys.argv[1])
print(reg.call_sync("bench", {}).structured)
reg.close()
"""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def measure_hot(folder: Path, saves: int, isolation: str = "thread") -> list[float]:
    path = folder / "bench.py"
    path.write_text(TOOL.format(version=0))
    reg = Registry(search="keyword")
    changed = threading.Event()
    reg.subscribe(lambda change: changed.set())
    source = reg.watch(folder, isolation=isolation)
    if not source.wait_ready(10):
        raise SystemExit("the watcher did not start")
    reg.call_sync("bench", {})  # warm the call path; timings are about reloading
    timings = []
    try:
        for version in range(1, saves + 1):
            changed.clear()
            start = time.perf_counter()
            with open(path, "w") as handle:  # truncate + write, like most editors
                handle.write(TOOL.format(version=version))
            deadline = start + 5.0
            while reg.call_sync("bench", {}).structured != version:
                if not changed.wait(max(0.0, deadline - time.perf_counter())):
                    raise SystemExit(f"save {version} was not live after 5 s")
                changed.clear()
            timings.append(time.perf_counter() - start)
    finally:
        reg.close()
    return timings


def measure_restart(folder: Path, runs: int) -> list[float]:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", RESTART, str(folder)], capture_output=True, text=True, check=True
        )
        timings.append(time.perf_counter() - start)
        if not out.stdout.strip().isdigit():
            raise SystemExit(f"restart run gave {out.stdout!r}: {out.stderr}")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saves", type=int, default=60)
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument(
        "--isolation",
        choices=("thread", "process"),
        default="thread",
        help="load the file in this process (thread) or in worker processes (process)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tools"
        folder.mkdir()
        hot = measure_hot(folder, args.saves, args.isolation)
        restart = measure_restart(folder, args.restarts)
    p50, p95 = statistics.median(hot) * 1000, _percentile(hot, 0.95) * 1000
    restart_ms = statistics.median(restart) * 1000
    ratio = restart_ms / p50
    print(
        f"hot reload, save -> new behaviour callable ({len(hot)} saves, real watcher, "
        f"isolation: {args.isolation}):"
    )
    print(
        f"  p50 {p50:7.1f} ms   p95 {p95:7.1f} ms   min {min(hot) * 1000:6.1f} ms   "
        f"max {max(hot) * 1000:6.1f} ms"
    )
    print(f"process restart (fresh python, load folder, answer a call; median of {len(restart)}):")
    print(f"  {restart_ms:7.1f} ms")
    print(f"ratio restart / hot p50: {ratio:.1f}x")
    ok = p50 <= 60 and p95 <= 150 and ratio >= 20
    print("targets (p50 <= 60 ms, p95 <= 150 ms, >= 20x):", "met" if ok else "NOT met")


if __name__ == "__main__":
    main()
