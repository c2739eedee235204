"""The catalog: search as you type, filters, rows grouped by toolset or source (or not), a
result list with badges, a details pane and a Try button that opens the test-call form. It refreshes itself on registry events (which
arrive on other threads; ipykernel sends the trait updates from there)."""

from __future__ import annotations

import html
import json
import threading
from typing import Any

import ipywidgets as W

from ...core.registry.file_health import broken_files, stale_tools
from ...core.tools.spec import PERMISSIONS
from ...render.catalog import (
    add_tools_hint,
    entry_html,
    tool_badges,
    unserved_text,
)
from ...render.tool_tests import stats_line, test_badge, test_status_html
from .terminal import TerminalText

__all__ = ["Catalog"]

ANY = ""
_LIMIT = 60  # rows drawn at first; "show more" draws the next ones, "show all" the rest


def _dropdown(label: str, options: list[str]) -> W.Dropdown:
    return W.Dropdown(
        options=[(f"any {label}", ANY), *[(o, o) for o in options]],
        value=ANY,
        description=label,
        layout=W.Layout(width="250px"),
        style={"description_width": "80px"},  # "permission" fits
    )


def _grouped(entries: list[Any], by: str, ranked: bool) -> list[tuple[str | None, list[Any]]]:
    """``entries`` in groups (``by`` ``toolset`` or ``source``; ``""``: one group, no heading).
    Browsing: groups by name, the tools in no toolset last. Search results (``ranked``):
    the group of the best hit first."""
    if not by:
        return [(None, entries)]
    groups: dict[str, list[Any]] = {}
    for entry in entries:
        groups.setdefault(getattr(entry.spec, by) or "", []).append(entry)
    keys = list(groups) if ranked else sorted(groups, key=lambda k: (k == "", k))
    label = "Toolset" if by == "toolset" else "Source"
    return [(f"{label} · {k}" if k else f"In no {by}", groups[k]) for k in keys]


def _heading(title: str, count: int) -> W.HTML:
    heading = W.HTML(
        f"<b>{html.escape(title)}</b> <span style='color:#888'>{count}</span>",
        layout=W.Layout(flex="0 0 auto", margin="6px 0 0 0"),
    )
    heading.add_class("nexus-catalog-group")
    return heading


#: ipywidgets wraps an HTML widget's text in a flex item that grows to fit it, so a row's
#: summary was cut at the column's edge mid-word; letting that item shrink makes it end in "…".
#: A row is the name and its badges, with the summary on a line of its own under them: beside
#: them it had what the badges left of the column (often a few words).
#: The details pane wraps its text (a long word or JSON line breaks, or scrolls sideways in
#: the schema), and goes under the list when the two do not fit side by side. Its parameter
#: table is as wide as the pane: its description column may break anywhere rather than go
#: past the pane's edge (it was cut there at ~850 px beside the list); headings and the other
#: cells break between words only.
_ROW_STYLE = (
    "<style>.nexus-catalog-row .widget-html-content{min-width:0;overflow:hidden;"
    "flex:1 1 auto}.nexus-catalog-row .nexus-catalog-summary-line{flex:1 0 100%;"
    "margin:-4px 0 2px 6px}.nexus-catalog-details .widget-html-content{min-width:0;"
    "overflow-wrap:break-word}.nexus-catalog-details pre{white-space:pre-wrap;"
    "overflow-x:auto}.nexus-catalog-details table{width:100%;max-width:100%;"
    "table-layout:auto}.nexus-catalog-details th{white-space:nowrap;padding:4px 6px}"
    ".nexus-catalog-details td{white-space:normal;overflow-wrap:break-word;padding:4px 6px}"
    ".nexus-catalog-details td:last-child{overflow-wrap:anywhere}</style>"
)


class Catalog(TerminalText, W.VBox):
    """Every tool of ``registry``: ``search`` box, filter dropdowns, ``rows``, ``details``."""

    def __repr__(self) -> str:
        """What a terminal (``ipython``) shows instead of the widget: how to list there."""
        count = len(self.registry.snapshot.entries)
        return (
            f"The tool catalog ({count} tools) is interactive: it needs a notebook front end "
            "(JupyterLab, Notebook, VS Code). Here, `%tool list` lists the tools and "
            "`%tool search QUERY` searches them."
        )

    def __init__(self, registry: Any, *, query: str = "", history: Any = None) -> None:
        self.registry, self.history = registry, history
        self.search = W.Text(
            value=query,
            placeholder="search tools…",
            continuous_update=True,
            layout=W.Layout(width="50%"),
        )
        self.source_filter = _dropdown("source", [])
        self.toolset_filter = _dropdown("toolset", [])
        self.permission_filter = _dropdown("permission", list(PERMISSIONS))
        self.category_filter = _dropdown("category", [])
        self.status_filter = _dropdown("status", ["ok", "unavailable", "error"])
        self.group_by = W.Dropdown(
            options=[("no groups", ANY), ("by toolset", "toolset"), ("by source", "source")],
            value=ANY,
            description="group",
            layout=W.Layout(width="250px"),
            style={"description_width": "80px"},
        )
        self.count = W.HTML("")
        # A scrolling column: its rows must keep their height (flex 0 0 auto below) instead
        # of shrinking to fit the box, which squashed 64 rows into slivers.
        # The list and the details side by side (58 : 42 of the width) while each has its
        # room (flex-basis), the details under the list when the cell is narrower.
        self.rows = W.VBox(
            layout=W.Layout(
                max_height="460px",
                overflow_y="auto",
                flex="58 1 380px",
                min_width="0",
                flex_flow="column nowrap",
            )
        )
        self.rows.add_class("nexus-catalog-rows")
        self.limit = _LIMIT  # rows drawn; "show more" raises it, a new search resets it
        self.more_button = W.Button(
            description=f"Show {_LIMIT} more",
            icon="chevron-down",
            layout=W.Layout(width="auto", flex="0 0 auto"),
        )
        self.more_button.on_click(lambda _: self.show_more())
        self.all_button = W.Button(
            description="Show all", layout=W.Layout(width="auto", flex="0 0 auto")
        )
        self.all_button.on_click(lambda _: self.show_more(all_of_them=True))
        self.details = W.HTML(
            "<i>Select a tool to see its details.</i>", layout=W.Layout(min_width="0")
        )
        self.try_button = W.Button(
            description="Try", icon="play", disabled=True, button_style="primary"
        )
        self.try_button.on_click(lambda _: self.open_form())
        self.form_area = W.VBox()
        self.selected: str | None = None
        self.stale: dict[str, str] = {}  # tool name -> why its file failed to reload
        self.groups: list[str] = []  # the group headings shown, in order
        # how the last search read its query: as read (spelling) and the unserved services
        self._read_as: tuple[str, list[str]] = ("", [])
        self.form: Any = None
        # Registry changes redraw from the subscriber's thread while a control's change
        # redraws from the kernel's: one at a time, each reading the controls when it starts
        # (an ungrouped redraw begun before "group by" was chosen could otherwise land last).
        self._drawing = threading.RLock()
        self._holding = False  # several controls change at once: redraw after the last
        for control in (
            self.search,
            self.source_filter,
            self.toolset_filter,
            self.permission_filter,
            self.category_filter,
            self.status_filter,
            self.group_by,
        ):
            control.observe(lambda _: self._controls_changed(), names="value")
        filters = W.HBox(
            [
                self.source_filter,
                self.toolset_filter,
                self.permission_filter,
                self.category_filter,
                self.status_filter,
                self.group_by,
            ],
            layout=W.Layout(flex_flow="row wrap"),
        )
        right = W.VBox(
            [self.details, self.try_button],
            # 420 px: a parameter table of four columns fits beside the list (at 300 it was
            # cut at ~850 px); narrower, the details go under the list
            layout=W.Layout(flex="42 1 420px", min_width="0", padding="0 0 0 8px"),
        )
        right.add_class("nexus-catalog-details")
        super().__init__(
            [
                W.HTML(_ROW_STYLE),
                W.HBox([self.search, self.count]),
                filters,
                W.HBox([self.rows, right], layout=W.Layout(flex_flow="row wrap")),
                self.form_area,
            ]
        )
        self.add_class("nexus-catalog")
        self._unsubscribe = registry.subscribe(self._on_change)
        # A call counts in the selected tool's "calls:" line: redraw it after each one the
        # notebook makes (a form anywhere, %tool call), as the form opened here does too.
        self._unfollow_calls = (
            history.subscribe(lambda _record: self.refresh_details())
            if history is not None
            else None
        )
        self.refresh()

    # -- what matches ---------------------------------------------------------------------

    def filters(self) -> dict[str, Any]:
        chosen = {
            "source": self.source_filter.value,
            "toolset": self.toolset_filter.value,
            "permission": self.permission_filter.value,
            "category": self.category_filter.value,
            "status": self.status_filter.value,
        }
        return {k: v for k, v in chosen.items() if v != ANY}

    def matches(self) -> list[Any]:
        """The entries shown: ranked by the query, or all by name when there is none."""
        query, filters = self.search.value.strip(), self.filters()
        self._read_as = (query, [])
        if not query:
            return list(self.registry.entries(**filters))
        found = self.registry.search_results(query, limit=200, **filters)
        self._read_as = (found.searched_for, list(found.unserved))
        entries = []
        for hit in found.hits:
            try:
                entries.append(self.registry.entry(hit.name))
            except Exception:
                continue  # removed between the search and now
        return entries

    @property
    def names(self) -> list[str]:
        """Names of the rows shown, in order (group headings left out)."""
        return [
            r.children[0].description
            for r in self.rows.children
            if "nexus-catalog-row" in r._dom_classes
        ]

    def show_more(self, *, all_of_them: bool = False) -> None:
        """Draw the next :data:`_LIMIT` matching tools (every one with ``all_of_them``)."""
        self.limit = 10**9 if all_of_them else self.limit + _LIMIT
        self.refresh()

    def _controls_changed(self) -> None:
        self.limit = _LIMIT  # a new search or filter starts from its best rows again
        self.refresh()

    # -- drawing --------------------------------------------------------------------------

    def _update_filter_options(self) -> None:
        entries = self.registry.entries()
        sources = sorted({e.spec.source for e in entries if e.spec.source})
        categories = sorted({c for e in entries for c in e.spec.categories})
        toolsets = sorted({e.spec.toolset for e in entries if e.spec.toolset})
        for dropdown, values, label in (
            (self.source_filter, sources, "source"),
            (self.toolset_filter, toolsets, "toolset"),
            (self.category_filter, categories, "category"),
        ):
            current = dropdown.value
            options = [(f"any {label}", ANY), *[(v, v) for v in values]]
            if list(dropdown.options) != options:
                dropdown.options = options
                dropdown.value = current if current in values else ANY

    def refresh(self) -> None:
        """Redraw the rows (and the details of the selected tool)."""
        if self._holding:
            return
        with self._drawing:
            self._redraw()

    def refresh_details(self) -> None:
        """Redraw the details of the selected tool (its calls after a call)."""
        with self._drawing:
            if self.selected is not None:
                self.select(self.selected, quiet=True)

    def _redraw(self) -> None:
        self._update_filter_options()
        entries = self.matches()
        broken = broken_files(self.registry)
        self.stale = {name: f.note() for name, f in stale_tools(self.registry, broken).items()}
        query = self.search.value.strip()
        rows: list[W.Widget] = []
        self.groups = []  # the headings shown, in order (none unless grouped)
        shown = entries[: self.limit]
        for heading, members in _grouped(shown, self.group_by.value, bool(query)):
            if heading is not None:
                rows.append(_heading(heading, len(members)))
                self.groups.append(heading)
            rows.extend(self._row(entry) for entry in members)
        if len(entries) > len(shown):
            rows.append(self._more_row(len(entries) - len(shown)))
        self.rows.children = rows or [self._empty_hint()]
        more = (
            f" (showing {len(shown)}; type to narrow them, or show more at the end of the list)"
            if len(entries) > len(shown)
            else ""
        )
        spelled, unserved = self._read_as  # how the search of matches() read the query
        if unserved:
            more = f": {html.escape(unserved_text(unserved))}"
        if spelled != query:  # misspelt words were read as the catalogue's own
            more += f" (searched for <i>{html.escape(spelled)}</i>)"
        noun = "tool" if len(entries) == 1 else "tools"
        self.count.value = f"<span style='color:#666'>{len(entries)} {noun}{more}</span>" + "".join(
            f"<div style='color:#b71c1c'>{html.escape(f.file_name)} failed to load: "
            f"{html.escape(f.error)}</div>"
            for f in broken
        )
        if self.selected is not None:
            self.select(self.selected, quiet=True)

    def _row(self, entry: Any) -> W.HBox:
        """One tool: its name (a button that selects it) and badges, and under them its
        summary across the whole column."""
        button = W.Button(
            description=entry.name,
            tooltip=entry.spec.summary,
            layout=W.Layout(width="auto", min_width="120px", flex="0 0 auto"),
        )
        button.on_click(lambda b: self.select(b.description))
        badges = tool_badges(
            entry.tool,
            entry.status,
            categories=False,
            ok_badge=False,
            stale=self.stale.get(entry.name),
        )
        badges += self._test_badge(entry.name)
        one_line = "white-space:nowrap;overflow:hidden;text-overflow:ellipsis"
        label = W.HTML(
            f"<div class='nexus-catalog-badges' style='{one_line}'>{badges}</div>",
            layout=W.Layout(flex="1 1 auto", min_width="0", overflow="hidden"),
        )
        summary = html.escape(entry.spec.summary)
        # One line: a long summary ends in "…" (the whole text is its tooltip) rather than
        # running into the rows below.
        line = W.HTML(
            f"<div class='nexus-catalog-summary' title='{summary}' style='{one_line};"
            f"color:var(--jp-ui-font-color1, #444)'>{summary or '<i>no description</i>'}</div>",
            layout=W.Layout(min_width="0", overflow="hidden"),
        )
        line.add_class("nexus-catalog-summary-line")
        row = W.HBox(
            [button, label, line],
            layout=W.Layout(
                flex="0 0 auto", min_height="30px", align_items="center", flex_flow="row wrap"
            ),
        )
        row.add_class("nexus-catalog-row")
        return row

    def _more_row(self, hidden: int) -> W.Widget:
        """Under the last row drawn: how many more match, a hint that typing narrows them,
        and the buttons that draw the next ones or all of them."""
        step = min(_LIMIT, hidden)
        self.more_button.description = f"Show {step} more"
        self.more_button.layout.display = None if hidden > step else "none"
        self.all_button.description = (
            f"Show all {hidden}" if hidden > step else f"Show {hidden} more"
        )
        text = W.HTML(
            f"<i style='color:#666'>{hidden} more tool{'s' if hidden != 1 else ''} match; "
            "type in the search box to narrow the list.</i>"
        )
        box = W.HBox(
            [text, self.more_button, self.all_button],
            layout=W.Layout(flex="0 0 auto", flex_flow="row wrap", align_items="center"),
        )
        box.add_class("nexus-catalog-more")
        return box

    def _empty_hint(self) -> W.Widget:
        """Shown instead of rows: clear the search and filters, or how to add a tool."""
        from ..api import tools_folders

        searched, filtered = bool(self.search.value.strip()), bool(self.filters())
        total = len(self.registry.entries()) if searched or filtered else 0
        if total:
            what = " and ".join(
                w for w, on in (("the search", searched), ("the filters", filtered)) if on
            )
            text = W.HTML(f"<i>No tool matches {what} ({total} tools in all).</i>")
            clear = W.Button(
                description=f"Clear {what}", icon="times", layout=W.Layout(width="auto")
            )
            clear.on_click(lambda _: self.clear_filters())
            box = W.VBox([text, clear], layout=W.Layout(align_items="flex-start"))
        else:
            box = W.VBox(
                [W.HTML(add_tools_hint(tools_folders(self.registry), as_html=True))],
                layout=W.Layout(padding="4px"),
            )
        box.add_class("nexus-catalog-empty")
        return box

    def clear_filters(self) -> None:
        """Empty the search box and set every filter back to "any"."""
        self._holding = True  # one redraw at the end, not one per control
        try:
            for control in (
                self.source_filter,
                self.toolset_filter,
                self.permission_filter,
                self.category_filter,
                self.status_filter,
            ):
                control.value = ANY
            self.search.value = ""
        finally:
            self._holding = False
        self.refresh()

    def select(self, name: str, *, quiet: bool = False) -> None:
        """Show ``name`` in the details pane."""
        entry = self.registry.snapshot.entries.get(name)
        if entry is None:
            self.selected = None
            self.details.value = f"<i>{html.escape(name)} is gone from the registry.</i>"
            self.try_button.disabled = True
            return
        from ...sources.versions import shown_version

        self.selected = name
        entry = self.registry.entry(name)
        schema = html.escape(json.dumps(dict(entry.spec.input_schema), indent=2, default=str))
        self.details.value = (
            entry_html(entry, stale=self.stale.get(name), version=shown_version(entry.spec))
            + self._tests_and_calls(name)
            + "<details><summary>JSON schema</summary>"
            f"<pre>{schema}</pre></details>"
        )
        self.try_button.disabled = False

    def open_form(self) -> Any:
        """Open the test-call form of the selected tool below the catalog."""
        if self.selected is None:
            return None
        from .form import ToolForm

        if self.form is not None:
            self.form.close()
        self.form = ToolForm(
            self.registry.get(self.selected),
            self.registry,
            history=self.history,
            on_called=self.refresh_details,
        )
        self.form_area.children = [self.form]
        return self.form

    def _test_badge(self, name: str) -> str:
        try:
            return test_badge(self.registry.test_status(name))
        except Exception:  # gone since the listing, or a store failed: no badge
            return ""

    def _tests_and_calls(self, name: str) -> str:
        try:
            tests = test_status_html(self.registry.test_status(name))
        except Exception as exc:
            tests = f"<p style='color:#b71c1c'>tests: {html.escape(str(exc))}</p>"
        calls = stats_line(self.registry.stats().get(name))
        return f"{tests}<p style='color:#666'>{html.escape(calls)}</p>"

    # -- events ---------------------------------------------------------------------------

    def _on_change(self, change: Any) -> None:
        if change.tools_changed or change.sources or change.tests:
            self.refresh()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._unfollow_calls is not None:
            self._unfollow_calls()
            self._unfollow_calls = None
        if self.form is not None:
            self.form.close()
        super().close()
