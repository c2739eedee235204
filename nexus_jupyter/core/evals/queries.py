"""Labelled queries for retrieval evals: what a person would ask, and the tools that answer it.

A query file is a JSON or YAML list, the shape of the toolret files::

    - {id: q002, query: "which GitHub account is this token authenticated as?",
       relevant: [github__get_me]}
    - query: "create a card on our Acmeboard board"
      relevant: []                 # no installed tool serves it: search should stay empty

``relevant`` lists every acceptable tool (any of them counts); ``[]`` marks a query nothing
serves. ``id`` is optional, other keys (a ``note``) are ignored. A mapping
``{queries: [...]}`` is accepted too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError

__all__ = ["LabelledQuery", "coerce_queries", "load_queries", "read_listing"]


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """One query and the tools that answer it (empty: none does)."""

    query: str
    relevant: tuple[str, ...] = ()
    id: str = ""

    @property
    def servable(self) -> bool:
        return bool(self.relevant)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query, "relevant": list(self.relevant)}
        if self.id:
            out["id"] = self.id
        return out


def _one(item: Any, where: str) -> LabelledQuery:
    if isinstance(item, LabelledQuery):
        return item
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: a query is a mapping with query and relevant, got {item!r}.")
    text = item.get("query")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"{where}: `query` must be the text of the request, got {text!r}.")
    relevant = item.get("relevant")
    if relevant is None or isinstance(relevant, str) or not isinstance(relevant, Iterable):
        raise ConfigError(
            f"{where}: `relevant` must be a list of tool names ([] when no tool serves the "
            f"query), got {relevant!r}."
        )
    names = list(relevant)
    if not all(isinstance(n, str) and n for n in names):
        raise ConfigError(f"{where}: `relevant` must hold tool names, got {names!r}.")
    return LabelledQuery(text, tuple(names), str(item.get("id") or ""))


def coerce_queries(queries: Any, *, source: str = "queries") -> list[LabelledQuery]:
    """``queries`` (a list of mappings or :class:`LabelledQuery`, or ``{queries: [...]}``)
    as labelled queries. Raises :class:`ConfigError` naming the entry."""
    if isinstance(queries, Mapping) and "queries" in queries:
        queries = queries["queries"]
    if isinstance(queries, str | bytes) or not isinstance(queries, Iterable):
        raise ConfigError(
            f"{source}: expected a list of {{query, relevant}} entries, got {type(queries).__name__}."
        )
    out = []
    for i, item in enumerate(queries):
        label = item.get("id") if isinstance(item, Mapping) else None
        out.append(_one(item, f"{source}: query {i + 1}" + (f" ({label})" if label else "")))
    if not out:
        raise ConfigError(f"{source}: no queries; add at least one {{query, relevant}} entry.")
    return out


def read_listing(path: str | Path, what: str) -> Any:
    """The data of a ``.json`` or ``.yaml``/``.yml`` file (``what`` names it in errors)."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read the {what} {str(file)!r}: {exc.strerror}.") from None
    try:
        if file.suffix.lower() in (".yaml", ".yml"):
            return yaml.safe_load(text)
        return json.loads(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"{file.name}: cannot parse it: {exc}.") from None


def load_queries(path: str | Path) -> list[LabelledQuery]:
    """The labelled queries of a ``.json`` or ``.yaml``/``.yml`` file."""
    return coerce_queries(read_listing(path, "queries file"), source=Path(path).name)
