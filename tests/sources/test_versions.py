"""Version history: every content a tool file goes through is kept; rollback restores it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_jupyter import Registry, SourceError
from nexus_jupyter.sources.versions import VersionStore, rollback, versions, versions_dir

TOOL = "from nexus_jupyter import tool\n\n@tool\ndef add(a: int, b: int) -> int:\n    'Add.'\n    return {expr}\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "tools" / "dynamic"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(search="keyword")
    yield registry
    registry.close()


def test_store_lives_under_the_nexus_home_outside_the_workspace(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = folder.parent / "home"
    monkeypatch.setenv("NEXUS_HOME", str(home))
    chosen = versions_dir(folder)
    assert chosen.parent == home / "versions" and chosen.name.startswith("dynamic-")
    assert versions_dir(folder.parent / "other" / "dynamic") != chosen  # one per folder path
    monkeypatch.setenv("NEXUS_VERSIONS_DIR", str(folder.parent / "elsewhere"))
    assert versions_dir(folder).parent == folder.parent / "elsewhere"


def test_every_loaded_version_is_kept_with_a_diff_summary(reg: Registry, folder: Path) -> None:
    path = folder / "add.py"
    path.write_text(TOOL.format(expr="a + b"))
    source = reg.watch(folder)
    path.write_text(TOOL.format(expr="a - b") + "# one more line\n")
    source.reload_file(path, registry=reg)
    path.write_text("def broken(:\n")  # a version that fails to load is not history
    source.reload_file(path, registry=reg)
    path.write_text(TOOL.format(expr="a + b"))
    source.reload_file(path, registry=reg)
    history = versions("add", registry=reg)
    assert [v.number for v in history] == [1, 2, 3]
    assert history[1].summary == "+2 -1 lines"
    assert history[0].event == "load" and history[0].size == len(TOOL.format(expr="a + b"))
    assert history[0].hash == history[2].hash  # content-addressed: one object
    objects = list((versions_dir(folder) / "objects").iterdir())
    assert len(objects) == 2
    assert not any(p.name.startswith(".nexus") for p in folder.iterdir())


def test_history_is_bounded_by_count_and_age(folder: Path) -> None:
    store = VersionStore(folder, keep=5)
    path = folder / "add.py"
    for n in range(40):
        store.record(path, TOOL.format(expr=f"a + {n}"))
    kept = store.versions("add")
    assert 5 <= len(kept) < 40 and kept[-1].hash == store.versions("add")[-1].hash
    objects = list((store.root / "objects").iterdir())
    assert len(objects) < 40  # the dropped versions' objects are deleted
    assert VersionStore(folder, keep=5, max_age_days=1e-9).versions("add") == []


def test_rollback_defaults_to_the_previous_version_and_is_live(reg: Registry, folder: Path) -> None:
    path = folder / "add.py"
    path.write_text(TOOL.format(expr="a + b"))
    source = reg.watch(folder)
    path.write_text(TOOL.format(expr="a * b"))
    source.reload_file(path, registry=reg)
    assert reg.call_sync("add", {"a": 3, "b": 4}).structured == 12
    chosen = rollback("add", registry=reg)
    assert chosen.number == 1
    assert path.read_text() == TOOL.format(expr="a + b")
    assert reg.call_sync("add", {"a": 3, "b": 4}).structured == 7
    history = versions(path)
    assert history[-1].event == "rollback" and history[-1].hash == history[0].hash
    rollback("add", history[1].hash[:8], registry=reg)  # by hash prefix
    assert reg.call_sync("add", {"a": 3, "b": 4}).structured == 12
    rollback(path, 1, registry=reg)  # by number
    assert reg.call_sync("add", {"a": 3, "b": 4}).structured == 7


def test_rollback_mistakes_say_what_to_do(folder: Path) -> None:
    store = VersionStore(folder)
    path = folder / "add.py"
    with pytest.raises(SourceError, match="No saved versions"):
        store.rollback(path)
    path.write_text(TOOL.format(expr="a"))
    store.record(path, path.read_text())
    with pytest.raises(SourceError, match="only one version"):
        store.rollback(path)
    with pytest.raises(SourceError, match="there is no version '7'"):
        store.rollback(path, 7)
    with pytest.raises(SourceError, match="matches no version"):
        store.rollback(path, "ffffffff")


def test_empty_saves_and_repeats_are_not_versions(folder: Path) -> None:
    store = VersionStore(folder)
    path = folder / "x.py"
    assert store.record(path, "") is None
    assert store.record(path, "a = 1\n") is not None
    assert store.record(path, "a = 1\n") is None  # same as the newest
    assert len(store.versions("x")) == 1


def test_magic_versions_and_rollback(folder: Path, tmp_path: Path) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from nexus_jupyter.session import reset_session_registry

    reg = Registry(search="keyword")
    reset_session_registry(reg)
    try:
        shell = InteractiveShell.instance()
        shell.run_line_magic("load_ext", "nexus_jupyter")
        path = folder / "add.py"
        path.write_text(TOOL.format(expr="a + b"))
        result = shell.run_cell(f"%tool watch {folder}")
        assert result.error_in_exec is None and "add.py: add" in str(result.result)
        path.write_text(TOOL.format(expr="a * b"))
        reg.source(reg.get("add").spec.source).reload_file(path)
        shown = shell.run_cell("%tool versions add").result
        assert len(shown) == 2 and "+1 -1 lines" in str(shown)
        done = shell.run_cell("%tool rollback add 1")
        assert done.error_in_exec is None and "version 1" in str(done.result)
        assert reg.call_sync("add", {"a": 3, "b": 4}).structured == 7
        bad = shell.run_cell("%tool rollback add 99")
        assert "there is no version '99'" in str(bad.error_in_exec)
        assert str(done.result).endswith("; it is live now.")
        # a new user's trial: the file deleted and a notebook's add defined since, rollback
        # wrote the file again without a word, and said it was live though the notebook's ran
        path.unlink()
        shell.run_cell(
            "from nexus_jupyter import tool\n@tool\ndef add(a: int, b: int) -> int:\n"
            '    """Add, the notebook way."""\n    return a - b\n'
        )
        again = shell.run_cell("%tool rollback add 2")
        said = str(again.result)
        assert again.error_in_exec is None and path.exists(), said
        assert said.startswith("add.py did not exist: wrote it again as version 2"), said
        assert "the notebook tool add (notebook) takes precedence" in said
        assert "`%tool remove add` lets the file's run" in said
    finally:
        reset_session_registry(None)


def test_one_id_per_version_shown_by_info_and_taken_by_rollback(
    reg: Registry, folder: Path
) -> None:
    from nexus_jupyter.notebook import api
    from nexus_jupyter.sources.versions import shown_version

    path = folder / "add.py"
    path.write_text(TOOL.format(expr="a + b"))
    source = reg.watch(folder)
    path.write_text(TOOL.format(expr="a - b"))
    source.reload_file(path, registry=reg)
    first, second = versions("add", registry=reg)
    info = api.tool_info("add", registry=reg)
    shown = f"#2 {second.short}"  # as %tool versions lists it
    assert shown in info._repr_html_() and f"version: {shown}" in info._text()
    assert reg.get("add").spec.version not in info._repr_html_()  # no second kind of id
    path.write_text("def broken(:\n")  # stale: the last good version runs, and is shown
    source.reload_file(path, registry=reg)
    assert shown_version(reg.get("add").spec) == shown
    assert rollback("add", second.short, registry=reg).number == 2  # the id shown is taken
    assert rollback("add", first.short, registry=reg).number == 1
    assert shown_version(reg.get("add").spec) == f"#3 {first.short}"
    with Registry(search="keyword") as other:  # a tool without a file: its content hash
        other.add(lambda_tool())
        assert shown_version(other.get("hello").spec) == "v" + other.get("hello").spec.version


def lambda_tool():
    def hello(name: str) -> str:
        """Say hello."""
        return name

    return hello


def test_a_forced_save_that_fails_to_load_is_not_shown_as_the_version_that_runs(
    reg: Registry, folder: Path
) -> None:
    from nexus_jupyter.sources.tool_files import write_tool_file
    from nexus_jupyter.sources.versions import shown_version

    path = folder / "add.py"
    source = reg.watch(folder)
    write_tool_file(folder, "add", TOOL.format(expr="a + b"))
    source.reload_file(path, registry=reg)
    write_tool_file(folder, "add", "def broken(:\n", force=True)
    source.reload_file(path, registry=reg)
    first, second = versions("add", registry=reg)  # the broken save is kept (to roll back)
    assert second.event == "export" and reg.call_sync("add", {"a": 3, "b": 4}).structured == 7
    assert shown_version(reg.get("add").spec) == f"#1 {first.short}"  # #1's code runs
