"""Which source each tool that left was last served by, so "not found" can say how it left.

The registry notes every name a change removes, with the source whose tool it was, and forgets
it as soon as any source adds that name again: a name defined anew (in a notebook, another
folder) and gone again is never explained by an older departure. How a tool left is the
source's to say (a folder knows its file was deleted): :func:`.file_health.how_it_left` asks
the source named here, and only it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .state import RegistryChanged

__all__ = ["Departures"]

#: How many departed names are remembered (the oldest go first).
KEEP = 1024


class Departures:
    """Name -> the source that served it when it left (callers hold the registry's lock)."""

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._left: dict[str, str] = {}

    def note(self, change: RegistryChanged, before: Mapping[str, Any]) -> None:
        """Record the names ``change`` removed (``before``: the entries before it) and forget
        the ones it added."""
        for name in change.added:
            self._left.pop(name, None)
        for name in change.removed:
            entry = before.get(name)
            if entry is None:
                continue
            self._left.pop(name, None)  # the newest departure goes last
            self._left[name] = entry.spec.source
        while len(self._left) > self.keep:
            del self._left[next(iter(self._left))]

    def source_of(self, name: str) -> str | None:
        """The source ``name`` left, or ``None`` if it never left or came back since."""
        return self._left.get(name)
