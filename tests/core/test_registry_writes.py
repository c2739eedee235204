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


def test_republishing_an_unchanged_set_announces_nothing_but_runs_the_new_code(
    reg: Registry,
) -> None:
    reg.add_source(_Static("mcp:x", [make(f"t{i}", "old", "a tool") for i in range(50)]))
    events: list[RegistryChanged] = []
    reg.subscribe(events.append)
    republished = [make(f"t{i}", "new handler", "a tool") for i in range(50)]  # new code only
    change = reg.publish("mcp:x", republished)
    assert not change.tools_changed
    assert reg.call_sync("t7").value == "new handler"
    unchanged_again = reg.publish("mcp:x", republished)
    assert not unchanged_again and reg.wait_for_events()
    assert [e for e in events if e.tools_changed] == []


def test_readding_a_closure_runs_the_new_one(reg: Registry) -> None:
    """Same code, other captured values: a version cannot see the difference, the call must."""

    def make_scale(factor: int) -> Any:
        def scale(x: int) -> int:
            """Scale x."""
            return x * factor

        return scale

    reg.add(make_scale(2))
    assert reg.call_sync("scale", {"x": 10}).structured == 20
    reg.add(make_scale(3))
    assert reg.call_sync("scale", {"x": 10}).structured == 30
    reg.add(make_scale(3), timeout=60)
    assert reg.get("scale").spec.timeout == 60


def test_sources_get_a_publisher_not_the_registry(reg: Registry) -> None:
    seen: list[Any] = []
    started = threading.Event()

    class Pushing(_Static):
        async def start(self, publisher: Any) -> None:
            seen.append(publisher)
            publisher.update(upserts=[make("late", 1)])
            publisher.update(unavailable={"late": "server is warming up"})
            started.set()

    reg.add_source(Pushing("mcp:p", []))
    assert started.wait(10)
    (publisher,) = seen
    assert isinstance(publisher, SourcePublisher) and not isinstance(publisher, Registry)
    assert not hasattr(publisher, "call") and not hasattr(publisher, "add")
    assert reg.entry("late").status == "unavailable"
    assert reg.entry("late").reason == "server is warming up"
    publisher.update(unavailable={"late": None})
    assert reg.entry("late").status == "ok"
    publisher.update(unavailable={"late": "down"})
    publisher.update(removals=["late"])
    assert "late" not in reg
    publisher.update(upserts=[make("late", 2)])  # back: its old reason went with it
    assert reg.entry("late").status == "ok"


def test_each_subscriber_gets_changes_in_order_on_its_own_thread(reg: Registry) -> None:
    fast: list[tuple[str, ...]] = []
    slow: list[tuple[str, ...]] = []
    threads: set[str] = set()
    release = threading.Event()
    all_fast = threading.Event()

    def slow_one(change: RegistryChanged) -> None:
        threads.add(threading.current_thread().name)
        assert release.wait(10)  # held until every change was made and seen by the other
        slow.append(change.added)

    def fast_one(change: RegistryChanged) -> None:
        fast.append(change.added)
        if len(fast) == 5:
            all_fast.set()

    reg.subscribe(slow_one)
    reg.subscribe(fast_one)
    for i in range(5):  # the changer never waits for a subscriber: slow_one is blocked
        reg.add(make(f"t{i}"))
    assert all_fast.wait(10) and slow == []
    release.set()
    assert reg.wait_for_events(10)
    assert slow == fast == [(f"t{i}",) for i in range(5)]
    assert threading.current_thread().name not in threads


def test_waiting_for_events_never_blocks_writers(reg: Registry) -> None:
    """Waiting (here in a loop, from another thread) and writing at once cannot deadlock."""
    reg.subscribe(lambda change: None)
    stop = threading.Event()

    def waiter() -> None:
        while not stop.is_set():
            reg.wait_for_events(1)

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    writer = threading.Thread(target=lambda: [reg.add(make(f"w{i}")) for i in range(300)])
    writer.start()
    writer.join(30)
    stop.set()
    thread.join(10)
    assert not writer.is_alive() and len(reg) == 300


def test_a_subscriber_waiting_for_events_waits_for_the_others_not_itself(reg: Registry) -> None:
    waited: list[bool] = []
    reg.subscribe(lambda change: waited.append(reg.wait_for_events(5)))
    reg.subscribe(lambda change: time.sleep(0.05))  # another lambda: a namesake
    reg.add(make("x"))
    assert reg.wait_for_events(10)
    assert waited == [True]


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
