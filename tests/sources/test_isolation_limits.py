"""Tool files in worker processes under pressure (a review's findings, each reproduced
first): calls that time out while others queue, tools that start processes or print from
them, values that are not plain data, a save while every worker is busy, a file that no
longer loads in a fresh worker. Real worker processes, a real folder, the public API."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from waiting import wait_until  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry

pytestmark = pytest.mark.timeout(90)

TOOLS = '''import os
import subprocess
import sys
import time
from dataclasses import dataclass

from pydantic import BaseModel

from nexus_jupyter import tool


@tool
def fast() -> int:
    """Answers at once."""
    return 1


@tool
def slow() -> int:
    """Sleeps past any timeout the tests give it."""
    time.sleep(30)
    return 2


@tool
def shell_echo() -> str:
    """Runs a child that prints to its stdout."""
    subprocess.run(["echo", "hello from a child"], check=True)
    return "done"


@tool
def leave_a_child(pidfile: str) -> str:
    """Starts a long child, writes its pid, then hangs."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(pidfile, "w") as handle:
        handle.write(str(child.pid))
    time.sleep(60)
    return "never"


class Exploding:
    """Unpickling it would end the process that unpickles it."""

    def __reduce__(self):
        return (os._exit, (7,))


@tool
def hostile() -> object:
    """Returns a value whose unpickling runs code."""
    return Exploding()


@dataclass
class Point:
    x: int
    y: int


class Model(BaseModel):
    name: str
    size: int


@tool
def point() -> Point:
    """Returns a dataclass of this file."""
    return Point(1, 2)


@tool
def model() -> Model:
    """Returns a pydantic model of this file."""
    return Model(name="a", size=3)


def _describe(text: str, times: int) -> str:
    return f"Repeating {text!r} {times} times"


@tool(summary=_describe)
def repeat(text: str, times: int = 2) -> str:
    """A summary function, called with a default the call left out."""
    return text * times
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "tools"
    root.mkdir()
    (root / "limits.py").write_text(TOOLS)
    return root


@pytest.fixture
def registry(folder: Path):
    reg = Registry(search="keyword")
    source = reg.watch(folder, isolation="process", versions=False)
    assert source.wait_ready()
    try:
        yield reg
    finally:
        reg.close()


def _ends_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_calls_queued_behind_timed_out_ones_all_answer(registry: Registry) -> None:
    assert [r.structured for r in await asyncio.gather(*[registry.call("fast")] * 2)] == [1, 1]
    slow = [asyncio.ensure_future(registry.call("slow", {}, timeout=1.0)) for _ in range(2)]
    await asyncio.sleep(0.3)  # both workers are taken by the slow calls now
    queued = [asyncio.ensure_future(registry.call("fast")) for _ in range(8)]
    timed_out = await asyncio.gather(*slow)
    assert all(r.error_type == "TimeoutError" for r in timed_out)
    done, pending = await asyncio.wait(queued, timeout=20)
    assert not pending, f"{len(pending)} of 8 queued calls never answered"
    assert [t.result().structured for t in done] == [1] * 8


async def test_a_tools_child_process_cannot_touch_the_channel(registry: Registry) -> None:
    result = await registry.call("shell_echo")
    assert result.structured == "done", result.error
    assert (await registry.call("fast")).structured == 1


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")
async def test_a_timeout_stops_the_processes_a_tool_started(
    registry: Registry, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    result = await registry.call("leave_a_child", {"pidfile": str(pidfile)}, timeout=2.0)
    assert result.error_type == "TimeoutError"
    child = int(pidfile.read_text())
    assert await asyncio.to_thread(_ends_within, child, 5), "the tool's child outlived the timeout"
    answered = await asyncio.wait_for(registry.call("fast"), 10)
    assert answered.structured == 1


async def test_a_value_whose_unpickling_runs_code_never_runs_in_the_server(
    registry: Registry,
) -> None:
    result = await registry.call("hostile")
    # the server is still here to say so; the value crossed as plain data (its repr)
    assert "Exploding" in str(result.structured or result.error)
    assert (await registry.call("fast")).structured == 1


async def test_a_tools_own_dataclass_or_model_crosses_as_its_structured_result(
    registry: Registry,
) -> None:
    assert (await registry.call("point")).structured == {"x": 1, "y": 2}
    assert (await registry.call("model")).structured == {"name": "a", "size": 3}


async def test_a_summary_function_gets_the_defaults_the_call_left_out(
    registry: Registry,
) -> None:
    result = await registry.call("repeat", {"text": "ab"})
    assert result.structured == "abab"
    assert result.summary == "Repeating 'ab' 2 times"


async def test_a_save_is_loaded_while_every_worker_runs_a_long_call(
    registry: Registry, folder: Path
) -> None:
    slow = [asyncio.ensure_future(registry.call("slow", {}, timeout=20)) for _ in range(2)]
    await asyncio.sleep(0.5)
    started = time.monotonic()
    (folder / "extra.py").write_text(
        'from nexus_jupyter import tool\n\n\n@tool\ndef extra() -> int:\n    """New."""\n'
        "    return 5\n"
    )
    await asyncio.to_thread(wait_until, registry, lambda: "extra" in registry, 10)
    assert time.monotonic() - started < 5, "the save waited for the long calls"
    for call in slow:
        call.cancel()
    await asyncio.gather(*slow, return_exceptions=True)


async def test_a_fresh_worker_that_cannot_load_the_file_again_says_why(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    flag = tmp_path / "broken"
    (folder / "fragile.py").write_text(
        "import os\n"
        "from nexus_jupyter import tool\n\n"
        f"if os.path.exists({str(flag)!r}):\n"
        "    raise RuntimeError('the environment changed')\n\n\n"
        "@tool\n"
        "def crash() -> int:\n"
        '    """Ends its worker."""\n'
        "    os._exit(3)\n\n\n"
        "@tool\n"
        "def fine() -> int:\n"
        '    """Answers."""\n'
        "    return 1\n"
    )
    reg = Registry(search="keyword")
    reg.watch(folder, isolation="process", versions=False).wait_ready()
    try:
        first, second = await asyncio.gather(reg.call("crash"), reg.call("crash"))
        assert first.is_error and second.is_error  # both workers ended: fresh ones follow
        flag.write_text("")
        result = await reg.call("fine")
        assert result.is_error
        assert "loading fragile.py again" in str(result.error)
        assert "the environment changed" in str(result.error)
    finally:
        reg.close()
