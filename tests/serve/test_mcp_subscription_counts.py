"""Upstream resource subscriptions stay counted right when subscribes race: two sessions that
subscribe to one upstream URI at once forward it once, and the first to leave does not end
the other's. A session that ends while its subscribe is forwarded leaves no subscription."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace
from typing import Any

from nexus_jupyter.serve.mcp_subscriptions import ResourceSubscriptions


class _Upstream:
    """An upstream resource whose subscribe answers when ``release`` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls: list[tuple[str, bool]] = []

    async def watch(self, uri: str, on: bool) -> None:
        self.calls.append((uri, on))
        if on:
            await self.release.wait()


class _Catalog:
    def __init__(self, upstream: _Upstream) -> None:
        self.found = SimpleNamespace(remote=True, watch=upstream.watch)

    def resources(self) -> list[Any]:
        return []

    def templates(self) -> list[Any]:
        return []

    def find_resource(self, uri: str) -> Any:
        return self.found


class _Connection:
    """What the subscriptions use of the SDK's connection: a key, and its exit stack."""

    def __init__(self) -> None:
        self.exit_stack = contextlib.ExitStack()


async def _forwarded(upstream: _Upstream) -> None:
    """Until the first subscribe is at the upstream (a deadline, not a guess at timing)."""
    for _ in range(250):
        if upstream.calls:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("no subscribe reached the upstream within 5 s")


def _session() -> Any:
    return SimpleNamespace(session=SimpleNamespace(_connection=_Connection()))


async def test_two_racing_subscribes_forward_once_and_count_two() -> None:
    upstream = _Upstream()
    subs = ResourceSubscriptions(_Catalog(upstream), SimpleNamespace(publish=lambda *a: None))
    params = SimpleNamespace(uri="demo://r/1")
    first, second = _session(), _session()
    both = asyncio.gather(subs.subscribe(first, params), subs.subscribe(second, params))
    await _forwarded(upstream)
    for _ in range(5):
        await asyncio.sleep(0)  # the second subscribe reaches the URI's forward too
    upstream.release.set()
    await asyncio.wait_for(both, 5)
    assert upstream.calls == [("demo://r/1", True)]
    await subs.unsubscribe(first, params)
    assert upstream.calls == [("demo://r/1", True)]  # the second still follows it
    await subs.unsubscribe(second, params)
    assert upstream.calls[-1] == ("demo://r/1", False)


async def test_a_session_that_ends_during_its_subscribe_leaves_none() -> None:
    upstream = _Upstream()
    subs = ResourceSubscriptions(_Catalog(upstream), SimpleNamespace(publish=lambda *a: None))
    params = SimpleNamespace(uri="demo://r/2")
    session = _session()
    pending = asyncio.ensure_future(subs.subscribe(session, params))
    await _forwarded(upstream)
    session.session._connection.exit_stack.close()  # the client went away meanwhile
    upstream.release.set()
    await asyncio.wait_for(pending, 5)
    for _ in range(100):  # the end-of-session unsubscribe runs in the background
        if upstream.calls[-1][1] is False:
            break
        await asyncio.sleep(0.02)
    assert upstream.calls[-1] == ("demo://r/2", False)
