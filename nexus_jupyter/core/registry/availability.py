"""Which tools can do a job: :func:`find_tools`, behind ``Registry.find_tools``.

>>> reg.find_tools(capabilities=["current_time"], prefer_source="mcp")   # doctest: +SKIP
[<ToolEntry mcp__time__get_current_time ...>, <ToolEntry now ...>]

A tool qualifies when it has every requested capability and at least one of the requested
categories (when given). The order, best first: tools that can run now; then those from the
preferred source (a source name or kind, or a list of them in order of preference); then
those that declare fewer other capabilities (the more specific tool); then by name. An
entry's ``reason`` says why it cannot run (missing credential, command absent, check
failed, server down).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .state import ToolEntry

__all__ = ["find_tools"]


def _as_list(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def _source_rank(entry: ToolEntry, preferred: Sequence[str]) -> int:
    spec = entry.spec
    for rank, wanted in enumerate(preferred):
        if wanted in (spec.source, spec.source_kind) or spec.source.startswith(f"{wanted}:"):
            return rank
    return len(preferred)


def find_tools(
    entries: Iterable[ToolEntry],
    *,
    capabilities: str | Iterable[str] | None = None,
    categories: str | Iterable[str] | None = None,
    available_only: bool = False,
    prefer_source: str | Iterable[str] | None = None,
) -> list[ToolEntry]:
    """The entries that can do the job, best first (see the module docs)."""
    needed = set(_as_list(capabilities))
    wanted_categories = set(_as_list(categories))
    preferred = _as_list(prefer_source)
    found = [
        e
        for e in entries
        if needed <= set(e.spec.capabilities)
        and (not wanted_categories or wanted_categories & set(e.spec.categories))
        and (e.available or not available_only)
    ]

    def order(entry: ToolEntry) -> tuple[Any, ...]:
        extra = len(set(entry.spec.capabilities) - needed)
        return (not entry.available, _source_rank(entry, preferred), extra, entry.name)

    return sorted(found, key=order)
