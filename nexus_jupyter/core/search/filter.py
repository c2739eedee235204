"""Filters over tool specs for search: ``make_filter(source=..., permission=..., ...)``."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..tools.spec import ToolSpec

__all__ = ["make_filter"]


def _as_set(value: str | Iterable[str] | None) -> frozenset[str] | None:
    if value is None:
        return None
    return frozenset([value] if isinstance(value, str) else value)


def make_filter(
    source: str | Iterable[str] | None = None,
    permission: str | Iterable[str] | None = None,
    category: str | Iterable[str] | None = None,
    capability: str | Iterable[str] | None = None,
) -> Callable[[ToolSpec], bool] | None:
    """A predicate over specs from the spec-based filters, or ``None`` when none is given.

    Each argument is one value or several (any of them matches). ``source`` matches the
    source (``"mcp:github"``), its kind (``"mcp"``) or the part after the colon
    (``"github"``); categories and capabilities compare case-insensitively.

    >>> keep = make_filter(source="mcp", permission="read_only")
    >>> keep(ToolSpec("t", source="mcp:time", source_kind="mcp"))
    True
    """
    sources = _as_set(source)
    permissions = _as_set(permission)
    categories = {c.lower() for c in _as_set(category) or ()} or None
    capabilities = {c.lower() for c in _as_set(capability) or ()} or None
    if sources is None and permissions is None and categories is None and capabilities is None:
        return None

    def keep(spec: ToolSpec) -> bool:
        if sources is not None and not (
            spec.source in sources
            or spec.source_kind in sources
            or spec.source.split(":", 1)[-1] in sources
        ):
            return False
        if permissions is not None and spec.permission not in permissions:
            return False
        if categories is not None and not categories & {c.lower() for c in spec.categories}:
            return False
        return capabilities is None or bool(capabilities & {c.lower() for c in spec.capabilities})

    return keep
