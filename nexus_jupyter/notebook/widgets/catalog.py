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
from ...render.catalog import entry_html, stale_badge, tool_badges, unserved_text
from ...render.tool_tests import stats_line, test_badge, test_status_html

__all__ = ["Catalog"]

ANY = ""
_LIMIT = 60  # rows drawn at once; the count says how many more match


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
_ROW_STYLE = (
    "<style>.nexus-catalog-row .widget-html-content{min-width:0;overflow:hidden;"
    "flex:1 1 auto}</style>"
)


class Catalog(W.VBox):
    """Every tool of ``registry``: ``search`` box, filter dropdowns, ``rows``, ``details``."""

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
        self.rows = W.VBox(
            layout=W.Layout(
                max_height="420px", overflow_y="auto", width="50%", flex_flow="column nowrap"
            )
        )
        self.rows.add_class("nexus-catalog-rows")
        self.details = W.HTML("<i>Select a tool to see its details.</i>")
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
        for control in (
            self.search,
            self.source_filter,
            self.toolset_filter,
            self.permission_filter,
            self.category_filter,
            self.status_filter,
            self.group_by,
        ):
            control.observe(lambda _: self.refresh(), names="value")
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
        right = W.VBox([self.details, self.try_button], layout=W.Layout(width="50%"))
        super().__init__(
            [
                W.HTML(_ROW_STYLE),
                W.HBox([self.search, self.count]),
                filters,
                W.HBox([self.rows, right]),
                self.form_area,
            ]
        )
        self.add_class("nexus-catalog")
        self._unsubscribe = registry.subscribe(self._on_change)
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
        return [r.children[0].description for r in self.rows.children if isinstance(r, W.HBox)]

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
        with self._drawing:
            self._redraw()

    def _redraw(self) -> None:
        self._update_filter_options()
        entries = self.matches()
        broken = broken_files(self.registry)
        self.stale = {name: f.note() for name, f in stale_tools(self.registry, broken).items()}
        query = self.search.value.strip()
        rows: list[W.Widget] = []
        self.groups = []  # the headings shown, in order (none unless grouped)
        for heading, members in _grouped(entries[:_LIMIT], self.group_by.value, bool(query)):
            if heading is not None:
                rows.append(_heading(heading, len(members)))
                self.groups.append(heading)
            rows.extend(self._row(entry) for entry in members)
        self.rows.children = rows
        more = f" (showing {_LIMIT})" if len(entries) > _LIMIT else ""
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
        """One tool: its name (a button that selects it), badges and first line."""
        button = W.Button(
            description=entry.name,
            tooltip=entry.spec.summary,
            layout=W.Layout(width="auto", min_width="140px", flex="0 0 auto"),
        )
        button.on_click(lambda b: self.select(b.description))
        badges = tool_badges(entry.tool, entry.status, categories=False)
        if entry.name in self.stale:
            badges += stale_badge(self.stale[entry.name])
        badges += self._test_badge(entry.name)
        summary = html.escape(entry.spec.summary)
        # One line per row: a long summary ends in "…" (the whole text is its tooltip)
        # rather than running into the rows below.
        label = W.HTML(
            f"<div class='nexus-catalog-summary' title='{summary}' style='white-space:nowrap;"
            f"overflow:hidden;text-overflow:ellipsis'>{badges}"
            f"<span style='color:var(--jp-ui-font-color1, #444)'>{summary}</span></div>",
            layout=W.Layout(flex="1 1 auto", min_width="0", overflow="hidden"),
        )
        row = W.HBox(
            [button, label],
            layout=W.Layout(flex="0 0 auto", min_height="30px", align_items="center"),
        )
        row.add_class("nexus-catalog-row")
        return row

    def select(self, name: str, *, quiet: bool = False) -> None:
        """Show ``name`` in the details pane."""
        entry = self.registry.snapshot.entries.get(name)
        if entry is None:
            self.selected = None
            self.details.value = f"<i>{html.escape(name)} is gone from the registry.</i>"
            self.try_button.disabled = True
            return
        self.selected = name
        entry = self.registry.entry(name)
        schema = html.escape(json.dumps(dict(entry.spec.input_schema), indent=2, default=str))
        self.details.value = (
            entry_html(entry, stale=self.stale.get(name))
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
        self.form = ToolForm(self.registry.get(self.selected), self.registry, history=self.history)
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
        if self.form is not None:
            self.form.close()
        super().close()
