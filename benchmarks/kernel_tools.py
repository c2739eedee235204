"""Live kernel tools through a real Jupyter server: how long until a cell's tool is listed
by the server, and what a REST call of it costs next to a call of a server-local tool.

    python benchmarks/kernel_tools.py [--runs 15] [--calls 50]

Starts ``jupyter_server`` with the extension and one kernel (through its REST API). Prints
medians (the machine is shared and noisy):

- re-run -> listed: a cell re-defines the tool (a new version each time); time until
  ``GET /nexus/api/tools`` shows the new version (target < 1 s);
- REST call of the kernel tool (a sync tool, run on the kernel's main thread) next to the
  same call of the built-in ``ls`` served by the server itself, and their ratio;
- first tool of a fresh kernel: one cell loads the extension and defines a tool; time from
  the cell's end until the server lists it (the kernel's link starts with ``%load_ext``:
  it builds the session registry and imports the MCP SDK first), next to the time the
  kernel itself took to start (``POST /api/sessions`` until it answers).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from live_kernels import JupyterServer, NotebookKernel, jupyter_server

DEFINE = '''from nexus_jupyter import tool

@tool
def bench_value() -> int:
    """Returns the run number {run}."""
    return {run}
'''


def _version(server: JupyterServer) -> str | None:
    rows = [r for r in server.tools("kernel:bench.ipynb") if r["name"] == "bench_value"]
    return rows[0]["version"] if rows else None


def _first_tool(server: JupyterServer, run: int) -> tuple[float, float]:
    """``(kernel start s, first tool listed s after its cell)`` for a fresh kernel."""
    notebook = f"fresh{run}.ipynb"
    start = time.perf_counter()
    kernel = NotebookKernel(server, notebook)
    started = time.perf_counter() - start
    try:
        kernel.run("%load_ext nexus_jupyter\n" + DEFINE.format(run=run), "define")
        ran = time.perf_counter()
        server.wait_for(lambda: server.tools(f"kernel:{notebook}"), 60, "the fresh kernel's tool")
        return started, time.perf_counter() - ran
    finally:
        kernel.close()


def _call_ms(server: JupyterServer, name: str, arguments: dict[str, object], calls: int) -> float:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        status, body = server.call(name, arguments)
        times.append(time.perf_counter() - start)
        assert status == 200, body
        assert not body["is_error"], body
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--fresh", type=int, default=5, help="fresh kernels for the first tool")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, jupyter_server(Path(tmp)) as server:
        kernel = NotebookKernel(server, "bench.ipynb")
        try:
            kernel.run("%load_ext nexus_jupyter", "load")
            kernel.run(DEFINE.format(run=0), "define")
            server.wait_for(lambda: _version(server), 60, "the first listing")
            listed = []
            for run in range(1, args.runs + 1):
                before = _version(server)
                kernel.run(DEFINE.format(run=run), "define")
                start = time.perf_counter()
                server.wait_for(lambda b=before: _version(server) not in (None, b), 10)
                listed.append(time.perf_counter() - start)
            kernel_ms = _call_ms(server, "bench_value", {}, args.calls)
            local_ms = _call_ms(server, "ls", {}, args.calls)
        finally:
            kernel.close()
        fresh = [_first_tool(server, run) for run in range(args.fresh)]
    print(
        f"re-run -> listed by the server: median {statistics.median(listed) * 1000:.0f} ms, "
        f"max {max(listed) * 1000:.0f} ms over {args.runs} re-runs"
    )
    print(f"REST call, kernel tool: median {kernel_ms:.1f} ms")
    print(f"REST call, server's own ls: median {local_ms:.1f} ms")
    print(f"ratio kernel / local: {kernel_ms / local_ms:.2f}x")
    if fresh:
        first = statistics.median(f for _, f in fresh)
        boot = statistics.median(s for s, _ in fresh)
        print(
            f"first tool of a fresh kernel (%load_ext and @tool in one cell) listed: median "
            f"{first:.2f} s after the cell, max {max(f for _, f in fresh):.2f} s "
            f"over {len(fresh)} kernels"
        )
        print(f"starting the kernel itself (REST until ready): median {boot:.2f} s")
        print(f"ratio first listing / kernel start: {first / boot:.2f}x")


if __name__ == "__main__":
    main()
