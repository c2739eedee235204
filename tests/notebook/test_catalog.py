"""The ``%tools`` catalog: rows that leave the summary its line, call counts that follow the
calls, and an empty catalog that says what to do."""

from __future__ import annotations

from collections.abc import Iterator

import ipywidgets as W
import pytest
from nbhelpers import wait_for

from nexus_jupyter import Registry, tool
from nexus_jupyter.notebook import api
from nexus_jupyter.notebook.history import CallHistory
from nexus_jupyter.notebook.widgets.catalog import Catalog


@tool(categories=["math"])
def add(a: int, b: int) -> int:
    """Add two integers, returning their sum; a longer first line than fits beside badges."""
    return a + b


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(search="keyword")
    registry.add_many([add, shout])
    yield registry
    registry.close()


def test_a_rows_summary_has_a_line_of_its_own(reg: Registry) -> None:
    catalog = Catalog(reg)
    row = catalog.rows.children[0]
    button, badges, summary = row.children
    assert button.description == "add" and row.layout.flex_flow == "row wrap"
    # the badges beside the name; the summary under them, across the whole column
    assert "read_only" in badges.value and "add two integers" not in badges.value.lower()
    assert "nexus-catalog-summary-line" in summary._dom_classes
    assert "Add two integers, returning their sum" in summary.value
    assert ">ok<" not in badges.value  # "ok" is the rule; only a problem gets a badge
    # the list and the details share a row (58 : 42) while both fit, else wrap one under
    # the other: a fixed 42% left a narrow window's details 197 px for 351 px of text
    assert catalog.rows.layout.flex == "58 1 380px"
    (pair,) = [c for c in catalog.children if catalog.rows in getattr(c, "children", ())]
    details = pair.children[1]
    # (420 px: a four-column parameter table fits beside the list; at 300 it was cut)
    assert pair.layout.flex_flow == "row wrap" and details.layout.flex == "42 1 420px"
    assert "nexus-catalog-details" in details._dom_classes and details.layout.min_width == "0"
    assert ".nexus-catalog-details pre{white-space:pre-wrap" in catalog.children[0].value
    catalog.close()


def _numbered(name: str) -> object:
    def echo(x: int) -> int:
        """Give ``x`` back."""
        return x

    return tool(name=name)(echo)


def test_every_tool_can_be_reached_past_the_first_rows() -> None:
    many = Registry(search="keyword")
    many.add_many([_numbered(f"t{i:02d}") for i in range(67)])
    catalog = Catalog(many)
    assert len(catalog.names) == 60
    assert "67 tools (showing 60; type to narrow them" in catalog.count.value
    more = catalog.rows.children[-1]
    assert "nexus-catalog-more" in more._dom_classes
    assert "7 more tools match; type in the search box to narrow the list" in more.children[0].value
    assert catalog.more_button.layout.display == "none"  # fewer than 60 left: one button
    assert catalog.all_button.description == "Show 7 more"
    catalog.all_button.click()
    assert len(catalog.names) == 67 and catalog.names[-1] == "t66"
    assert "showing" not in catalog.count.value
    assert not any("nexus-catalog-more" in r._dom_classes for r in catalog.rows.children)
    catalog.search.value = "t"  # a new search starts from its first 60 again
    catalog.search.value = ""
    assert len(catalog.names) == 60
    catalog.close()
    many.close()


def test_show_more_draws_the_next_sixty_and_show_all_the_rest() -> None:
    many = Registry(search="keyword")
    many.add_many([_numbered(f"t{i:03d}") for i in range(150)])
    catalog = Catalog(many)
    assert catalog.more_button.description == "Show 60 more"
    assert catalog.more_button.layout.display is None
    assert catalog.all_button.description == "Show all 90"
    catalog.more_button.click()
    assert len(catalog.names) == 120
    assert catalog.more_button.layout.display == "none"
    assert catalog.all_button.description == "Show 30 more"
    catalog.all_button.click()
    assert len(catalog.names) == 150
    catalog.close()
    many.close()


def test_the_calls_line_follows_calls_from_the_form_and_from_cells(reg: Registry) -> None:
    history = CallHistory()
    catalog = Catalog(reg, history=history)
    catalog.select("add")
    assert "calls: none yet" in catalog.details.value
    form = catalog.open_form()
    form.set_arguments({"a": 1, "b": 2})
    form.run_button.click()
    assert form.result.wait(10)
    wait_for(lambda: "calls: 1, 0 failed" in catalog.details.value)
    api.call_tool("add", {"a": 2, "b": 2}, registry=reg, history=history)  # %tool call
    wait_for(lambda: "calls: 2, 0 failed" in catalog.details.value)
    catalog.close()
    api.call_tool("add", {"a": 2, "b": 2}, registry=reg, history=history)
    assert "calls: 2," in catalog.details.value  # closed: no longer follows


def test_a_search_that_matches_nothing_offers_to_clear_it(reg: Registry) -> None:
    catalog = Catalog(reg)
    catalog.permission_filter.value = "danger_full_access"
    assert catalog.names == []
    (hint,) = catalog.rows.children
    text, clear = hint.children
    assert "No tool matches the filters (2 tools in all)" in text.value
    assert isinstance(clear, W.Button) and clear.description == "Clear the filters"
    catalog.search.value = "zzz"
    clear = catalog.rows.children[0].children[1]
    assert clear.description == "Clear the search and the filters"
    clear.click()
    assert catalog.search.value == "" and catalog.filters() == {}
    assert catalog.names == ["add", "shout"]
    catalog.close()


def test_an_empty_registry_says_how_to_add_a_tool(tmp_path) -> None:
    empty = Registry(search="keyword")
    empty.watch(tmp_path / "tools")
    catalog = Catalog(empty)
    assert "0 tools" in catalog.count.value
    (hint,) = catalog.rows.children
    shown = hint.children[0].value
    assert "No tools yet" in shown and "<code>@tool</code>" in shown
    assert "<code>%%tool</code>" in shown and "tools/</code>" in shown
    catalog.close()
    listing = api.list_tools(registry=empty)
    assert "No tools yet" in listing._repr_html_() and "@tool" in repr_text(listing)
    filtered = api.list_tools(registry=Registry(search="keyword"), category="nope")
    assert "No tools yet" in filtered._repr_html_()
    empty.close()


def test_a_listing_filtered_to_nothing_says_how_to_see_all(reg: Registry) -> None:
    listing = api.list_tools(registry=reg, category="nope")
    assert "No tool matches these filters; <code>%tool list</code> shows all 2." in (
        listing._repr_html_()
    )


def repr_text(view: object) -> str:
    from IPython.lib.pretty import pretty

    return pretty(view)
