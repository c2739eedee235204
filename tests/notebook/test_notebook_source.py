"""Cell tracking: @tool functions follow the cells that define them."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import run_ok

from nexus_jupyter import Registry, RegistryChanged
from nexus_jupyter.core.registry.source import MutableSource
from nexus_jupyter.notebook.extension import current_tracker
from nexus_jupyter.notebook.history import session_history

CELL = '''
from nexus_jupyter import tool

@tool(categories=["math"])
def scale(x: float, factor: float = {factor}) -> float:
    """Multiply x by a factor."""
    return x * factor
'''


@pytest.fixture
def events(registry: Registry) -> list[RegistryChanged]:
    seen: list[RegistryChanged] = []
    registry.subscribe(seen.append)
    return seen


def test_decorated_function_is_registered_with_cell_source(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(shell, CELL.format(factor=2))
    tool = registry.get("scale")
    assert tool.spec.source == "notebook" and tool.spec.categories == ("math",)
    assert tool.spec.origin.startswith("cell")
    assert tool.source_code is not None and "def scale" in tool.source_code
    assert registry.call_sync("scale", {"x": 3}).structured == 6


def test_rerun_with_changed_code_updates_and_identical_rerun_keeps_version(
    shell: InteractiveShell, registry: Registry, events: list[RegistryChanged]
) -> None:
    run_ok(shell, CELL.format(factor=2))
    first = registry.get("scale").spec.version
    assert events[-1].added == ("scale",)
    run_ok(shell, CELL.format(factor=2))
    assert registry.get("scale").spec.version == first
    run_ok(shell, CELL.format(factor=3))
    assert events[-1].updated == ("scale",)
    assert events[-1].versions["scale"] != first
    assert registry.call_sync("scale", {"x": 1}).structured == 3


def test_deleting_the_name_removes_the_tool(
    shell: InteractiveShell, registry: Registry, events: list[RegistryChanged]
) -> None:
    run_ok(shell, CELL.format(factor=2))
    run_ok(shell, "del scale")
    assert "scale" not in registry
    assert events[-1].removed == ("scale",)


def test_renamed_tool_replaces_the_old_name(shell: InteractiveShell, registry: Registry) -> None:
    run_ok(shell, "from nexus_jupyter import tool\n@tool\ndef f(x: int) -> int:\n    return x\n")
    run_ok(shell, "@tool(name='g')\ndef f(x: int) -> int:\n    return x\n")
    assert "g" in registry and "f" not in registry


def test_output_history_variables_do_not_duplicate_tools(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(shell, CELL.format(factor=2))
    run_ok(shell, "scale")  # `_` and `_2` now hold the function too
    run_ok(shell, "del scale")
    assert "scale" not in registry


def test_broken_tool_reports_and_the_cell_still_succeeds(
    shell: InteractiveShell, registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    run_ok(
        shell, "from nexus_jupyter import tool\n@tool\ndef bad(*args: int) -> int:\n    return 0\n"
    )
    assert "bad" not in registry
    err = capsys.readouterr().err
    assert "'bad' was not registered as a tool" in err and "*args" in err
    run_ok(shell, "x = 1")  # reported once per definition, not on every cell
    assert "bad" not in capsys.readouterr().err


def test_exported_tool_stays_with_the_folder_until_its_cell_runs_again(
    shell: InteractiveShell, registry: Registry
) -> None:
    """Export hands the tool to the directory source; re-running the cell takes it back and
    the file's version shows as shadowed."""
    run_ok(shell, CELL.format(factor=2))
    folder = MutableSource("directory:tools/dynamic", "directory")
    registry.add_source(folder)
    exported = registry.get("scale").with_spec(origin="tools/dynamic/scale.py")
    folder.put(exported)
    registry.source("notebook").discard("scale")  # what export does
    registry.refresh("notebook")
    registry.refresh(folder.name)
    assert registry.get("scale").spec.source == folder.name
    run_ok(shell, "y = 2")  # another cell: the notebook must not take the tool back
    assert registry.get("scale").spec.source == folder.name
    run_ok(shell, CELL.format(factor=2))  # the defining cell again: the notebook wins
    entry = registry.entry("scale")
    assert entry.tool.spec.source == "notebook"
    assert [t.spec.source for t in entry.shadowed] == [folder.name]
    run_ok(shell, "del scale")  # the folder's version is visible again
    assert registry.get("scale").spec.source == folder.name


def test_tools_defined_before_load_ext_are_picked_up(
    shell: InteractiveShell, registry: Registry
) -> None:
    from nexus_jupyter.notebook import extension

    extension.unload(shell)
    run_ok(shell, CELL.format(factor=2))
    assert "scale" not in registry
    extension.load(shell)
    run_ok(shell, "pass")
    assert "scale" in registry
    assert current_tracker() is not None and current_tracker().tracked() == {"scale": "scale"}


DEFINE_AND_CALL = '''
from nexus_jupyter import tool
import nexus_jupyter

@tool
def twice(x: int) -> int:
    """Double a number."""
    return 2 * x

answer = nexus_jupyter.registry().call_sync("twice", {"x": 21}).structured
%tool call twice x=4
'''


def test_a_tool_defined_and_called_in_the_same_cell_works(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(shell, DEFINE_AND_CALL)
    assert shell.user_ns["answer"] == 42
    tool = registry.get("twice")
    assert tool.spec.origin.startswith("cell") and "def twice" in (tool.source_code or "")
    assert [r.tool for r in session_history().entries()][-1] == "twice"


def test_tools_of_an_ipy_file_run_by_ipython_are_registered(
    shell: InteractiveShell, registry: Registry, tmp_path
) -> None:
    script = tmp_path / "tools.ipy"
    script.write_text(
        DEFINE_AND_CALL.replace("twice", "thrice").replace("2 * x", "3 * x")
        + '\n@tool\ndef later(y: int) -> int:\n    """Defined after."""\n    return y\n'
        + '@tool\ndef gone(z: int) -> int:\n    """Deleted below."""\n    return z\n'
        + "del gone\n"
    )
    shell.safe_execfile_ipy(str(script), raise_exceptions=True)  # a silent run, as `ipython x.ipy`
    assert shell.user_ns["answer"] == 63
    assert {"thrice", "later"} <= set(registry.names())
    assert "gone" not in registry.names()  # the scan after the silent run saw the `del`
    assert registry.call_sync("later", {"y": 5}).structured == 5


OFFERS_CELL = '''
from nexus_jupyter import prompt, resource

@resource("notes://today")
def today() -> str:
    """Today's notes."""
    return "{text}"

@prompt
def greet(name: str) -> str:
    """Greet someone."""
    return "Hello " + name
'''


async def test_cells_define_resources_and_prompts(
    shell: InteractiveShell, registry: Registry
) -> None:
    from nexus_jupyter.core.registry.catalog import catalog_of

    catalog = catalog_of(registry)
    run_ok(shell, OFFERS_CELL.format(text="first"))
    assert [r.uri for r in catalog.resources()] == ["notes://today"]
    assert [p.name for p in catalog.prompts()] == ["greet"]
    resource = catalog.find_resource("notes://today")
    assert resource is not None
    assert (await resource.read("notes://today"))[0]["text"] == "first"
    run_ok(shell, OFFERS_CELL.format(text="second"))  # a re-run cell replaces them
    resource = catalog.find_resource("notes://today")
    assert resource is not None
    assert (await resource.read("notes://today"))[0]["text"] == "second"
    run_ok(shell, "del today, greet")
    assert catalog.resources() == [] and catalog.prompts() == []


def test_magics_list_resources_and_prompts(shell: InteractiveShell, registry: Registry) -> None:
    run_ok(shell, OFFERS_CELL.format(text="x"))
    resources = shell.run_line_magic("tool", "resources")
    assert "notes://today" in repr(resources) and "Today's notes." in repr(resources)
    assert "<td>notes://today</td>" in resources._repr_html_()
    prompts = shell.run_line_magic("tool", "prompts")
    assert repr(prompts) == "greet  Greet someone.  (name)"
