"""Cold ``%load_ext nexus_jupyter`` next to a cold ``import mcp``, each in a fresh process.

Each run starts a new interpreter, so nothing is cached in ``sys.modules``; the timing covers
only the statement itself (IPython's shell is created first for ``%load_ext``, as a kernel
has one before any cell runs). Prints the medians and the ratio; the budget is 250 ms.

    python benchmarks/load_ext.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

LOAD_EXT = """
import time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
start = time.perf_counter()
shell.run_line_magic("load_ext", "nexus_jupyter")
print(time.perf_counter() - start)
"""

IMPORT_MCP = """
import time
start = time.perf_counter()
import mcp
print(time.perf_counter() - start)
"""

BUDGET_S = 0.250


def measure(code: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        out.append(float(done.stdout.strip().splitlines()[-1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    ext = measure(LOAD_EXT, args.runs)
    mcp = measure(IMPORT_MCP, args.runs)
    ext_ms, mcp_ms = statistics.median(ext) * 1000, statistics.median(mcp) * 1000
    print(f"runs per measurement:           {args.runs} (fresh process each)")
    print(
        f"cold %load_ext nexus_jupyter:   {ext_ms:8.1f} ms median "
        f"(min {min(ext) * 1000:.1f}, max {max(ext) * 1000:.1f})"
    )
    print(
        f"cold import mcp:                {mcp_ms:8.1f} ms median "
        f"(min {min(mcp) * 1000:.1f}, max {max(mcp) * 1000:.1f})"
    )
    print(f"ratio %load_ext / import mcp:   {ext_ms / mcp_ms:8.3f}")
    verdict = "within" if ext_ms <= BUDGET_S * 1000 else "OVER"
    print(f"budget:                         {BUDGET_S * 1000:8.0f} ms ({verdict})")


if __name__ == "__main__":
    main()
