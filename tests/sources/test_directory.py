"""DirectorySource: real files, the real watcher, waits on registry events with a deadline."""

from __future__ import annotations

import os
import pickle
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waiting import wait_until  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry, Tool, ToolNotFound, ToolUnavailable
from nexus_jupyter.sources.directory import DirectorySource, is_tool_file

TOOL = """from nexus_jupyter import tool

@tool
def {name}(a: int, b: int = 2) -> int:
    "Combine two numbers."
    return {expr}
"""


def tool_text(name: str = "add", expr: str = "a + b") -> str:
    return TOOL.format(name=name, expr=expr)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "tools"
    path.mkdir()
    return path


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(search="keyword")
    yield registry
    registry.close()


def watched(reg: Registry, folder: Path, **options: object) -> DirectorySource:
    source = reg.watch(folder, **options)
    assert source.wait_ready(10), "the watcher did not start"
    return source


def result_of(reg: Registry, name: str, args: dict) -> object:
    return reg.call_sync(name, args).structured


def published_state(reg: Registry, source: DirectorySource) -> Any:
    """The folder's published state once no reload is running: the watcher may be reloading
    the file the test just saved, and meanwhile the details are the last map, marked
    ``reloading``. Polls a status (bounded), since a reload that changes nothing publishes
    no event."""
    deadline = time.monotonic() + 10
    while True:
        state = next(s for s in reg.sources() if s.name == source.name)
        if not state.details.get("reloading") or time.monotonic() > deadline:
            return state
        time.sleep(0.02)


def test_details_read_during_a_reload_keep_their_shape(reg: Registry, folder: Path) -> None:
    """A status read while a file loads returns the last map marked ``reloading`` instead of
    waiting for the import; before any map was built, that is an empty map of the same
    keys, not ``{"reloading": True}`` alone (a reader of ``details["files"]`` failed)."""
    (folder / "add.py").write_text(tool_text())
    source = reg.add_source(DirectorySource(folder), start=False)  # no watcher to take the lock
    held, release = threading.Event(), threading.Event()

    def reload_elsewhere() -> None:  # as a reload on the watcher's thread holds the lock
        with source._lock:
            held.set()
            release.wait(10)

    other = threading.Thread(target=reload_elsewhere)
    other.start()
    try:
        assert held.wait(10)
        details = next(s for s in reg.sources() if s.name == source.name).details
    finally:
        release.set()
        other.join(10)
    assert details["reloading"] is True and details["files"] == {}
    assert {"path", "conflicts", "watching", "exists"} <= set(details)
    details = next(s for s in reg.sources() if s.name == source.name).details
    assert "reloading" not in details and details["files"]["add.py"]["status"] == "ok"


def test_initial_scan_loads_every_tool_file(reg: Registry, folder: Path) -> None:
    (folder / "add.py").write_text(tool_text("add"))
    (folder / "two.py").write_text(
        tool_text("mul", "a * b") + tool_text("sub", "a - b").split("\n", 1)[1]
    )
    source = reg.watch(folder)
    assert source.kind == "directory" and source.name.startswith("directory:")
    assert sorted(reg.names()) == ["add", "mul", "sub"]
    spec = reg.get("mul").spec
    assert spec.source == source.name and spec.source_kind == "directory"
    assert spec.origin == str((folder / "two.py").resolve())
    assert reg.get("mul").source_code == (folder / "two.py").read_text()
    assert result_of(reg, "sub", {"a": 5}) == 3


def test_a_save_is_live_through_the_watcher(reg: Registry, folder: Path) -> None:
    (folder / "add.py").write_text(tool_text())
    watched(reg, folder)
    (folder / "add.py").write_text(tool_text(expr="a + b + 100"))
    wait_until(reg, lambda: result_of(reg, "add", {"a": 1}) == 103)
    (folder / "new.py").write_text(tool_text("fresh", "a * 10"))
    wait_until(reg, lambda: "fresh" in reg)
    assert result_of(reg, "fresh", {"a": 4}) == 40


@pytest.mark.parametrize(
    ("broken", "message", "line"),
    [
        ("from nexus_jupyter import tool\n\ndef oops(:\n", "SyntaxError", 3),
        ("x = 1\nraise ValueError('bad config')\n", "ValueError: bad config", 2),
        ("import sys\nsys.exit(3)\n", "SystemExit", 2),
        ("raise KeyboardInterrupt\n", "KeyboardInterrupt", 1),
        ("import not_a_module_anywhere\n", "ModuleNotFoundError", 1),
        (
            "from nexus_jupyter import tool\n@tool\ndef f(*args):\n    return 1\n",
            "cannot be a tool",
            2,
        ),
        (
            "from nexus_jupyter import tool\n\n@tool\ndef add(a: int) -> int:\n    return (a +",
            "SyntaxError",
            5,
        ),
    ],
)
def test_a_broken_save_keeps_the_last_good_tools(
    reg: Registry, folder: Path, broken: str, message: str, line: int
) -> None:
    path = folder / "add.py"
    path.write_text(tool_text())
    source = watched(reg, folder)
    path.write_text(broken)
    status = source.reload_file(path)
    assert status["status"] == "error"
    assert message in status["message"] and status["line"] == line
    assert result_of(reg, "add", {"a": 1}) == 3  # the last good version still answers
    state = published_state(reg, source)
    assert state.error and "add.py" in state.error
    assert state.details["files"]["add.py"]["status"] == "error"
    path.write_text(tool_text(expr="a * b"))
    assert source.reload_file(path)["status"] == "ok"
    assert result_of(reg, "add", {"a": 3}) == 6
    assert source.errors == {}
    assert next(s for s in reg.sources() if s.name == source.name).error is None


def test_broken_file_shows_its_error_through_the_watcher(reg: Registry, folder: Path) -> None:
    path = folder / "add.py"
    path.write_text(tool_text())
    source = watched(reg, folder)
    path.write_text("def broken(:\n")
    wait_until(reg, lambda: "add.py" in source.errors)
    assert "SyntaxError" in source.errors["add.py"] and "(line 1)" in source.errors["add.py"]
    assert result_of(reg, "add", {"a": 1}) == 3
    path.write_text(tool_text(expr="a - b"))
    wait_until(reg, lambda: not source.errors)
    assert result_of(reg, "add", {"a": 1}) == -1


def test_delete_removes_and_rename_moves(reg: Registry, folder: Path) -> None:
    (folder / "a.py").write_text(tool_text("alpha"))
    (folder / "b.py").write_text(tool_text("beta"))
    watched(reg, folder)
    (folder / "a.py").unlink()
    wait_until(reg, lambda: "alpha" not in reg)
    (folder / "b.py").rename(folder / "c.py")
    wait_until(
        reg, lambda: reg.find("beta") is not None and reg.get("beta").spec.origin.endswith("c.py")
    )
    assert reg.names() == ["beta"]


def test_a_call_of_a_tool_whose_file_went_says_how_it_left(reg: Registry, folder: Path) -> None:
    (folder / "a.py").write_text(tool_text("alpha") + tool_text("gamma"))
    watched(reg, folder)
    (folder / "a.py").write_text(tool_text("alpha"))
    wait_until(reg, lambda: "gamma" not in reg)
    with pytest.raises(ToolNotFound) as edited:
        reg.call_sync("gamma", {"a": 1})
    assert str(edited.value).startswith(
        "The tool 'gamma' is gone: its file a.py no longer defines it. List the available"
    )
    (folder / "a.py").unlink()
    wait_until(reg, lambda: "alpha" not in reg)
    with pytest.raises(ToolNotFound) as deleted:
        reg.get("alpha")
    assert str(deleted.value).startswith("The tool 'alpha' is gone: its file a.py was deleted.")
    # the error keeps its parts when pickled (a worker, a log handler)
    again = pickle.loads(pickle.dumps(deleted.value))
    assert (str(again), again.name, again.gone) == (
        str(deleted.value),
        "alpha",
        "its file a.py was deleted",
    )
    # defined again in another file: a later departure says how that one left
    (folder / "b.py").write_text(tool_text("alpha"))
    wait_until(reg, lambda: "alpha" in reg)
    (folder / "b.py").write_text(tool_text("beta"))
    wait_until(reg, lambda: "alpha" not in reg)
    assert "b.py no longer defines it" in str(reg.not_found("alpha"))
    # defined again by another source and gone from there: no older file is blamed
    reg.add(Tool.from_function(lambda: None, name="alpha"))
    reg.remove("alpha")
    assert str(reg.not_found("alpha")).startswith("No tool named 'alpha'.")
    assert "gone" not in str(reg.not_found("omega"))


def test_hidden_temp_and_cache_files_are_ignored(reg: Registry, folder: Path) -> None:
    for name in (
        ".hidden.py",
        "add.py~",
        "add.py.swp",
        "#add.py#",
        "add.py.tmp",
        ".#add.py",
        "notes.txt",
        "__pycache__/cached.py",
        "sub/nested.py",
    ):
        target = folder / name
        target.parent.mkdir(exist_ok=True)
        target.write_text(tool_text("ignored"))
    (folder / "real.py").write_text(tool_text("real"))
    source = watched(reg, folder)
    assert reg.names() == ["real"]
    assert list(source.status["files"]) == ["real.py"]
    assert not is_tool_file(folder / "x.py", folder.parent)


def test_recursive_folder_includes_sub_folders(reg: Registry, folder: Path) -> None:
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.py").write_text(tool_text("deep"))
    reg.watch(folder, recursive=True)
    assert reg.names() == ["deep"]


def test_two_files_defining_one_name_are_a_visible_conflict(reg: Registry, folder: Path) -> None:
    (folder / "a.py").write_text(tool_text("same"))
    source = watched(reg, folder)
    (folder / "b.py").write_text(tool_text("same", "a * b"))
    wait_until(reg, lambda: reg.entry("same").status != "ok")
    entry = reg.entry("same")
    assert entry.status == "unavailable"
    assert entry.reason is not None
    assert "conflict" in entry.reason and "a.py" in entry.reason and "b.py" in entry.reason
    assert "same" in source.status["conflicts"]
    with pytest.raises(ToolUnavailable):
        reg.call_sync("same", {"a": 1})
    (folder / "b.py").unlink()
    wait_until(reg, lambda: reg.entry("same").status == "ok")


def test_each_load_is_a_fresh_module_outside_sys_modules(reg: Registry, folder: Path) -> None:
    path = folder / "state.py"
    path.write_text(
        "from nexus_jupyter import tool\nCALLS = []\n@tool\ndef count() -> int:\n"
        "    CALLS.append(1)\n    return len(CALLS)\n"
    )
    before = set(sys.modules)
    source = reg.watch(folder)
    assert result_of(reg, "count", {}) == 1
    assert result_of(reg, "count", {}) == 2
    path.write_text(path.read_text() + "\n# touched\n")
    source.reload_file(path)
    assert result_of(reg, "count", {}) == 1  # no state survives a reload
    assert not [m for m in set(sys.modules) - before if "nexus_dynamic" in m]


def test_an_empty_save_keeps_the_tools(reg: Registry, folder: Path) -> None:
    path = folder / "add.py"
    path.write_text(tool_text())
    source = reg.watch(folder)
    path.write_text("")
    status = source.reload_file(path)
    assert status["status"] == "error" and "empty" in status["message"]
    assert "add" in reg
    path.write_text(tool_text(expr="b"))
    source.reload_file(path)
    assert result_of(reg, "add", {"a": 1}) == 2


def test_a_missing_folder_is_watched_once_it_appears(reg: Registry, tmp_path: Path) -> None:
    folder = tmp_path / "later"
    source = reg.watch(folder)
    assert reg.names() == [] and source.status["exists"] is False
    folder.mkdir()
    (folder / "add.py").write_text(tool_text())
    wait_until(reg, lambda: "add" in reg, timeout=15)


def test_remove_source_stops_watching(reg: Registry, folder: Path) -> None:
    (folder / "add.py").write_text(tool_text())
    source = watched(reg, folder)
    reg.remove_source(source.name)
    assert "add" not in reg and source._watcher is None
    (folder / "add.py").write_text(tool_text(expr="0"))
    assert source.reload_file(folder / "add.py")["status"] == "ok"  # still usable by hand


def test_the_same_folder_is_watched_once_under_any_spelling(
    reg: Registry, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder.parent)
    first = reg.watch("tools")
    assert first.name == "directory:tools"
    assert reg.watch(folder.resolve()) is first
    assert reg.watch(os.path.join(".", "tools", "")) is first


def test_a_file_that_hangs_at_import_times_out(reg: Registry, folder: Path) -> None:
    (folder / "good.py").write_text(tool_text("good"))
    (folder / "hang.py").write_text("import time\ntime.sleep(5)\n")
    source = reg.add_source(DirectorySource(folder, load_timeout=0.3), start=False)
    assert "did not finish importing within 0.3 s" in source.errors["hang.py"]
    assert result_of(reg, "good", {"a": 1}) == 3
    (folder / "good.py").write_text(tool_text("good", "a * 100"))
    assert source.reload_file(folder / "good.py", registry=reg)["status"] == "ok"
    assert result_of(reg, "good", {"a": 1}) == 100


def test_a_save_ending_mid_line_waits_to_settle_then_loads(reg: Registry, folder: Path) -> None:
    path = folder / "add.py"
    path.write_text(tool_text())
    watched(reg, folder)
    half = tool_text(expr="a + b + 12").rstrip("\n")[:-1]  # "... + 1": cut mid-number
    path.write_text(half)  # no final newline, just written: looks like a save in progress
    path.write_text(tool_text(expr="a + b + 12").rstrip("\n"))  # the finished save, no newline
    wait_until(reg, lambda: result_of(reg, "add", {"a": 0}) == 14)


def test_a_file_can_define_a_tool_by_its_own_json_schema(tmp_path: Path) -> None:
    from nexus_jupyter.sources.loader import load_tool_text

    text = """
from nexus_jupyter import Tool

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"n": {"type": "integer"}},
    "properties": {"a": {"$ref": "#/$defs/n"}},
    "required": ["a"],
    "additionalProperties": False,
}
double = Tool.from_schema("double", "Double a.", SCHEMA, lambda args: args["a"] * 2)
"""
    result = load_tool_text(text, tmp_path / "double.py", source="directory:x")
    assert result.ok, result.error
    (tool,) = result.tools
    assert tool.spec.source == "directory:x" and tool.spec.source_kind == "directory"
    assert tool.spec.input_schema["$defs"] == {"n": {"type": "integer"}}  # kept as written
    assert tool.spec.input_schema["$schema"].endswith("2020-12/schema")


def test_refresh_republishes_conflicts_and_errors_and_never_an_older_set(
    folder: Path, reg: Registry
) -> None:
    """A folder publishes by itself; Registry.refresh asks it to, under its own lock."""
    (folder / "a.py").write_text(tool_text("dup") + "\n" + tool_text("alpha", "a"))
    (folder / "b.py").write_text(tool_text("dup", "a * b"))
    (folder / "bad.py").write_text("def broken(:\n")
    source = reg.add_source(DirectorySource(folder), start=False)
    entry = reg.entry("dup")
    assert entry.status == "unavailable" and "a.py and b.py" in (entry.reason or "")
    state = {s.name: s for s in reg.sources()}[source.name]
    assert state.error is not None and "bad.py" in state.error
    (folder / "a.py").write_text(tool_text("dup") + "\n" + tool_text("alpha", "a * 100"))
    source.reload_file(folder / "a.py")
    assert reg.call_sync("alpha", {"a": 2}).structured == 200
    reg.refresh(source.name)
    assert reg.call_sync("alpha", {"a": 2}).structured == 200
    assert reg.entry("dup").status == "unavailable"  # the conflict is still shown
    state = {s.name: s for s in reg.sources()}[source.name]
    assert state.error is not None and "bad.py" in state.error
