"""What a search returns: its hits, and how it read the query.

:class:`SearchResults` is one search's whole answer, computed in one pass under the index's
lock: the hits, the query as search read it (``searched_for``, misspelt words corrected) and
the services it names that no tool works with (``unserved``). Every face shows all three
(``tool_search``, REST, the CLI, ``%tool search``, the catalog), so they come from the same
reading of the same index: a registry change between three separate calls could otherwise
show hits for one reading next to another.

>>> from nexus_jupyter.core.tools.spec import ToolSpec
>>> hit = SearchHit("list_directory", 0.8, ToolSpec("list_directory", "List a folder."))
>>> found = SearchResults("lsit folder", "list folder", (hit,), ())
>>> found.names, found.respelled
(['list_directory'], True)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..tools.spec import ToolSpec

__all__ = ["SearchHit", "SearchResults"]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One result. ``score`` is its confidence in [0, 1] on a scale shared by every query
    of one mode (see :mod:`.index`), never above the score of the hit before it;
    ``matched`` names the fields the query met (``"name"``, ``"description"``, ...,
    ``"semantic"`` for a match by meaning)."""

    name: str
    score: float
    spec: ToolSpec
    matched: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchResults:
    """One search: ``query`` as asked, ``searched_for`` as read (the ``spelling`` signal's
    corrections; ``query`` itself when none), the ``hits`` best first (empty when no tool is
    confident) and the ``unserved`` services the query names that no indexed tool mentions
    (why the hits are few or none)."""

    query: str
    searched_for: str
    hits: tuple[SearchHit, ...]
    unserved: tuple[str, ...]

    @property
    def respelled(self) -> bool:
        """Whether search read the query with a misspelt word corrected."""
        return self.searched_for != self.query

    @property
    def names(self) -> list[str]:
        """The hits' tool names, best first."""
        return [hit.name for hit in self.hits]
