"""``%tool toolsets``, ``%tool mode`` and call summaries in the notebook's result panes
and history (a real IPython shell; the Python API and the magic)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import Face, run_ok

from nexus_jupyter import Registry
from nexus_jupyter.core.tools.context import NOTEBOOK_CALLER, RequestInfo
from nexus_jupyter.notebook.history import session_history
from nexus_jupyter.render.results import result_html
from nexus_jupyter.session import reset_session_registry

CALC = '''
from nexus_jupyter import tool

@tool(summary="Calculating: {a} {operation} {b}")
def calc(a: int, operation: str, b: int) -> int:
    """Apply add or mul to two integers."""
    return a + b if operation == "add" else a * b
'''


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    reg = Registry.default(
        root=tmp_path,
        config={"audit": False, "toolsets": {"web": {"enabled": False}}},
        watch=False,
        mcp=False,
        search="keyword",
    )
    reset_session_registry(reg)
    session_history().clear()
    yield reg
    reset_session_registry(None)
    reg.close()


# the conftest's `shell` fixture loads the extension over this module's `registry`


def test_toolsets_lists_builtin_toolsets_and_their_state(shell: InteractiveShell) -> None:
    table = shell.run_line_magic("tool", "toolsets")
    text = repr(table)
    assert "bash" in text.split("shell", 1)[1].splitlines()[0]
    assert any(line.startswith("web") and " off " in line for line in text.splitlines())
    assert "<code>tool_search</code>" in table._repr_html_()
    assert [r["toolset"] for r in shell.run_line_magic("tool", "toolsets meta").rows] == ["meta"]
    with pytest.raises(UsageError, match="No toolset 'nope'"):
        shell.run_line_magic("tool", "toolsets nope")


def test_mode_prompt_and_allow_change_what_asks(
    shell: InteractiveShell, registry: Registry
) -> None:
    request = RequestInfo(caller=NOTEBOOK_CALLER)
    write, bash = registry.get("write").spec, registry.get("bash").spec
    assert shell.run_line_magic("tool", "mode") == "mode: default"
    assert registry.policy.check(write, {}, request).action == "allow"
    assert shell.run_line_magic("tool", "mode prompt") == "mode: prompt"
    assert registry.policy.check(write, {}, request).action == "ask"
    assert registry.policy.check(registry.get("read").spec, {}, request).action == "allow"
    shell.run_line_magic("tool", "mode allow")
    assert registry.policy.check(bash, {"command": "ls"}, request).action == "allow"
    with pytest.raises(UsageError, match="Unknown mode 'yolo'"):
        shell.run_line_magic("tool", "mode yolo")


@pytest.mark.parametrize("kind", ["func", "magic"])
def test_summaries_show_in_result_panes_and_history(shell: InteractiveShell, kind: str) -> None:
    run_ok(shell, CALC)
    face = Face(kind, shell)
    result = face.call("calc", {"a": 2, "operation": "add", "b": 3})
    assert result.value == 5 and result.summary == "Calculating: 2 add 3"
    assert "Calculating: 2 add 3" in result_html(result)
    history = face.history()
    assert history[-1].summary == "Calculating: 2 add 3"
    assert "Calculating: 2 add 3" in history._repr_html_()


def test_the_form_result_pane_shows_the_summary(
    shell: InteractiveShell, registry: Registry
) -> None:
    from nexus_jupyter.notebook.widgets.result import ResultPane

    run_ok(shell, CALC)
    pane = ResultPane()
    pane.show_result(registry.call_sync("calc", {"a": 4, "operation": "mul", "b": 5}))
    assert "Calculating: 4 mul 5" in pane.status.value


def test_the_catalog_filters_by_toolset(shell: InteractiveShell, registry: Registry) -> None:
    from nexus_jupyter.notebook.widgets.catalog import Catalog

    catalog = Catalog(registry)
    try:
        assert ("files", "files") in catalog.toolset_filter.options
        catalog.toolset_filter.value = "files"
        assert catalog.names == ["edit", "glob", "grep", "ls", "read", "write"]
        catalog.toolset_filter.value = "meta"
        assert catalog.names == ["create_dynamic_tool", "tool_search"]
        assert "toolset meta" in catalog.rows.children[0].children[1].value
    finally:
        catalog.close()


def test_a_redraw_begun_before_grouping_cannot_land_after_it(registry: Registry) -> None:
    """A registry change redraws the catalog from the subscriber's thread; if that redraw
    read the controls before "group by" changed, it must not replace the grouped rows."""
    import threading

    from nexus_jupyter.notebook.widgets.catalog import Catalog

    catalog = Catalog(registry)
    drawing, release = threading.Event(), threading.Event()
    draw_row = catalog._row

    def slow_row(entry: object) -> object:  # the subscriber's redraw, held mid-way
        if threading.current_thread() is not threading.main_thread() and not drawing.is_set():
            drawing.set()
            release.wait(5)
        return draw_row(entry)

    catalog._row = slow_row  # type: ignore[method-assign]
    background = threading.Thread(target=catalog.refresh)
    try:
        background.start()
        assert drawing.wait(5)
        threading.Timer(0.3, release.set).start()
        catalog.group_by.value = "toolset"  # the kernel's redraw, after the other began
        background.join(5)
        assert catalog.groups[:1] == ["Toolset · files"], catalog.groups
        assert getattr(catalog.rows.children[0], "value", "").startswith("<b>Toolset")
    finally:
        release.set()
        catalog.close()


def test_the_catalog_groups_by_toolset_or_source(
    shell: InteractiveShell, registry: Registry
) -> None:
    from nexus_jupyter.notebook.widgets.catalog import Catalog

    run_ok(shell, CALC)  # a notebook tool: in no toolset
    catalog = Catalog(registry)
    try:
        assert catalog.groups == []
        catalog.group_by.value = "toolset"
        assert catalog.groups == [
            "Toolset · files",
            "Toolset · meta",
            "Toolset · shell",
            "In no toolset",
        ]
        assert catalog.names[:6] == ["edit", "glob", "grep", "ls", "read", "write"]
        assert catalog.names[-1] == "calc"
        catalog.toolset_filter.value = "shell"
        assert (catalog.groups, catalog.names) == (["Toolset · shell"], ["bash"])
        catalog.toolset_filter.value = ""
        catalog.group_by.value = "source"
        assert catalog.groups == ["Source · builtin", "Source · notebook"]
    finally:
        catalog.close()
