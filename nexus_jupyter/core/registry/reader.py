"""The reading half of the registry: lookups, listings, suggestions and search.

Everything here reads the current immutable snapshot without locking, so it is safe from any
thread while sources publish.
"""

from __future__ import annotations

import atexit
import builtins
import difflib
import logging
import threading
import weakref
from typing import TYPE_CHECKING, Any

from ..errors import ToolNotFound, how_to_set_credential
from ..tools.tool import Tool
from .state import Snapshot, ToolEntry

if TYPE_CHECKING:
    from ..policy.protocols import Credentials
    from ..search.index import SearchHit, SearchIndex
    from ..search.options import SearchSetting
    from ..search.results import SearchResults

__all__ = ["RegistryReader"]

log = logging.getLogger(__name__)


class RegistryReader:
    """Lookups and search over the current :attr:`snapshot`, which writers replace whole
    (:class:`~nexus_jupyter.core.registry.writer.RegistryWriter` builds on this class).

    ``credentials`` decide live availability (a tool that needs a missing credential is listed
    as unavailable); ``search`` (a mode name or search options, see ``Registry``) and
    ``search_threshold`` configure the index built on first use.
    """

    def __init__(
        self,
        *,
        search: SearchSetting = "auto",
        search_threshold: float | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        from ..search.options import SearchOptions

        # checked now, not at the first search: a bad setting is the caller's to hear at once
        SearchOptions.coerce(search).with_threshold(search_threshold)
        self.search_mode = search
        self.search_threshold = search_threshold
        self.credentials: Credentials | None = credentials
        self._lock = threading.RLock()  # serialises writers; readers never take it
        self._snapshot = Snapshot({}, 0)
        self._index: SearchIndex | None = None

    # -- reading --------------------------------------------------------------------------

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def __len__(self) -> int:
        return len(self._snapshot.entries)

    def __contains__(self, name: object) -> bool:
        return name in self._snapshot.entries

    def __iter__(self) -> Any:
        return iter(self.list())

    def find(self, name: str) -> Tool | None:
        entry = self._snapshot.entries.get(name)
        return entry.tool if entry is not None else None

    def get(self, name: str) -> Tool:
        """The tool called ``name``. Raises :class:`ToolNotFound` with close names."""
        entry = self._snapshot.entries.get(name)
        if entry is None:
            raise self.not_found(name)
        return entry.tool

    def entry(self, name: str) -> ToolEntry:
        """The tool, its status and what it shadows. Raises :class:`ToolNotFound`."""
        entry = self._snapshot.entries.get(name)
        if entry is None:
            raise self.not_found(name)
        return self._with_live_status(entry)

    def _with_live_status(self, entry: ToolEntry) -> ToolEntry:
        if entry.status != "ok" or self.credentials is None or not entry.spec.requires_credentials:
            return entry
        missing = self.credentials.missing(entry.spec)
        if not missing:
            return entry
        service, _, key = missing[0].partition("/")
        named = ", ".join(repr(m) for m in missing)
        reason = f"missing credential {named}; set it with {how_to_set_credential(service, key)}"
        return ToolEntry(entry.tool, "unavailable", reason, entry.shadowed)

    def entries(self, **filters: Any) -> list[ToolEntry]:
        """Entries sorted by name, filtered by ``source``, ``source_kind``, ``permission``,
        ``category``, ``capability``, ``status`` or ``available``."""
        from .filters import entry_filter

        keep = entry_filter(**filters)
        out = [self._with_live_status(e) for e in self._snapshot.entries.values()]
        return sorted((e for e in out if keep(e)), key=lambda e: e.name)

    def list(self, **filters: Any) -> builtins.list[Tool]:
        """Tools sorted by name; same filters as :meth:`entries`."""
        return [e.tool for e in self.entries(**filters)]

    def names(self) -> builtins.list[str]:
        return sorted(self._snapshot.entries)

    def suggest(self, text: str, limit: int = 3) -> builtins.list[str]:
        """Names close to ``text`` ("did you mean")."""
        names = list(self._snapshot.entries)
        lowered = {n.lower(): n for n in names}
        close = difflib.get_close_matches(text.lower(), list(lowered), n=limit, cutoff=0.6)
        out = [lowered[c] for c in close]
        if len(out) < limit:
            out += [n for n in names if text.lower() in n.lower() and n not in out][
                : limit - len(out)
            ]
        return out

    def not_found(self, name: str) -> ToolNotFound:
        """The error for a missing ``name``: close names, the file that failed to load when
        one would define it, or how it left (its file was deleted)."""
        from .file_health import how_it_left, why_missing

        known = hasattr(self, "sources")
        broken = why_missing(self, name) if known else None
        cause = broken.missing_cause() if broken is not None else None
        gone = how_it_left(self, name) if known and cause is None else None
        return ToolNotFound(name, self.suggest(name), cause, gone=gone)

    # -- search ---------------------------------------------------------------------------

    @property
    def search_index(self) -> SearchIndex:
        """The search index, built on first use and kept up to date from then on."""
        if self._index is None:
            with self._lock:
                if self._index is None:
                    from ..search.index import SearchIndex

                    index = SearchIndex(self.search_mode, threshold=self.search_threshold)
                    index.update(upserts=[e.tool.spec for e in self._snapshot.entries.values()])
                    self._index = index
        return self._index

    def warm_search(self) -> threading.Thread:
        """Build the search index and embed every tool on a background thread, so the first
        search of a long-lived session (a kernel, the Jupyter server, ``nexus-tools serve``)
        does not wait for the model. Returns the thread (a daemon).

        It also imports the JSON Schema validator first (seconds here), which checks the
        arguments of MCP tools, agents' tools and tool files run in worker processes: their
        first call should not pay for it either."""

        def run() -> None:
            try:
                from ..tools.jsonschema_check import warm_up

                warm_up()
                self.search_index.warm()
            except Exception:
                log.warning(
                    "warming the search index failed; the first search will do it", exc_info=True
                )

        thread = threading.Thread(target=run, name="nexus-search-warm", daemon=True)
        thread.start()
        # A process that exits while the model runs aborts: stop between two chunks first.
        atexit.register(_stop_warming, weakref.ref(self))
        return thread

    def search(
        self, query: str, limit: int = 10, *, threshold: float | None = None, **filters: Any
    ) -> builtins.list[SearchHit]:
        """Ranked hits for ``query``; filters as in :meth:`entries`. A query no tool serves
        returns ``[]`` (see :meth:`suggest` for near names)."""
        return builtins.list(self.search_results(query, limit, threshold=threshold, **filters).hits)

    def search_results(
        self, query: str, limit: int = 10, *, threshold: float | None = None, **filters: Any
    ) -> SearchResults:
        """:meth:`search`'s hits together with how search read ``query``: ``searched_for``
        (as :meth:`spelled` gives it) and ``unserved`` (as :meth:`unserved_services`), from
        one pass over one state of the index. What a face that shows all three should call."""
        from .filters import entry_filter

        keep = entry_filter(**filters)
        entries = self._snapshot.entries

        def spec_filter(spec: Any) -> bool:
            entry = entries.get(spec.name)
            return entry is not None and keep(self._with_live_status(entry))

        use = spec_filter if filters else None
        return self.search_index.search_results(query, limit, filter=use, threshold=threshold)

    def find_tools(self, **job: Any) -> builtins.list[ToolEntry]:
        """The entries that can do a job (``capabilities``, ``categories``,
        ``available_only``, ``prefer_source``), best first; see :mod:`.availability`."""
        from .availability import find_tools

        return find_tools(self.entries(), **job)

    def spelled(self, query: str) -> str:
        """``query`` as search reads it, misspelt words corrected ("serach" -> "search");
        ``query`` itself when nothing is. See :meth:`.SearchIndex.spelled`."""
        return self.search_index.spelled(query)

    def unserved_services(self, query: str) -> builtins.list[str]:
        """Services ``query`` names that no tool here works with (``["Acmeboard"]`` for "add a
        card to our Acmeboard board" when no tool mentions it): why its hits are few or none."""
        return self.search_index.unserved_services(query)


def _stop_warming(reader: weakref.ref[RegistryReader]) -> None:
    """At exit: stop the warm-up of ``reader``'s search index, if both still exist."""
    live = reader()
    index = live._index if live is not None else None
    if index is not None:
        index.stop_warming()
