"""A tool file that fails to (re)load is visible in the kernel faces: ``%tool list``,
``%tool info`` and the ``%tools`` catalog mark its tools stale with the error and line;
``%tool call`` warns that the last good version ran; a name whose file never loaded says
which file failed and why. Real files and the real folder watcher."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import Face, wait_for

from nexus_jupyter import Registry
from nexus_jupyter.core.registry.file_health import stale_tools
from nexus_jupyter.render.results import result_html, result_text

GOOD = '''from nexus_jupyter import tool


@tool
def circle_area(radius: float) -> float:
    """The area of a circle."""
    return 3.0 * radius * radius
'''
BROKEN = '''from nexus_jupyter import tool


@tool
def circle_area(radius: float) -> float:
    """The area of a circle."""
    return 3.0 * radius *
'''
BROKEN_LINE = 7


@pytest.fixture
def tools_dir(tmp_path: Path, registry: Registry) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "circle_area.py").write_text(GOOD)
    source = registry.watch(folder)
    assert source.wait_ready(10)
    assert registry.find("circle_area") is not None
    return folder


def _break(registry: Registry, folder: Path) -> None:
    (folder / "circle_area.py").write_text(BROKEN)
    wait_for(lambda: "circle_area" in stale_tools(registry))


def test_list_marks_a_stale_tool_with_the_error_and_line(
    face: Face, registry: Registry, tools_dir: Path
) -> None:
    assert face.list().stale == {}
    _break(registry, tools_dir)
    view = face.list()
    assert "circle_area" in view.names  # the last good version stays listed
    note = view.stale["circle_area"]
    assert "circle_area.py failed to reload" in note
    assert f"SyntaxError: invalid syntax, line {BROKEN_LINE}" in note
    text = InteractiveShell.instance().display_formatter.format(view)[0]
    assert "stale" in text["text/plain"] and f"line {BROKEN_LINE}" in text["text/plain"]
    assert "stale" in text["text/html"] and "failed to reload" in text["text/html"]


def test_info_says_the_tool_is_stale(face: Face, registry: Registry, tools_dir: Path) -> None:
    _break(registry, tools_dir)
    info = face.info("circle_area")
    assert info.stale is not None and f"line {BROKEN_LINE}" in info.stale
    assert "stale: circle_area.py failed to reload" in repr(info)
    assert "failed to reload" in info._repr_html_()


def test_call_of_a_stale_tool_warns_that_the_last_good_version_ran(
    face: Face, registry: Registry, tools_dir: Path
) -> None:
    _break(registry, tools_dir)
    result = face.call("circle_area", {"radius": 2})
    assert result.value == 12.0  # the last good version ran
    assert len(result.notes) == 1
    assert "the last good version of the tool ran" in result.notes[0]
    assert f"line {BROKEN_LINE}" in result.notes[0]
    assert "Warning: circle_area.py failed to reload" in result_text(result)
    assert "failed to reload" in result_html(result)


def test_fixing_the_file_clears_the_stale_mark(
    face: Face, registry: Registry, tools_dir: Path
) -> None:
    _break(registry, tools_dir)
    (tools_dir / "circle_area.py").write_text(GOOD.replace("3.0", "3.5"))
    wait_for(lambda: "circle_area" not in stale_tools(registry))
    assert face.list().stale == {}
    result = face.call("circle_area", {"radius": 2})
    assert result.value == 14.0 and result.notes == ()


def test_catalog_shows_the_stale_badge_and_the_failed_file(
    face: Face, registry: Registry, tools_dir: Path
) -> None:
    _break(registry, tools_dir)
    catalog = face.browse("circle")
    assert catalog.stale["circle_area"].startswith("stale: circle_area.py")
    rows = [row.children[1].value for row in catalog.rows.children]
    assert any("stale" in r for r in rows)
    assert "circle_area.py failed to load" in catalog.count.value
    catalog.select("circle_area")
    assert "failed to reload" in catalog.details.value
    catalog.close()


def test_a_name_whose_file_never_loaded_says_which_file_failed_and_why(
    face: Face, registry: Registry, tmp_path: Path
) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    (folder / "circle_area.py").write_text(BROKEN)  # broken before the kernel ever loads it
    assert registry.watch(folder).wait_ready(10)  # its status (the error) is published
    assert registry.find("circle_area") is None
    message = face.error("call", "circle_area", {"radius": 1})
    assert message.startswith("No tool named 'circle_area': circle_area.py failed to load")
    assert f"SyntaxError: invalid syntax, line {BROKEN_LINE}" in message
    assert str(folder / "circle_area.py") in message
    assert "circle_area.py failed to load" in face.error("info", "circle_area")


def test_list_names_a_file_that_never_loaded(
    face: Face, registry: Registry, tmp_path: Path
) -> None:
    """Its tools cannot be listed, so ``%tool list`` says which file failed and why."""
    folder = tmp_path / "fresh"
    folder.mkdir()
    (folder / "circle_area.py").write_text(BROKEN)
    assert registry.watch(folder).wait_ready(10)  # its status (the error) is published
    view = face.list()
    assert "circle_area" not in view.names
    assert len(view.failed) == 1
    assert view.failed[0].startswith("circle_area.py failed to load (SyntaxError")
    formats = InteractiveShell.instance().display_formatter.format(view)[0]
    for shown in (formats["text/plain"], formats["text/html"]):
        assert "circle_area.py failed to load" in shown and f"line {BROKEN_LINE}" in shown
    assert face.list(source="notebook").failed == []  # another source's list keeps quiet
    (folder / "circle_area.py").write_text(GOOD)
    wait_for(lambda: registry.find("circle_area") is not None)
    assert face.list().failed == []


def test_a_file_named_otherwise_is_found_by_the_function_it_defines(
    face: Face, registry: Registry, tmp_path: Path
) -> None:
    folder = tmp_path / "shapes"
    folder.mkdir()
    (folder / "geometry.py").write_text("import no_such_module_here\n" + GOOD)
    assert registry.watch(folder).wait_ready(10)  # its status (the error) is published
    message = face.error("info", "circle_area")
    assert (
        "geometry.py failed to load" in message
        and "ModuleNotFoundError" in message
        and "line 1" in message
    )
    # a name no broken file defines keeps the usual answer
    assert "No tool named 'square_area'." in face.error("info", "square_area")


def test_the_status_of_a_stale_tool_says_stale_never_ok(
    face: Face, registry: Registry, tools_dir: Path
) -> None:
    def badges_of(row_html: str) -> list[str]:
        return re.findall(r"display:inline-block\">([^<]*)</span>", row_html)

    listed = face.list(source="directory")._repr_html_()
    row = re.search(r"<b>circle_area</b></code></td><td[^>]*>(.*?)</td>", listed)
    assert row is not None and badges_of(row.group(1))[-1] == "ok"  # a good file: ok
    _break(registry, tools_dir)
    listed = face.list(source="directory")._repr_html_()
    row = re.search(r"<b>circle_area</b></code></td><td[^>]*>(.*?)</td><td[^>]*>(.*?)</td>", listed)
    assert row is not None
    status, description = row.groups()
    assert "stale" in badges_of(status) and "ok" not in badges_of(status)
    assert "circle_area.py failed to reload" in description  # the note, once, beside it
    assert "stale" not in badges_of(description)
    card = face.info("circle_area")._repr_html_()
    head = card.split("<p>", 1)[0]  # the name and its badges
    assert "stale" in badges_of(head) and "ok" not in badges_of(head)
