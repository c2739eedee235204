"""Declared tools and skills, each next to a peer measured in the same run.

    python benchmarks/manifest.py [--calls 30] [--edits 15]

- A declared script tool (``{type: script}``, argv template) called through the registry,
  next to ``subprocess.run`` of the same script with the same argv: the registry's cost on
  top of starting a process.
- A skill's hot reload (edit ``SKILL.md`` until the registry shows the new description),
  next to the hot reload of a tool file in a watched tools folder (the same watcher).

Prints medians (the machine is shared and noisy) and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from nexus_jupyter import Registry
from nexus_jupyter.sources.skills import SkillsSource

SCRIPT = '#!/bin/sh\necho "$@"\n'
TOOL_FILE = """from nexus_jupyter import tool


@tool
def demo_tool() -> str:
    'v{version}'
    return 'x'
"""


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_script(root: Path, calls: int) -> tuple[float, float]:
    (root / "run.sh").write_text(SCRIPT)
    (root / "run.sh").chmod(0o755)
    (root / "nex.yaml").write_text(
        "search: {mode: keyword}\n"
        "tools:\n"
        "  - id: run\n"
        "    permission: read_only\n"
        "    source: {type: script, path: run.sh, args: ['--n', '{n}']}\n"
        "    parameters: {type: object, properties: {n: {type: integer}}}\n"
    )
    reg = Registry.default(root=root, watch=False, builtins=False)
    try:
        reg.call_sync("run", {"n": 0})  # warm
        ours, peer = [], []
        for i in range(calls):
            start = time.perf_counter()
            assert reg.call_sync("run", {"n": i}).structured["stdout"] == f"--n {i}\n"
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            subprocess.run([str(root / "run.sh"), "--n", str(i)], capture_output=True, check=True)
            peer.append(time.perf_counter() - start)
        return _median_ms(ours), _median_ms(peer)
    finally:
        reg.close()


def _wait_for(reg: Registry, check: Callable[[], bool], limit: float = 10.0) -> None:
    changed = threading.Event()
    unsubscribe = reg.subscribe(lambda _change: changed.set())
    deadline = time.monotonic() + limit
    try:
        while not check():
            if time.monotonic() > deadline:
                raise TimeoutError("no reload within the limit")
            changed.wait(0.05)
            changed.clear()
    finally:
        unsubscribe()


def bench_reload(root: Path, edits: int) -> tuple[float, float]:
    skills, tools = root / "skills", root / "tools"
    (skills / "demo").mkdir(parents=True)
    tools.mkdir()
    skill_md = skills / "demo" / "SKILL.md"
    skill_md.write_text("---\nname: demo\ndescription: v0\n---\nDo it.\n")
    tool_py = tools / "demo_tool.py"
    tool_py.write_text(TOOL_FILE.format(version=0))
    reg = Registry(search="keyword")
    try:
        source = reg.add_source(SkillsSource([skills]))
        folder = reg.watch(tools)
        assert source.started.wait(10)
        assert all(w.ready.wait(10) for w in source._watchers)
        _wait_for(reg, lambda: "demo_tool" in reg.names())
        del folder
        ours, peer = [], []
        for i in range(1, edits + 1):
            start = time.perf_counter()
            skill_md.write_text(f"---\nname: demo\ndescription: v{i}\n---\nDo it.\n")
            _wait_for(reg, lambda i=i: reg.get("demo").spec.description == f"v{i}")
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            tool_py.write_text(TOOL_FILE.format(version=i))
            _wait_for(reg, lambda i=i: reg.get("demo_tool").spec.description == f"v{i}")
            peer.append(time.perf_counter() - start)
        return _median_ms(ours), _median_ms(peer)
    finally:
        reg.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--edits", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ours, peer = bench_script(Path(tmp), args.calls)
        print(
            f"declared script call: {ours:.2f} ms median; subprocess.run of the same script: "
            f"{peer:.2f} ms; ratio {ours / peer:.2f}x"
        )
    with tempfile.TemporaryDirectory() as tmp:
        ours, peer = bench_reload(Path(tmp), args.edits)
        print(
            f"skill hot reload: {ours:.1f} ms median; tool file hot reload: {peer:.1f} ms; "
            f"ratio {ours / peer:.2f}x"
        )


if __name__ == "__main__":
    main()
