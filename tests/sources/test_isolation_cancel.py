"""Tool files in worker processes (``isolation: process``): a cancelled call is first asked
to stop (an async tool's cleanup runs, a sync tool sees ``ctx.cancelled`` or is interrupted),
and its worker is killed only when it goes on past the grace period; a timed-out call's
worker is killed at once. Worker-side options reach the registry: summaries (templates and
functions), task settings and the file's source. Real worker processes, a real folder."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from nexus_jupyter import Registry
from nexus_jupyter.sources.isolation import CANCEL_GRACE_S

pytestmark = pytest.mark.timeout(60)

TOOLS = '''import asyncio
import os
import time
from pathlib import Path

from nexus_jupyter import ToolContext, tool


@tool
async def nap(marker: str) -> str:
    """Sleeps; leaves a marker when it is cancelled."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        Path(marker).write_text("cleaned up")
        raise
    return "rested"


@tool
def watchful(marker: str, ctx: ToolContext) -> str:
    """A sync tool that checks its context and stops by itself."""
    while not ctx.cancelled:
        time.sleep(0.01)
    Path(marker).write_text("saw the cancel")
    return "stopped"


@tool
def sleeper(marker: str) -> str:
    """A sync tool without a context: interrupted where it sleeps."""
    try:
        time.sleep(30)
    except BaseException as exc:
        Path(marker).write_text(type(exc).__name__)
        raise
    Path(marker).write_text("still ran")
    return "done"


@tool
def stubborn(marker: str) -> str:
    """Ignores every request to stop."""
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            time.sleep(0.05)
        except BaseException:
            pass
    Path(marker).write_text("still ran")
    return "done"


@tool
def pid() -> int:
    """The worker's process id (slowly: two calls at once take both workers)."""
    time.sleep(0.3)
    return os.getpid()


@tool(summary="Calculating: {a} {op} {b}")
def calc(a: int, op: str, b: int) -> int:
    """A template summary."""
    return a + b if op == "add" else a - b


def _words(text: str, times: int) -> str:
    return f"Repeating {text!r} {times} times"


@tool(summary=_words)
def repeat(text: str, times: int = 2) -> str:
    """A summary function (it stays in the worker)."""
    return text * times


@tool(task="required", task_start="tool")
async def research(topic: str) -> str:
    """Task settings cross the process boundary."""
    return topic
'''


@pytest.fixture
def registry(tmp_path: Path):
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "calls.py").write_text(TOOLS)
    reg = Registry()
    reg.watch(folder, isolation="process")
    try:
        yield reg
    finally:
        reg.close()


async def _cancel_after(reg: Registry, name: str, arguments: dict, delay: float = 0.5):
    call = asyncio.ensure_future(reg.call(name, arguments))
    await asyncio.sleep(delay)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)


async def _pids(reg: Registry) -> set[int]:
    """The pids of both workers of the folder (two calls in flight at once)."""
    results = await asyncio.gather(reg.call("pid"), reg.call("pid"))
    return {r.structured for r in results}


def _appears(path: Path, seconds: float) -> bool:
    """Whether ``path`` appears within ``seconds`` (the tool writes it in its worker)."""
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return path.exists()


async def _wait_for(path: Path, seconds: float) -> bool:
    return await asyncio.to_thread(_appears, path, seconds)


async def test_a_cancelled_async_tool_runs_its_cleanup_and_keeps_its_worker(
    registry: Registry, tmp_path: Path
) -> None:
    before = await _pids(registry)
    marker = tmp_path / "nap.cancelled"
    await _cancel_after(registry, "nap", {"marker": str(marker)})
    assert await _wait_for(marker, CANCEL_GRACE_S), "the tool's except CancelledError never ran"
    assert marker.read_text() == "cleaned up"
    # the worker stopped the call itself, so it was not killed and replaced
    assert await _pids(registry) == before


async def test_a_sync_tool_sees_ctx_cancelled(registry: Registry, tmp_path: Path) -> None:
    marker = tmp_path / "watchful.txt"
    await _cancel_after(registry, "watchful", {"marker": str(marker)})
    assert await _wait_for(marker, CANCEL_GRACE_S)
    assert marker.read_text() == "saw the cancel"


async def test_a_sync_tool_without_a_context_is_interrupted(
    registry: Registry, tmp_path: Path
) -> None:
    before = await _pids(registry)
    marker = tmp_path / "sleeper.txt"
    await _cancel_after(registry, "sleeper", {"marker": str(marker)})
    assert await _wait_for(marker, CANCEL_GRACE_S), "the sleep was not interrupted"
    assert marker.read_text() == "CancelledError"
    assert await asyncio.wait_for(_pids(registry), 10) == before  # stopped, not killed


async def test_a_tool_that_ignores_the_cancel_is_killed_after_the_grace(
    registry: Registry, tmp_path: Path
) -> None:
    before = await _pids(registry)
    marker = tmp_path / "stubborn.txt"
    await _cancel_after(registry, "stubborn", {"marker": str(marker)})
    await asyncio.sleep(5.5)
    assert not marker.exists(), "the call outlived its grace period"
    after = await _pids(registry)
    assert len(after - before) == 1, "exactly the stubborn call's worker was replaced"


async def test_summaries_task_settings_and_source_reach_the_registry(registry: Registry) -> None:
    calc = await registry.call("calc", {"a": 2, "op": "add", "b": 3})
    assert calc.structured == 5
    assert calc.summary == "Calculating: 2 add 3"
    repeat = await registry.call("repeat", {"text": "ab", "times": 3})
    assert repeat.structured == "ababab"
    assert repeat.summary == "Repeating 'ab' 3 times"
    tool = registry.get("research")
    assert tool.spec.isolation == "process"
    assert tool.spec.task_support == "required"
    assert tool.meta is not None and tool.meta.task_start == "tool"
    assert "async def research" in (tool.source_code or "")


HOLDER = """
import sys, threading, time
from nexus_jupyter import Registry

reg = Registry()
reg.watch(sys.argv[1], isolation="process")
while "spin" not in reg.names():
    time.sleep(0.01)
threading.Thread(target=reg.call_sync, args=("hold_gil", {}), daemon=True).start()
threading.Thread(target=reg.call_sync, args=("spin", {}), daemon=True).start()
print("calling", flush=True)
threading.Event().wait()
"""

GIL_TOOLS = '''import re

from nexus_jupyter import tool


@tool
def hold_gil() -> bool:
    """Backtracks for hours inside one C call (holds the GIL)."""
    return re.match(r"(a+)+$", "a" * 40 + "!") is not None


@tool
def spin() -> None:
    """Loops forever."""
    while True:
        pass
'''


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")
def test_workers_end_with_their_server_even_inside_a_c_call(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "gil.py").write_text(GIL_TOOLS)
    host = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert host.stdout is not None and host.stdout.readline().strip() == "calling"
        workers: set[int] = set()
        deadline = time.monotonic() + 20
        while len(workers) < 2 and time.monotonic() < deadline:
            workers = _children(host.pid)
            time.sleep(0.05)
        assert len(workers) == 2, workers
        # both calls are inside their tools: each worker has burnt a CPU second since
        start = {w: _cpu_ticks(w) for w in workers}
        while time.monotonic() < deadline + 20:
            if all(_cpu_ticks(w) - start[w] >= 100 for w in workers):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the tools never started in their workers")
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
        if host.stdout is not None:
            host.stdout.close()
    deadline = time.monotonic() + 5
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers), "a worker outlived its server"
