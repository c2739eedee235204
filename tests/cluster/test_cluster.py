"""Three ``nexus-tools serve --cluster`` replicas on a real redis-server behind real nginx.

The tests share one cluster and run in file order: publication, notifications, the bus,
approvals, audit, then the disruptive ones (Redis restarted empty, a replica killed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from raw_jsonrpc import RawMcp  # tests/ is on sys.path (rootdir conftest)
from rig import ClusterRig, cluster_rig, missing_programs, run_cli

from nexus_jupyter.cluster import ClusterAddress, ClusterReplica, ClusterStore
from nexus_jupyter.cluster.bus import RedisSubscriptionBus

# A tool published on one replica answers through the balancer on all within 300 ms (the
# issue asks this test to check it), and later tests use that tool: the module runs alone.
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timing, pytest.mark.timeout(180)]

PUBLISH_DEADLINE_S = 0.3
# Tool files run in worker processes of the replica that loaded them (`serve` isolates them
# by default), so a tool names its replica by its parent's pid: os.getppid().

PID_TOOL = '''import os

from nexus_jupyter import tool


@tool
def {name}() -> int:
    """{doc}"""
    return os.getppid()
'''

RISKY_TOOL = '''import os

from nexus_jupyter import tool


@tool(permission="danger_full_access")
def risky() -> int:
    """A tool that asks for approval before it runs."""
    return os.getppid()
'''

TASK_TOOL = '''import asyncio
import os
from pathlib import Path

from nexus_jupyter import tool


@tool(task=True)
async def crunch(seconds: float, marker: str = "") -> dict:
    """Work a while as a task; then leave a marker file and say which process worked."""
    await asyncio.sleep(seconds)
    if marker:
        Path(marker).write_text(str(os.getppid()))
    return {"pid": os.getppid()}
'''

SLOW_TOOL = '''import os
import time

from nexus_jupyter import tool


@tool
def slow(seconds: float) -> int:
    """Sleep, then say which process answered."""
    time.sleep(seconds)
    return os.getppid()
'''


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterRig]:
    missing = missing_programs()
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: run `make cluster-deps` (Debian)")
    with cluster_rig(tmp_path_factory.mktemp("cluster"), replicas=3) as running:
        yield running


def text(result: types.CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def answering_pid(client: mcp.Client, name: str, arguments: Any = None) -> int | None:
    """The pid a call answered from, or ``None`` when the tool is unknown there or failed."""
    try:
        result = await client.call_tool(name, arguments or {})
    except Exception:
        return None
    return None if result.is_error else int(text(result))


def publish(file: Path, url: str, *extra: str) -> Any:
    done = run_cli("publish", str(file), "--cluster", url, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def post(url: str, method: str, params: dict[str, Any]) -> Any:
    """One request of the tasks extension's wire, to exactly the replica at ``url``."""
    from nexus_jupyter.sources.mcp_tasks import TASKS_EXTENSION

    raw = RawMcp(url, extensions=[TASKS_EXTENSION])
    try:
        return await asyncio.to_thread(raw, method, params)
    finally:
        raw.close()


def live_pids(rig: ClusterRig) -> set[int]:
    return {r.proc.pid for r in rig.replicas if r.proc.poll() is None}


async def answered_by_all(rig: ClusterRig, name: str, timeout: float = 5.0) -> bool:
    """Call ``name`` through the balancer until every live replica has answered it."""
    answered: set[int] = set()
    deadline = time.monotonic() + timeout
    async with mcp.Client(rig.balancer_url) as lb:
        while answered != live_pids(rig) and time.monotonic() < deadline:
            pid = await answering_pid(lb, name)
            if pid is not None:
                answered.add(pid)
    return answered == live_pids(rig)


async def test_tool_created_on_one_replica_is_callable_through_the_balancer_on_all(
    rig: ClusterRig,
) -> None:
    """Three tools created on one replica, each timed from the create's answer until every
    replica has answered a call of it through the balancer: the median is within 300 ms."""
    code = "import os\nreturn os.getppid()"
    took: dict[str, float] = {}
    async with mcp.Client(rig.replicas[0].url) as first, mcp.Client(rig.balancer_url) as lb:
        for name in ("whoami", "whoami_too", "whoami_also"):
            created = await first.call_tool(
                "create_dynamic_tool", {"name": name, "description": "Which pid.", "code": code}
            )
            start = time.perf_counter()
            assert not created.is_error, text(created)
            answered: set[int] = set()
            while answered != live_pids(rig) and time.perf_counter() - start < 5:
                pid = await answering_pid(lb, name)
                if pid is not None:
                    answered.add(pid)
            took[name] = time.perf_counter() - start
            assert answered == live_pids(rig), (name, answered)
    print(
        "created on one replica, answered by all:",
        {k: f"{v * 1000:.0f} ms" for k, v in took.items()},
    )
    median = sorted(took.values())[1]
    assert median < PUBLISH_DEADLINE_S, f"median {median * 1000:.0f} ms: {took}"
    for replica in rig.replicas:  # the files themselves, in every replica's own folder
        assert all((replica.folder / f"{name}.py").is_file() for name in took)


async def test_publish_command_notifies_legacy_and_listen_clients_on_every_replica(
    rig: ClusterRig, tmp_path: Path
) -> None:
    legacy_told = [asyncio.Event() for _ in rig.replicas]

    def handler(i: int) -> Any:
        async def on_message(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                legacy_told[i].set()

        return on_message

    file = tmp_path / "greet.py"
    file.write_text(PID_TOOL.format(name="greet", doc="Greet from a pid."))
    async with contextlib.AsyncExitStack() as stack:
        legacy = [
            await stack.enter_async_context(
                mcp.Client(r.url, mode="legacy", message_handler=handler(i))
            )
            for i, r in enumerate(rig.replicas)
        ]
        modern = [await stack.enter_async_context(mcp.Client(r.url)) for r in rig.replicas]
        streams = [
            await stack.enter_async_context(c.listen(tools_list_changed=True)) for c in modern
        ]
        for client in legacy:
            await client.list_tools()
        published = await asyncio.to_thread(publish, file, rig.redis.url)
        assert published["new"] is True
        events = await asyncio.wait_for(asyncio.gather(*(anext(aiter(s)) for s in streams)), 5)
        assert {type(e).__name__ for e in events} == {"ToolsListChanged"}
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in legacy_told)), 5)
        for client in legacy:  # told after the tool is there, not before
            assert "greet" in {t.name for t in (await client.list_tools()).tools}
    # a second version: the history keeps both
    file.write_text(PID_TOOL.format(name="greet", doc="Greet from a pid, again."))
    second = await asyncio.to_thread(publish, file, rig.redis.url)
    assert second["revision"] > published["revision"]
    history = await asyncio.to_thread(publish, file, rig.redis.url, "--history")
    assert [v["revision"] for v in history][-2:] == [published["revision"], second["revision"]]


async def test_a_listen_event_published_anywhere_reaches_every_replica(rig: ClusterRig) -> None:
    from mcp.server.subscriptions import ToolsListChanged

    bus = RedisSubscriptionBus(ClusterAddress.parse(rig.redis.url), origin="test")
    await bus.start()
    try:
        async with contextlib.AsyncExitStack() as stack:
            modern = [await stack.enter_async_context(mcp.Client(r.url)) for r in rig.replicas]
            streams = [
                await stack.enter_async_context(c.listen(tools_list_changed=True)) for c in modern
            ]
            assert await bus.wait_connected(5)
            await bus.publish(ToolsListChanged())
            events = await asyncio.wait_for(asyncio.gather(*(anext(aiter(s)) for s in streams)), 5)
            assert all(isinstance(e, ToolsListChanged) for e in events)
    finally:
        await bus.close()


async def test_approve_always_on_one_member_is_honoured_by_every_replica(
    rig: ClusterRig, tmp_path: Path
) -> None:
    from nexus_jupyter import Registry

    file = tmp_path / "risky.py"
    file.write_text(RISKY_TOOL)
    await asyncio.to_thread(publish, file, rig.redis.url)
    async with mcp.Client(rig.balancer_url) as lb:
        refused = None
        for _ in range(50):  # until it is loaded: then it asks, and no one can answer
            try:
                refused = await lb.call_tool("risky", {})
            except Exception:
                await asyncio.sleep(0.02)
                continue
            break
        assert refused is not None and refused.is_error and "approv" in text(refused)
        # A notebook (or any registry) joined to the cluster approves it "always".
        project = tmp_path / "member"
        (project / "tools" / "dynamic").mkdir(parents=True)
        reg = Registry.default(root=project, mcp=False)
        member = ClusterReplica.join(reg, rig.redis.url, project / "tools" / "dynamic")
        try:
            assert await asyncio.to_thread(member.node.wait_connected, 10)
            spec = reg.get("risky").spec
            reg.policy.remember(spec)
            assert await answered_by_all(rig, "risky")
        finally:
            member.close()
            reg.close()


async def test_a_tool_file_saved_by_a_joined_notebook_registry_reaches_every_replica(
    rig: ClusterRig, tmp_path: Path
) -> None:
    from nexus_jupyter import Registry

    project = tmp_path / "notebook"
    folder = project / "tools" / "dynamic"
    folder.mkdir(parents=True)
    reg = Registry.default(root=project, mcp=False)  # what a kernel's registry is
    member = ClusterReplica.join(reg, rig.redis.url, folder)
    try:
        assert await asyncio.to_thread(member.node.wait_connected, 10)
        assert (folder / "whoami.py").is_file()  # the cluster's files arrived here too
        # what `%tool export` does: a whole file written into the watched folder
        (folder / "exported.py").write_text(PID_TOOL.format(name="exported", doc="Exported."))
        assert await answered_by_all(rig, "exported", timeout=10)
        # a broken save never leaves the notebook
        (folder / "broken.py").write_text("from nexus_jupyter import tool\n\n@tool\ndef f(:\n")
        (folder / "later.py").write_text(PID_TOOL.format(name="later", doc="After the bad one."))
        store = ClusterStore(ClusterAddress.parse(rig.redis.url))
        try:
            deadline = time.monotonic() + 10
            while "later.py" not in await store.files():
                assert time.monotonic() < deadline, "later.py was not published"
                await asyncio.sleep(0.05)
            assert "broken.py" not in await store.files()
        finally:
            await store.close()
    finally:
        member.close()
        reg.close()


async def test_audit_stream_holds_the_calls_of_every_replica(rig: ClusterRig) -> None:
    store = ClusterStore(ClusterAddress.parse(rig.redis.url))
    try:
        deadline = time.monotonic() + 5
        replicas: set[str] = set()
        while time.monotonic() < deadline:
            records = await store.audit(last=1000)
            replicas = {r["replica"] for r in records if r["tool"] == "whoami"}
            if len(replicas) >= len(rig.replicas):
                break
            await asyncio.sleep(0.05)
        assert len(replicas) == len(rig.replicas)
        assert any(r["decision"] != "allowed" for r in records if r["tool"] == "risky")
    finally:
        await store.close()


async def test_a_task_started_on_one_replica_is_polled_and_cancelled_through_others(
    rig: ClusterRig, tmp_path: Path
) -> None:
    file = tmp_path / "crunch.py"
    file.write_text(TASK_TOOL)
    await asyncio.to_thread(publish, file, rig.redis.url)
    first, second, third = (r.url for r in rig.replicas)
    deadline = time.monotonic() + 10
    while True:  # until every replica has loaded it
        async with mcp.Client(rig.balancer_url) as lb:
            names = [{t.name for t in (await lb.list_tools()).tools} for _ in rig.replicas]
        if all("crunch" in n for n in names):
            break
        assert time.monotonic() < deadline
    marker = tmp_path / "finished"
    created = await post(
        first,
        "tools/call",
        {"name": "crunch", "arguments": {"seconds": 1.5, "marker": str(marker)}},
    )
    assert created["resultType"] == "task", created
    task_id = created["taskId"]
    assert (await post(second, "tasks/get", {"taskId": task_id}))["status"] == "working"
    await post(third, "tasks/cancel", {"taskId": task_id})
    assert (await post(second, "tasks/get", {"taskId": task_id}))["status"] == "cancelled"
    await asyncio.sleep(2.0)
    assert not marker.exists(), "the cancel through another replica did not stop the call"
    # one that finishes: started on the first, its result read through the third
    done = await post(first, "tools/call", {"name": "crunch", "arguments": {"seconds": 0.2}})
    deadline = time.monotonic() + 10
    while (got := await post(third, "tasks/get", {"taskId": done["taskId"]}))[
        "status"
    ] == "working":
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    assert got["status"] == "completed", got
    assert got["result"]["structuredContent"] == {"pid": rig.replicas[0].proc.pid}
    # and the SDK's task client through the balancer: its polls land on every replica
    from nexus_jupyter.sources.mcp_tasks import tasks_client_extension

    async def never(*_: Any) -> Any:
        raise AssertionError("no question expected")

    async with mcp.Client(rig.balancer_url, extensions=[tasks_client_extension(never)]) as lb:
        result = await lb.call_tool("crunch", {"seconds": 0.5})
        assert not result.is_error and result.structured_content["pid"] in live_pids(rig)


async def cluster_states(rig: ClusterRig) -> list[str]:
    states = []
    for replica in rig.replicas:
        async with mcp.Client(replica.url) as client:
            result = await client.call_tool("cluster_status", {})
            states.append(json.loads(text(result))["state"])
    return states


async def wait_states(rig: ClusterRig, wanted: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    states: list[str] = []
    while time.monotonic() < deadline:
        states = await cluster_states(rig)
        if set(states) == {wanted}:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"replicas are {states}, not all {wanted}")


async def test_redis_restarted_empty_loses_no_tool(rig: ClusterRig, tmp_path: Path) -> None:
    address = ClusterAddress.parse(rig.redis.url)
    store = ClusterStore(address)
    before = set(await store.files())
    await store.close()
    assert {"whoami.py", "greet.py", "risky.py"} <= before
    rig.redis.stop()
    await wait_states(rig, "degraded")
    async with mcp.Client(rig.replicas[0].url) as first:  # still serving, and publishing
        assert await answering_pid(first, "whoami") == rig.replicas[0].proc.pid
        created = await first.call_tool(
            "create_dynamic_tool",
            {
                "name": "offline",
                "description": "Made while Redis was away.",
                "code": "import os\nreturn os.getppid()",
            },
        )
        assert not created.is_error, text(created)
    await asyncio.to_thread(rig.redis.start)  # empty: no persistence
    await wait_states(rig, "connected")
    store = ClusterStore(address)
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            after = set(await store.files())
            if before | {"offline.py"} <= after:
                break
            await asyncio.sleep(0.05)
        assert before | {"offline.py"} <= after
    finally:
        await store.close()
    assert await answered_by_all(rig, "offline")


async def test_a_killed_replica_fails_only_its_own_in_flight_calls(
    rig: ClusterRig, tmp_path: Path
) -> None:
    file = tmp_path / "slow.py"
    file.write_text(SLOW_TOOL)
    await asyncio.to_thread(publish, file, rig.redis.url)
    victim = rig.replicas[2].proc.pid
    async with mcp.Client(rig.balancer_url) as lb:
        deadline = time.monotonic() + 5
        while await answering_pid(lb, "slow", {"seconds": 0}) is None:
            assert time.monotonic() < deadline
        calls = [
            asyncio.ensure_future(answering_pid(lb, "slow", {"seconds": 1.5})) for _ in range(6)
        ]
        await asyncio.sleep(0.7)
        rig.kill(2)
        answers = await asyncio.gather(*calls)
        survivors = live_pids(rig)
        done = [a for a in answers if a is not None]
        assert victim not in done
        assert set(done) <= survivors
        # round-robin sent 2 of the 6 to the victim: those fail, and only those
        assert 1 <= len(answers) - len(done) <= 2, answers
        after = [await answering_pid(lb, "slow", {"seconds": 0}) for _ in range(9)]
        assert all(a in survivors for a in after), after
