"""The simplest source: a set of tools held in memory (the session's ``notebook`` source)."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from .spec import SourceKind
from .tool import Tool

__all__ = ["MutableSource"]


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
