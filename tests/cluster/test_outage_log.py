"""What a replica's operator reads on stderr while Redis is away: one line per outage, not
one per reconnection attempt, and sentences that read as sentences."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from rig import NEX_YAML, RedisProcess, missing_programs
from serving import serve_http
from test_tokens import status_with

from nexus_jupyter.cluster.store import ClusterAddress, follow_channel
from nexus_jupyter.cluster.tokens import RETRY_S, RedisTokenStore


def _dead_address() -> ClusterAddress:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return ClusterAddress.parse(f"redis://127.0.0.1:{port}/0?prefix=outage")


async def test_a_lost_channel_is_said_once_per_outage(caplog: pytest.LogCaptureFixture) -> None:
    async def deliver(_data: str) -> None:
        return None

    attempts: list[object] = []
    third = asyncio.Event()

    def on_state(store: object) -> None:  # None after each failed attempt
        attempts.append(store)
        if len(attempts) >= 3:
            third.set()

    caplog.set_level(logging.INFO, logger="nexus_jupyter.cluster.store")
    task = asyncio.ensure_future(
        follow_channel(_dead_address(), "bus_channel", deliver, on_state=on_state)
    )
    await asyncio.wait_for(third.wait(), 10)  # three failed attempts, 0.2 + 0.4 s apart
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    lost = [r.getMessage() for r in caplog.records if r.name == "nexus_jupyter.cluster.store"]
    assert len(lost) == 1, lost
    # the Redis channel and server are named, not the attribute that holds the name
    assert "outage:bus" in lost[0] and "bus_channel" not in lost[0]
    assert "redis://127.0.0.1:" in lost[0]


def test_the_token_store_warning_reads_as_one_sentence(caplog: pytest.LogCaptureFixture) -> None:
    store = RedisTokenStore(_dead_address(), timeout=0.2)
    with caplog.at_level(logging.WARNING, logger="nexus_jupyter.cluster.tokens"):
        assert store.lookup("nxt_whatever") is None
    (line,) = [r.getMessage() for r in caplog.records]
    assert "answering from the last copy" in line and ".;" not in line


def test_a_node_without_a_replica_warns_about_its_outage(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """ClusterNode used alone has no ``cluster`` source to say the outage for it: it says it
    itself, once (later attempts are DEBUG)."""
    from waiting import wait_until

    from nexus_jupyter import Registry
    from nexus_jupyter.cluster import ClusterNode

    caplog.set_level(logging.DEBUG, logger="nexus_jupyter.cluster")
    address = _dead_address()
    with Registry(search="keyword") as reg:
        node = ClusterNode(reg, address, tmp_path / "tools")
        node.start()
        try:
            wait_until(reg, lambda: node.state == "degraded", timeout=10)
            # a later attempt (0.2 s on) is a DEBUG line, not a second warning
            still = "still unreachable"
            deadline = time.monotonic() + 10
            while not any(still in r.getMessage() for r in caplog.records):
                assert time.monotonic() < deadline, "no second attempt within 10 s"
                time.sleep(0.05)
        finally:
            node.stop()
    warned = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warned) == 1, warned
    assert warned[0].startswith(f"cluster: Redis at {address.shown()} is unreachable (")
    assert "serving this replica's tools locally and retrying" in warned[0]


def test_a_replica_token_store_leaves_the_outage_to_the_cluster_source(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The token store a replica hands serve (its own Redis, however the URL spells the
    database) logs the outage at DEBUG; one elsewhere, or the CLI's, still warns."""
    from nexus_jupyter import Registry
    from nexus_jupyter.cluster import ClusterReplica

    address = _dead_address()
    with Registry(search="keyword") as reg:
        member = ClusterReplica.join(reg, address.url, tmp_path / "tools")
        try:
            bare = address.url.replace("/0?", "?")  # database 0 either way
            store = member.token_store(bare)
            assert store is not None and member.token_store(str(tmp_path / "t.json")) is None
            assert member.token_store(address.url.replace("prefix=outage", "prefix=x")) is None
            with caplog.at_level(logging.DEBUG, logger="nexus_jupyter.cluster.tokens"):
                store.lookup("nxt_whatever")
                RedisTokenStore(address, timeout=0.2).lookup("nxt_whatever")
        finally:
            member.close()
    levels = [r.levelname for r in caplog.records if r.name == "nexus_jupyter.cluster.tokens"]
    assert levels == ["DEBUG", "WARNING"]


def test_tokens_survive_a_redis_that_lost_them_and_a_revocation_stays(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A Redis restarted without persistence (here: flushed) loses the token hash; a replica
    that held the tokens writes them back and says so once. Revoking every token is not a
    loss: nothing comes back."""
    import redis

    url = redis_url + "?prefix=wiped"
    cli = RedisTokenStore.at(url)  # `nexus-tools tokens` on the operator's machine
    replica = RedisTokenStore.at(url)
    _, secret = cli.create("alice")
    assert replica.lookup(secret) is not None
    redis.Redis.from_url(redis_url).flushdb()
    replica._fresh_until = 0.0  # the next request re-reads the store
    with caplog.at_level(logging.WARNING, logger="nexus_jupyter.cluster.tokens"):
        assert replica.lookup(secret) is not None
        assert replica.lookup(secret) is not None
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1 and "wrote back the 1 token(s)" in said[0], said
    assert "appendonly yes" in said[0]
    assert [t.name for t in cli.tokens()] == ["alice"]  # every replica and the CLI see it
    assert cli.revoke("alice")
    replica._fresh_until = 0.0
    assert replica.lookup(secret) is None
    assert cli.tokens() == []


def test_a_copy_older_than_the_loss_is_not_written_back(
    redis_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A replica that had no request for a while holds an old copy: a token revoked since
    then must not come back when Redis later loses the store. Nothing is written back from
    a copy that old (the tokens are lost, as without a replica, rather than resurrected)."""
    import redis

    from nexus_jupyter.cluster import tokens

    url = redis_url + "?prefix=stale"
    cli = RedisTokenStore.at(url)
    idle = RedisTokenStore.at(url)
    _, secret = cli.create("alice")
    assert idle.lookup(secret) is not None  # its copy holds alice
    assert cli.revoke("alice")  # later alice is revoked,
    redis.Redis.from_url(redis_url).flushdb()  # then Redis restarts without persistence,
    # and the idle replica's next request comes an hour after its last one
    monkeypatch.setattr(tokens, "time", _Later(3600.0))
    with caplog.at_level(logging.WARNING, logger="nexus_jupyter.cluster.tokens"):
        assert idle.lookup(secret) is None
        assert idle.lookup(secret) is None
    assert cli.tokens() == []
    (said,) = [r.getMessage() for r in caplog.records]
    assert "too old to write back" in said and "tokens create" in said


class _Later:
    """The ``time`` module, with the monotonic clock ``by`` seconds ahead."""

    def __init__(self, by: float) -> None:
        self.by = by

    def monotonic(self) -> float:
        return time.monotonic() + self.by

    def time(self) -> float:
        return time.time()


def _lines(server: Any, start: int, words: str) -> list[str]:
    return [line for line in server.output[start:] if words in line]


def _wait_for(what: str, done: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.05)


def test_a_redis_outage_under_serve_is_one_warning_and_one_line_when_back(
    tmp_path: Path,
) -> None:
    """The node, the cluster source, the bus, the token store each used to say the same
    outage in their own words (four warnings); the operator now reads one line when Redis
    goes (what waits, that the replica keeps serving, that it reconnects) and one when it is
    back, while requests keep coming and a tool file is saved meanwhile."""
    import redis

    if missing_programs():
        pytest.skip(f"{missing_programs()} not installed: run `make cluster-deps` (Debian)")
    server = RedisProcess(tmp_path / "redis")
    server.start()
    try:
        _, secret = RedisTokenStore.at(server.url).create("alice")
        project = tmp_path / "replica"
        (project / "tools" / "dynamic").mkdir(parents=True)
        (project / "nex.yaml").write_text(NEX_YAML)
        with (
            redis.Redis(port=server.port) as client,
            serve_http(project, "--cluster", server.url, "--auth", "tokens") as served,
        ):
            assert status_with(served.url, secret) == 200
            _wait_for("node on Redis", lambda: b"nexus:published" in client.pubsub_channels())
            start = len(served.output)
            server.stop()
            _wait_for("outage line", lambda: _lines(served, start, "unreachable"))
            (project / "tools" / "dynamic" / "late.py").write_text(LATE_TOOL)
            # requests meanwhile: the token store answers from its copy, more than RETRY_S
            # apart, so a warning per retry would show
            for _ in range(3):
                assert status_with(served.url, secret) == 200
                time.sleep(RETRY_S + 0.2)
            down = [line for line in served.output[start:] if "warn" in line.lower()]
            assert len(down) == 1, "".join(served.output[start:])
            assert down[0].startswith(f"nexus-tools serve: warning: cluster: Redis at {server.url}")
            for part in ("keeps serving its own tools", "waits until Redis is back", "reconnects"):
                assert part in down[0]
            back_from = len(served.output)
            server.start()
            _wait_for("line when back", lambda: _lines(served, back_from, "is back"))
            _wait_for("pending save", lambda: client.hexists("nexus:files", "late.py"))
            assert status_with(served.url, secret) == 200
            # besides: Redis came back empty, and the tokens were written back (said once,
            # see test_tokens_survive_a_redis_that_lost_them_and_a_revocation_stays)
            said = [line for line in served.output[back_from:] if "wrote back" not in line]
            assert len(said) == 1, "".join(served.output[back_from:])
            (back,) = said
            assert back.startswith(f"nexus-tools serve: cluster: Redis at {server.url} is back")
            # counted again now that the outage is over: a warning that came late (after the
            # first count) would show here (the tokens written back are another matter)
            later = [line for line in served.output[start:] if "wrote back" not in line]
            down = [line for line in later if "warn" in line.lower()]
            assert len(down) == 1, "".join(served.output[start:])
    finally:
        server.stop()


LATE_TOOL = '''from nexus_jupyter import tool


@tool
def late(x: int) -> int:
    """Saved while Redis was away."""
    return x
'''
