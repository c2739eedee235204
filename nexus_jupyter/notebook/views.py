"""What the workbench functions return: plain containers that display as HTML in a notebook
and as readable text in a terminal (the renderers live in ``core/render*.py``)."""

from __future__ import annotations

from typing import Any

from ..render.catalog import (
    entries_html,
    entries_text,
    entry_html,
    entry_text,
    hits_html,
    hits_text,
)
from ..render.results import history_html, history_text

__all__ = ["HelpText", "HistoryView", "SearchView", "ToolInfo", "ToolListView"]


class ToolListView(list[Any]):
    """A list of ``ToolEntry``; ``.names`` for the names; ``.stale`` maps the names of tools
    whose file failed to reload (the last good version is live) to what went wrong;
    ``.failed`` says which tool files failed to load (their tools are not listed)."""

    def __init__(
        self,
        entries: Any = (),
        stale: dict[str, str] | None = None,
        failed: Any = (),
        hint: tuple[str, str] = ("", ""),
    ) -> None:
        super().__init__(entries)
        self.stale = stale or {}
        self.failed: list[str] = list(failed)
        #: what to do about an empty list, as (text, HTML)
        self.hint = hint

    @property
    def names(self) -> list[str]:
        return [e.name for e in self]

    def _repr_html_(self) -> str:
        return entries_html(list(self), stale=self.stale, failed=self.failed, hint=self.hint[1])

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(entries_text(list(self), stale=self.stale, failed=self.failed, hint=self.hint[0]))


class SearchView(list[Any]):
    """Ranked ``SearchHit``s for ``query``; ``.names`` in rank order."""

    def __init__(
        self,
        query: str,
        hits: list[Any],
        unserved: list[str] | None = None,
        searched_for: str = "",
    ) -> None:
        super().__init__(hits)
        self.query = query
        #: Services the query names that no installed tool works with (why it is empty).
        self.unserved = unserved or []
        #: The query as search read it (misspelt words corrected); ``query`` when unchanged.
        self.searched_for = searched_for or query

    @property
    def names(self) -> list[str]:
        return [h.name for h in self]

    def _repr_html_(self) -> str:
        return hits_html(self.query, list(self), self.unserved, self.searched_for)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(hits_text(self.query, list(self), self.unserved, self.searched_for))


class ToolInfo:
    """One ``ToolEntry`` shown as a card; ``.entry``, ``.tool``, ``.spec``; ``.stale`` says
    what is wrong with its file when that failed to reload (else ``None``)."""

    def __init__(
        self,
        entry: Any,
        stale: str | None = None,
        tests: Any = None,
        stats: Any = None,
        version: str | None = None,
    ) -> None:
        self.entry = entry
        self.stale = stale
        #: the version's id as shown (``#3 97c1a6b626``: what ``%tool rollback`` takes)
        self.version = version
        self.tests = tests  # its TestStatus
        self.stats = stats  # its ToolStats (None before the first call)
        self.tool = entry.tool
        self.spec = entry.tool.spec

    @property
    def name(self) -> str:
        return str(self.spec.name)

    def _repr_html_(self) -> str:
        from ..render.tool_tests import stats_line, test_status_html

        tests = test_status_html(self.tests) if self.tests is not None else ""
        calls = f"<p style='color:#666'>{stats_line(self.stats)}</p>"
        return entry_html(self.entry, stale=self.stale, version=self.version) + tests + calls

    def _text(self) -> str:
        from ..render.tool_tests import stats_line, test_status_text

        lines = [entry_text(self.entry, stale=self.stale, version=self.version)]
        if self.tests is not None:
            lines.append("  " + test_status_text(self.tests).replace("\n", "\n  "))
        lines.append("  " + stats_line(self.stats))
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self._text())

    def __repr__(self) -> str:
        return self._text()


class HistoryView(list[Any]):
    """``CallRecord``s, oldest first."""

    def _repr_html_(self) -> str:
        return history_html(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(history_text(self))


class HelpText(str):
    """Help or a short message shown as plain text (not as a quoted string) in a notebook
    and a terminal; still a ``str`` for code that keeps it."""

    __slots__ = ()

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(str(self))}</pre>"
