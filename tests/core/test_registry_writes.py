"""Writes cost what changed: deltas, add_many, the narrow publisher, per-subscriber queues."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from nexus_jupyter import Registry, RegistryChanged, Tool
from nexus_jupyter.core.registry.publisher import SourcePublisher


def make(name: str, result: Any = 0, description: str = "") -> Tool:
    return Tool.from_schema(
        name,
        description or f"returns {result!r}",
        {"type": "object", "properties": {}},
        lambda arguments: result,
    )


def functions(count: int) -> list[Any]:
    namespace: dict[str, Any] = {}
    exec(
        "\n".join(
            f"def tool_{i}(a: int, b: str = 'x') -> int:\n    '''Tool {i}.'''\n    return a + {i}\n"
            for i in range(count)
        ),
        namespace,
    )
    return [namespace[f"tool_{i}"] for i in range(count)]


@pytest.fixture
def reg() -> Any:
    registry = Registry(search="keyword")
    yield registry
    registry.close()


def test_add_many_registers_everything_in_one_change(reg: Registry) -> None:
    events: list[RegistryChanged] = []
    reg.subscribe(events.append)
    tools = reg.add_many(functions(300))
    assert len(reg) == 300 and [t.name for t in tools][:2] == ["tool_0", "tool_1"]
    assert reg.call_sync("tool_7", {"a": 1}).structured == 8
    assert reg.wait_for_events()
    (event,) = events
    assert len(event.added) == 300 and set(event.versions) == set(event.added)
    assert [h.name for h in reg.search("tool_299", limit=1)] == ["tool_299"]  # indexed too


def test_readding_one_tool_touches_only_that_tool(reg: Registry) -> None:
    reg.add_many(functions(500))
    before = dict(reg.snapshot.entries)
    events: list[RegistryChanged] = []
    reg.subscribe(events.append)

    def tool_3(a: int, b: str = "x") -> int:
        """Tool 3, rewritten."""
        return a * 3

    reg.add(tool_3)
    after = reg.snapshot.entries
    assert [n for n in after if after[n] is not before[n]] == ["tool_3"]
    assert reg.call_sync("tool_3", {"a": 2}).structured == 6
    assert reg.wait_for_events()
    assert [(e.added, e.updated, e.removed) for e in events] == [((), ("tool_3",), ())]


def test_republishing_an_unchanged_set_keeps_every_entry(reg: Registry) -> None:
    reg.add_source(_Static("mcp:x", [make(f"t{i}") for i in range(50)]))
    before = dict(reg.snapshot.entries)
    change = reg.publish("mcp:x", [make(f"t{i}") for i in range(50)])
    assert not change.tools_changed
    assert all(reg.snapshot.entries[n] is before[n] for n in before)


def test_sources_get_a_publisher_not_the_registry(reg: Registry) -> None:
    seen: list[Any] = []

    class Pushing(_Static):
        async def start(self, publisher: Any) -> None:
            seen.append(publisher)
            publisher.update(upserts=[make("late", 1)])
            publisher.update(unavailable={"late": "server is warming up"})

    reg.add_source(Pushing("mcp:p", []))
    deadline = time.monotonic() + 10
    while "late" not in reg and time.monotonic() < deadline:
        reg.wait_for_events(0.05)
    (publisher,) = seen
    assert isinstance(publisher, SourcePublisher) and not isinstance(publisher, Registry)
    assert not hasattr(publisher, "call") and not hasattr(publisher, "add")
    deadline = time.monotonic() + 10
    while reg.entry("late").status != "unavailable" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert reg.entry("late").reason == "server is warming up"
    publisher.update(unavailable={"late": None}, removals=[])
    assert reg.entry("late").status == "ok"
    publisher.update(removals=["late"])
    assert "late" not in reg


def test_each_subscriber_gets_changes_in_order_on_its_own_thread(reg: Registry) -> None:
    fast: list[tuple[str, ...]] = []
    slow: list[tuple[str, ...]] = []
    threads: set[str] = set()
    changer = threading.current_thread().name

    def slow_one(change: RegistryChanged) -> None:
        threads.add(threading.current_thread().name)
        time.sleep(0.2)
        slow.append(change.added)

    reg.subscribe(slow_one)
    reg.subscribe(lambda change: fast.append(change.added))
    started = time.monotonic()
    for i in range(5):
        reg.add(make(f"t{i}"))
    assert time.monotonic() - started < 0.5  # the changer never waits for a subscriber
    deadline = time.monotonic() + 5
    while len(fast) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fast == [(f"t{i}",) for i in range(5)] and len(slow) < 5  # the fast one ran ahead
    assert reg.wait_for_events(5)
    assert slow == fast and changer not in threads


async def test_a_subscriber_may_ask_for_its_own_loop(reg: Registry) -> None:
    loop = asyncio.get_running_loop()
    got: list[tuple[tuple[str, ...], bool]] = []
    done = asyncio.Event()

    def on_loop(change: RegistryChanged) -> None:
        got.append((change.added, asyncio.get_running_loop() is loop))
        if len(got) == 3:
            done.set()

    reg.subscribe(on_loop, loop=loop)
    await asyncio.to_thread(lambda: [reg.add(make(f"t{i}")) for i in range(3)])
    await asyncio.wait_for(done.wait(), 5)
    assert got == [((f"t{i}",), True) for i in range(3)]


class _Static:
    def __init__(self, name: str, tools: list[Tool]) -> None:
        self.name, self.kind, self.namespace = name, "mcp", None
        self.tools = tools

    def load(self) -> list[Tool]:
        return list(self.tools)
