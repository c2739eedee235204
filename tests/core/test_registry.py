"""Registry behaviour: sources, precedence, events, failures, threads."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import pytest

from nexus_jupyter import (
    Registry,
    RegistryChanged,
    SourceError,
    Tool,
    ToolNotFound,
    ToolUnavailable,
    tool,
)
from nexus_jupyter.core.config.model import Settings
from nexus_jupyter.core.tools.spec import SourceKind


class ListSource:
    """A source whose set is whatever the test puts in ``tools`` (raises when ``fail``)."""

    def __init__(
        self,
        name: str,
        kind: SourceKind,
        tools: list[Tool] | None = None,
        namespace: str | None = None,
    ) -> None:
        self.name, self.kind, self.namespace = name, kind, namespace
        self.tools = tools or []
        self.fail: Exception | None = None

    def load(self) -> Iterable[Tool]:
        if self.fail:
            raise self.fail
        return list(self.tools)


def make(name: str, result: Any, description: str = "") -> Tool:
    def handler(arguments: dict[str, Any]) -> Any:
        return result

    return Tool.from_schema(
        name, description or f"returns {result!r}", {"type": "object", "properties": {}}, handler
    )


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def reg() -> Any:
    registry = Registry(search="keyword")
    yield registry
    registry.close()


def test_add_get_call(reg: Registry) -> None:
    reg.add(add)
    assert reg.get("add").spec.input_schema["required"] == ["a", "b"]
    result = reg.call_sync("add", {"a": 1, "b": 2})
    assert (result.structured, result.error, result.content) == (
        3,
        None,
        [{"type": "text", "text": "3"}],
    )
    assert result.duration > 0


def test_plain_annotated_function_and_options(reg: Registry) -> None:
    def mul(a: int, b: int) -> int:
        return a * b

    reg.add(mul, name="times", permission="workspace_write")
    spec = reg.get("times").spec
    assert (spec.name, spec.permission, spec.source_kind) == (
        "times",
        "workspace_write",
        "notebook",
    )
    assert reg.call_sync("times", {"a": 3, "b": 4}).value == 12


def test_unknown_tool_suggests(reg: Registry) -> None:
    reg.add(add)
    with pytest.raises(ToolNotFound, match="Did you mean 'add'"):
        reg.get("ad")
    with pytest.raises(ToolNotFound):
        reg.call_sync("nope", {})


def test_precedence_and_shadowing(reg: Registry) -> None:
    reg.settings = Settings(allow_overrides=["read"])  # built-in names are reserved otherwise
    builtin = reg.add_source(ListSource("builtin", "builtin", [make("read", "builtin")]))
    mcp = reg.add_source(ListSource("mcp:x", "mcp", [make("read", "mcp")]))
    directory = reg.add_source(ListSource("directory:d", "directory", [make("read", "dir")]))
    assert reg.call_sync("read").value == "dir"
    entry = reg.entry("read")
    assert [t.spec.source for t in entry.shadowed] == ["mcp:x", "builtin"]
    reg.add(make("read", "notebook"))
    assert reg.call_sync("read").value == "notebook"
    reg.remove("read")
    assert reg.call_sync("read").value == "dir"
    directory.tools = []
    reg.refresh("directory:d")
    assert reg.call_sync("read").value == "mcp"
    assert builtin and mcp


def test_builtin_names_and_stricter_tools_are_not_shadowed_unless_allowed(reg: Registry) -> None:
    def strict(name: str, result: Any, permission: str) -> Tool:
        return Tool.from_schema(
            name, "t", {"type": "object", "properties": {}}, lambda a: result, permission=permission
        )

    reg.add_source(ListSource("builtin", "builtin", [strict("bash", "real", "danger_full_access")]))
    reg.add_source(ListSource("mcp:x", "mcp", [strict("wipe", "mcp", "workspace_write")]))
    reg.add_source(
        ListSource(
            "directory:d",
            "directory",
            [strict("bash", "fake", "read_only"), strict("wipe", "file", "read_only")],
        )
    )
    entry = reg.entry("bash")
    assert entry.spec.permission == "danger_full_access" and entry.spec.source == "builtin"
    assert entry.reason is not None and "allow_overrides" in entry.reason
    assert reg.entry("wipe").spec.source == "mcp:x"  # a laxer file tool does not take it
    reg.settings = Settings(allow_overrides=["wipe", "bash"])
    reg.refresh("directory:d")
    assert reg.entry("wipe").spec.source == "directory:d"
    assert reg.entry("bash").spec.source == "builtin"  # never a built-in with a laxer one


def test_namespace_applied_by_registry(reg: Registry) -> None:
    reg.add_source(ListSource("mcp:time", "mcp", [make("now", 1)], namespace="mcp__time"))
    assert reg.names() == ["mcp__time__now"]
    assert reg.get("mcp__time__now").spec.source == "mcp:time"


def test_events_added_updated_removed_with_versions(reg: Registry) -> None:
    events: list[RegistryChanged] = []
    reg.subscribe(events.append)
    src = reg.add_source(ListSource("directory:d", "directory", [make("a", 1)]))
    v1 = reg.get("a").spec.version
    src.tools = [make("a", 1, "changed description"), make("b", 2)]
    reg.refresh(src.name)
    v2 = reg.get("a").spec.version
    src.tools = [make("b", 2)]
    reg.refresh(src.name)
    assert reg.wait_for_events()
    tool_events = [e for e in events if e.tools_changed]
    assert [(e.added, e.updated, e.removed) for e in tool_events] == [
        (("a",), (), ()),
        (("b",), ("a",), ()),
        ((), (), ("a",)),
    ]
    assert v1 != v2
    assert tool_events[0].versions["a"] == v1 and tool_events[1].versions["a"] == v2


def test_same_content_reload_is_not_an_update(reg: Registry) -> None:
    events: list[RegistryChanged] = []
    src = reg.add_source(ListSource("directory:d", "directory", [make("a", 1)]))
    reg.subscribe(events.append)
    src.tools = [make("a", 1)]
    reg.refresh(src.name)
    assert reg.wait_for_events()
    assert not [e for e in events if e.tools_changed]


def test_failing_source_keeps_last_good_set_and_records_error(reg: Registry) -> None:
    src = reg.add_source(ListSource("directory:d", "directory", [make("a", 1)]))
    src.fail = RuntimeError("disk on fire")
    change = reg.refresh(src.name)
    assert change.sources == ("directory:d",) and not change.tools_changed
    assert reg.call_sync("a").value == 1
    status = {s["name"]: s for s in reg.status()["sources"]}["directory:d"]
    assert status["status"] == "error" and "disk on fire" in status["error"]
    src.fail = None
    reg.refresh(src.name)
    assert {s["name"]: s for s in reg.status()["sources"]}["directory:d"]["error"] is None


def _said(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str]]:
    return [
        (r.levelname, r.getMessage())
        for r in caplog.records
        if r.name == "nexus_jupyter.core.registry.registry"
    ]


def test_only_the_registry_told_a_face_says_its_failures_logs_them_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A face that says each broken source itself (nexus-tools list, serve) builds its
    registry with quiet_load_failures=True; another registry in the same process (a
    kernel's, a test's) still warns about its own."""
    caplog.set_level("DEBUG", logger="nexus_jupyter.core.registry.registry")
    with Registry(search="keyword", quiet_load_failures=True) as face, Registry() as kernel:
        for registry, name in ((face, "toolset:face"), (kernel, "toolset:kernel")):
            source = ListSource(name, "config")
            source.fail = ImportError(f"no module named {name[8:]}")
            registry.add_source(source)
    said = _said(caplog)
    assert ("DEBUG", "source toolset:face failed to load: no module named face") in said
    assert ("WARNING", "source toolset:kernel failed to load: no module named kernel") in said
    assert [m for lvl, m in said if lvl == "WARNING"] == [
        "source toolset:kernel failed to load: no module named kernel"
    ]


def test_works_again_is_info_and_pairs_only_with_a_failure_refresh_logged(
    reg: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="nexus_jupyter.core.registry.registry")
    src = reg.add_source(ListSource("directory:d", "directory", [make("a", 1)]))
    # an error a source set itself (its own status): refresh never said it, so no pair
    reg.set_status(src.name, error="watcher lost")
    reg.refresh(src.name)
    assert _said(caplog) == []
    src.fail = RuntimeError("disk on fire")
    reg.refresh(src.name)
    src.fail = None
    reg.refresh(src.name)
    reg.refresh(src.name)  # still fine: nothing more to say
    assert _said(caplog) == [
        ("WARNING", "source directory:d failed to load: disk on fire"),
        ("INFO", "source directory:d: works again"),
    ]


def test_subscriber_exception_does_not_break_registry(reg: Registry, caplog: Any) -> None:
    def boom(change: RegistryChanged) -> None:
        raise ValueError("subscriber bug")

    seen: list[RegistryChanged] = []
    caplog.set_level("WARNING", logger="nexus_jupyter.core.registry.events")
    reg.subscribe(boom)
    reg.subscribe(seen.append)
    reg.add(add)
    assert reg.wait_for_events(30)
    assert seen and "subscriber bug" in caplog.text
    (failure,) = reg.status()["subscribers"]  # recorded where every face shows sources
    assert "boom" in failure["subscriber"] and "ValueError: subscriber bug" in failure["error"]
    reg.add(make("again", 2))
    assert reg.wait_for_events(30)
    assert len(seen) == 2 and reg.status()["subscribers"][0]["count"] == 2


def test_unsubscribe(reg: Registry) -> None:
    seen: list[RegistryChanged] = []
    unsubscribe = reg.subscribe(seen.append)
    unsubscribe()
    reg.add(add)
    assert reg.wait_for_events()
    assert seen == []


def test_unavailable_tool_is_listed_but_not_callable(reg: Registry) -> None:
    reg.add_source(ListSource("mcp:x", "mcp", []))
    reg.publish("mcp:x", [make("t", 1)], unavailable={"t": "server exited"})
    assert reg.entry("t").status == "unavailable"
    with pytest.raises(ToolUnavailable, match="server exited"):
        reg.call_sync("t")


def test_same_kind_conflict_is_visible(reg: Registry) -> None:
    reg.add_source(ListSource("directory:a", "directory", [make("t", 1)]))
    reg.add_source(ListSource("directory:b", "directory", [make("t", 2)]))
    entry = reg.entry("t")
    assert entry.status == "error" and "conflict" in (entry.reason or "")


def test_duplicate_source_name_refused(reg: Registry) -> None:
    reg.add_source(ListSource("x", "builtin"))
    with pytest.raises(SourceError, match="already registered"):
        reg.add_source(ListSource("x", "builtin"))


def test_remove_foreign_tool_is_clear(reg: Registry) -> None:
    reg.add_source(ListSource("builtin", "builtin", [make("ls", 1)]))
    with pytest.raises(SourceError, match="comes from 'builtin'"):
        reg.remove("ls")


def test_filters(reg: Registry) -> None:
    @tool(permission="danger_full_access", categories=["shell"])
    def run(cmd: str) -> str:
        return cmd

    reg.add(add)
    reg.add(run)
    reg.add_source(ListSource("mcp:t", "mcp", [make("now", 1)], namespace="mcp__t"))
    assert [t.name for t in reg.list(permission="danger_full_access")] == ["run"]
    assert [t.name for t in reg.list(category="shell")] == ["run"]
    assert [t.name for t in reg.list(source="mcp")] == ["mcp__t__now"]
    assert [t.name for t in reg.list(source="notebook")] == ["add", "run"]


def test_readers_never_see_a_torn_snapshot(reg: Registry) -> None:
    """A source flips between two complete sets; readers must see one or the other."""
    set_a = [make(f"a{i}", i) for i in range(50)]
    set_b = [make(f"b{i}", i) for i in range(50)]
    src = reg.add_source(ListSource("directory:d", "directory", set_a))
    names_a = {t.name for t in set_a}
    names_b = {t.name for t in set_b}
    torn: list[set[str]] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            names = set(reg.snapshot.entries) - {"add"}
            if names not in (names_a, names_b):
                torn.append(names)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(300):
        src.tools = set_b if i % 2 == 0 else set_a
        reg.refresh(src.name)
    stop.set()
    for t in threads:
        t.join()
    assert torn == []


def test_concurrent_publishers_are_serialized(reg: Registry) -> None:
    sources = [reg.add_source(ListSource(f"directory:{i}", "directory")) for i in range(4)]

    def churn(src: ListSource, n: int) -> None:
        for j in range(100):
            src.tools = [make(f"t{n}_{k}", k) for k in range(j % 5)]
            reg.refresh(src.name)

    threads = [threading.Thread(target=churn, args=(s, i)) for i, s in enumerate(sources)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = {f"t{n}_{k}" for n in range(4) for k in range(99 % 5)}
    assert set(reg.names()) == expected


def test_subscriber_may_change_the_registry_without_deadlock(reg: Registry) -> None:
    seen: list[tuple[str, ...]] = []

    def chain(change: RegistryChanged) -> None:
        seen.append(change.added)
        if "a" in change.added:
            reg.add(make("b", 2))  # delivered after this change, not inside it

    reg.subscribe(chain)
    worker = threading.Thread(target=reg.add, args=(make("a", 1),))
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "a subscriber that adds a tool deadlocked the registry"
    assert reg.wait_for_events()
    assert [a for a in seen if a] == [("a",), ("b",)]


def test_overlapping_refreshes_of_one_source_keep_the_newest_set(reg: Registry) -> None:
    """Without one refresh at a time, a slow older load would overwrite a newer one."""
    entered, release = threading.Event(), threading.Event()

    class SlowSource(ListSource):
        slow = False

        def load(self) -> Iterable[Tool]:
            snapshot = list(self.tools)
            if self.slow:
                self.slow = False
                entered.set()
                assert release.wait(10)
            return snapshot

    src = reg.add_source(SlowSource("directory:d", "directory", [make("old", 1)]))
    src.slow = True
    first = threading.Thread(target=reg.refresh, args=(src.name,))
    first.start()
    assert entered.wait(10)
    src.tools = [make("new", 2)]
    second = threading.Thread(target=reg.refresh, args=(src.name,))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert reg.names() == ["new"]


def test_new_version_of_a_shadowed_tool_is_an_update(reg: Registry) -> None:
    src = reg.add_source(ListSource("directory:d", "directory", [make("t", "file")]))
    reg.add(make("t", "notebook"))
    events: list[RegistryChanged] = []
    reg.subscribe(events.append)
    src.tools = [make("t", "file", "edited in an editor")]
    reg.refresh(src.name)
    assert reg.wait_for_events()
    assert [e.updated for e in events if e.tools_changed] == [("t",)]
    assert reg.entry("t").shadowed[0].spec.description == "edited in an editor"
