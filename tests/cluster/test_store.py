"""The cluster's Redis layout and ``nexus-tools publish``, against a real redis-server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
from pathlib import Path

import pytest
from rig import free_port, run_cli

from nexus_jupyter.cluster import ClusterAddress, ClusterStore
from nexus_jupyter.core.errors import ConfigError

ADD = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''


def test_address_parsing_and_a_clear_error_for_anything_else() -> None:
    address = ClusterAddress.parse("redis://:secret@10.0.0.5:6380/2?prefix=team")
    assert address.prefix == "team"
    assert address.redis_url == "redis://:secret@10.0.0.5:6380/2"
    assert address.shown() == "redis://10.0.0.5:6380/2"  # no password in logs
    assert ClusterAddress.parse(address.url) == address
    with pytest.raises(ConfigError, match=r"not a Redis URL; use redis://HOST:PORT/N"):
        ClusterAddress.parse("http://127.0.0.1:6379")


async def test_publishing_the_current_content_again_is_a_no_op(redis_url: str) -> None:
    store = ClusterStore(ClusterAddress.parse(redis_url + "?prefix=noop"))
    try:
        first, new = await store.publish_file("a.py", "sha1", "text 1", "r1")
        again, new_again = await store.publish_file("a.py", "sha1", "text 1", "r2")
        second, _ = await store.publish_file("a.py", "sha2", "text 2", "r2")
        assert (new, new_again, again) == (True, False, first)
        assert second == first + 1
        history = await store.history("a.py")
        assert [(v.sha, v.origin) for v in history] == [("sha1", "r1"), ("sha2", "r2")]
        assert (await store.current("a.py")).text == "text 2"  # type: ignore[union-attr]
    finally:
        await store.close()


def run_publish(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("publish", *args)


def test_publish_command_stores_a_tool_file_and_refuses_a_broken_one(
    redis_url: str, tmp_path: Path
) -> None:
    good = tmp_path / "add.py"
    good.write_text(ADD)
    url = redis_url + "?prefix=cli"
    done = run_publish(str(good), "--cluster", url)
    assert done.returncode == 0, done.stderr
    assert "published add.py as revision 1" in done.stdout
    assert "already the current version" in run_publish(str(good), "--cluster", url).stdout
    broken = tmp_path / "broken.py"
    broken.write_text("from nexus_jupyter import tool\n\n@tool\ndef f(:\n")
    refused = run_publish(str(broken), "--cluster", url)
    assert refused.returncode == 1
    assert "broken.py does not load" in refused.stderr and "nothing was published" in refused.stderr
    files = asyncio.run(_files(url))
    assert files == {"add.py"}


async def _files(url: str) -> set[str]:
    store = ClusterStore(ClusterAddress.parse(url))
    try:
        return set(await store.files())
    finally:
        await store.close()


def test_publish_command_says_how_to_fix_an_unreachable_cluster(tmp_path: Path) -> None:
    file = tmp_path / "add.py"
    file.write_text(ADD)
    done = run_publish(str(file), "--cluster", f"redis://127.0.0.1:{free_port()}/0")
    assert done.returncode == 1
    assert "Cannot reach the cluster's Redis at redis://127.0.0.1:" in done.stderr
    assert "check that redis-server runs there" in done.stderr
    missing = run_publish(str(file), "--root", str(tmp_path))
    assert missing.returncode == 2 and "--cluster redis://HOST:PORT/N" in missing.stderr


def test_a_joined_registry_shows_redis_going_away_and_coming_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from rig import RedisProcess
    from waiting import wait_until

    from nexus_jupyter import Registry
    from nexus_jupyter.cluster import ClusterReplica

    caplog.set_level(logging.INFO, logger="nexus_jupyter")
    server = RedisProcess(tmp_path / "redis")
    server.start()
    folder = tmp_path / "tools"
    reg = Registry.default(root=tmp_path, mcp=False)
    member = ClusterReplica.join(reg, server.url, folder)

    def cluster_error() -> str | None:
        return next(s.error for s in reg.sources() if s.name == "cluster")

    try:
        assert member.node.wait_connected(10)
        assert cluster_error() is None
        server.stop()
        wait_until(reg, lambda: cluster_error() is not None, timeout=10)
        assert f"Redis at {server.url} is unreachable" in str(cluster_error())
        assert reg.call_sync("cluster_status", {}).structured["state"] == "degraded"
        server.start()
        wait_until(reg, lambda: cluster_error() is None, timeout=10)
        assert member.status["state"] == "connected"
        # warnings are for trouble: the first connection is info; the outage is one warning
        # (the cluster source's, through the registry: no face here says it otherwise),
        # whatever the node, bus or store saw on the way; the recovery is its pair, at info
        said = [(r.levelname, r.getMessage()) for r in caplog.records]
        assert ("INFO", f"cluster: connected to Redis at {server.url}") in said
        warned = [m for lvl, m in said if lvl == "WARNING"]
        assert len(warned) == 1, warned
        assert warned[0].startswith(f"source cluster failed to load: Redis at {server.url} is ")
        back = [m for lvl, m in said if lvl == "INFO" and m.startswith("source cluster:")]
        assert len(back) == 1 and back[0].startswith(
            f"source cluster: Redis at {server.url} is back; "
        )
    finally:
        member.close()
        reg.close()
        server.stop()


async def test_redis_tasks_are_listed_per_requestor_and_changes_reach_every_replica(
    redis_url: str,
) -> None:
    from nexus_jupyter.cluster.tasks import RedisTaskStore
    from nexus_jupyter.core.tasks.store import TaskRecord

    address = ClusterAddress.parse(redis_url + "?prefix=tasklist")
    one, other = RedisTaskStore(address), RedisTaskStore(address)
    heard: list[tuple[str, str]] = []
    cancelled: list[str] = []
    both_heard, any_heard = asyncio.Event(), asyncio.Event()

    def hear(record: TaskRecord) -> None:
        heard.append((record.task_id, record.status))
        any_heard.set()
        if record.status == "cancelled":
            both_heard.set()

    other.watch_changes(hear)
    other.watch_cancellations(cancelled.append)
    try:
        other.follow_changes()
        async with asyncio.timeout(10):  # until the replica's subscription is live
            while not heard:
                await one.create(TaskRecord.new("probe", owner="probe"))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(any_heard.wait(), 0.5)
        heard.clear()
        made = [
            TaskRecord.new("slow", owner="alice", session="s1", ttl_ms=60_000) for _ in range(3)
        ]
        for record in made:
            await one.create(record)
        await one.create(TaskRecord.new("slow", owner="alice", session="s2"))
        await one.transition(made[0].task_id, status="completed", result={"content": []})
        await one.transition(made[1].task_id, status="cancelled")
        await asyncio.wait_for(both_heard.wait(), 10)
        assert (made[0].task_id, "completed") in heard
        assert cancelled == [made[1].task_id]
        listed = await other.list_tasks("alice", "s1")
        assert [r.task_id for r in listed] == [r.task_id for r in made]
        await one.redis.delete(one.store.task_key(made[2].task_id))  # gone: dropped from the list
        assert [r.task_id for r in await other.list_tasks("alice", "s1")] == [
            r.task_id for r in made[:2]
        ]
    finally:
        await one.close()
        await other.close()
