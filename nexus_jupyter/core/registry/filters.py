"""Filters shared by ``Registry.entries``, ``Registry.search`` and every face."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import NexusError

if TYPE_CHECKING:
    from .state import ToolEntry

__all__ = ["FILTER_NAMES", "entry_filter", "filter_matches"]

FILTER_NAMES = (
    "source",
    "source_kind",
    "permission",
    "category",
    "capability",
    "status",
    "available",
    "toolset",
)


def filter_matches(value: str, wanted: Any) -> bool:
    """Whether ``value`` is ``wanted`` (a string, where a trailing ``*`` matches any ending,
    or a list of them), as every filter matches."""
    if isinstance(wanted, str):
        return value == wanted or (wanted.endswith("*") and value.startswith(wanted[:-1]))
    return any(filter_matches(value, w) for w in wanted)


def entry_filter(**filters: Any) -> Callable[[ToolEntry], bool]:
    """A predicate over entries. ``source`` matches the source name or its kind
    (``source="mcp"`` matches every MCP server); values may be a string or a list."""
    unknown = set(filters) - set(FILTER_NAMES)
    if unknown:
        raise NexusError(
            f"Unknown filter {sorted(unknown)[0]!r}; filters are: {', '.join(FILTER_NAMES)}."
        )
    active = {k: v for k, v in filters.items() if v is not None and v != ()}
    if not active:
        return lambda entry: True

    def keep(entry: ToolEntry) -> bool:
        spec = entry.tool.spec
        for key, wanted in active.items():
            if key == "source":
                if not (
                    filter_matches(spec.source, wanted) or filter_matches(spec.source_kind, wanted)
                ):
                    return False
            elif key == "source_kind":
                if not filter_matches(spec.source_kind, wanted):
                    return False
            elif key == "permission":
                if not filter_matches(spec.permission, wanted):
                    return False
            elif key == "category":
                if not any(filter_matches(c, wanted) for c in spec.categories):
                    return False
            elif key == "capability":
                if not any(filter_matches(c, wanted) for c in spec.capabilities):
                    return False
            elif key == "status":
                if not filter_matches(entry.status, wanted):
                    return False
            elif (key == "available" and bool(wanted) != entry.available) or (
                key == "toolset" and not filter_matches(spec.toolset, wanted)
            ):
                return False
        return True

    return keep
