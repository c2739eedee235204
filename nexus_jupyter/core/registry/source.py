"""What a source is (:class:`ToolSource`), and the simplest one: tools held in memory."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from ..tools.spec import SourceKind
from ..tools.tool import Tool

__all__ = ["MutableSource", "ToolSource", "recovered_note"]


def recovered_note(source: object) -> str | None:
    """The source's own words for "works again" (its optional ``recovered``), if any."""
    note = getattr(source, "recovered", None)
    return note if isinstance(note, str) and note else None


@runtime_checkable
class ToolSource(Protocol):
    """What the registry needs of a source.

    - ``name``: unique id (``"notebook"``, ``"builtin"``, ``"directory:tools/dynamic"``,
      ``"mcp:time"``); ``kind``: one of :data:`~nexus_jupyter.core.tools.spec.SOURCE_KINDS`.
    - ``load()``: return the complete current set. It may raise: the registry then keeps the
      last good set and records the error as the source's status.
    - optional ``namespace``: the registry names the tools ``f"{namespace}__{tool}"``.
    - optional ``async start(registry)`` / ``async stop()``: background work on the registry's
      loop (watching a folder, an MCP session); push new sets with ``registry.publish``.
    - optional ``recovered`` (a string): what to tell the person when it loads again after
      failing (default: "source NAME works again").

    Sources never rename, filter or police tools themselves: the registry does that, once.
    """

    name: str
    kind: SourceKind

    def load(self) -> Iterable[Tool]: ...


class MutableSource:
    """Tools put and removed by code (``Registry.add``), handed over as a complete set."""

    def __init__(self, name: str, kind: SourceKind = "notebook") -> None:
        self.name = name
        self.kind: SourceKind = kind
        self.namespace: str | None = None
        self._tools: dict[str, Tool] = {}
        self._lock = threading.Lock()

    def put(self, tool: Tool) -> None:
        with self._lock:
            self._tools[tool.spec.name] = tool

    def discard(self, name: str) -> bool:
        """Remove ``name``; returns whether it was there."""
        with self._lock:
            return self._tools.pop(name, None) is not None

    def names(self) -> list[str]:
        with self._lock:
            return list(self._tools)

    def get(self, name: str) -> Tool | None:
        with self._lock:
            return self._tools.get(name)

    def load(self) -> Iterable[Tool]:
        with self._lock:
            return list(self._tools.values())
