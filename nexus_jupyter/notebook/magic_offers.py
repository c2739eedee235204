"""``%tool resources`` and ``%tool prompts``: what the registry offers besides tools (from
cells, tool files and MCP servers), as served over MCP."""

from __future__ import annotations

import html
from typing import Any

from ..core.registry.catalog import catalog_of
from .api import current_registry
from .options import parse_options
from .subcommands import MagicContext, subcommand

__all__ = ["OfferList", "list_prompts", "list_resources"]


class OfferList:
    """A table of resources or prompts (text in a terminal, HTML in the notebook)."""

    def __init__(
        self, kind: str, columns: tuple[str, str, str], rows: list[tuple[str, str, str]]
    ) -> None:
        self.kind, self.columns, self.rows = kind, columns, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        if not self.rows:
            return f"No {self.kind}."
        width = max(len(r[0]) for r in self.rows)
        return "\n".join(f"{a.ljust(width)}  {b}  {c}".rstrip() for a, b, c in self.rows)

    def _repr_html_(self) -> str:
        if not self.rows:
            return f"<p>No {html.escape(self.kind)}.</p>"
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        cells = "".join(
            "<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>"
            for row in self.rows
        )
        return f'<table class="nexus-offers"><tr>{head}</tr>{cells}</table>'


def list_resources(*, registry: Any) -> OfferList:
    """The resources and resource templates: URI, description, MIME type."""
    catalog = catalog_of(registry)
    items = catalog.resources() + catalog.templates()
    rows = [(r.uri, r.description, r.mime_type or "") for r in items]
    return OfferList("resources", ("URI", "Description", "MIME type"), rows)


def list_prompts(*, registry: Any) -> OfferList:
    """The prompts: name, description, arguments (``?`` marks optional ones)."""
    rows = []
    for p in catalog_of(registry).prompts():
        args = ", ".join(a.name + ("" if a.required else "?") for a in p.arguments)
        rows.append((p.name, p.description, f"({args})"))
    return OfferList("prompts", ("Prompt", "Description", "Arguments"), rows)


@subcommand(
    "resources",
    usage="%tool resources",
    summary="List the resources and resource templates (cells, tool files, MCP servers).",
    example="%tool resources",
)
def _resources(ctx: MagicContext, argv: list[str]) -> Any:
    parse_options("%tool resources", argv, {}, max_args=0)
    return list_resources(registry=current_registry())  # not ctx's lazy proxy: the catalog
    # is looked up by the registry object itself


@subcommand(
    "prompts",
    usage="%tool prompts",
    summary="List the prompts (cells, tool files, MCP servers) and their arguments.",
    example="%tool prompts",
)
def _prompts(ctx: MagicContext, argv: list[str]) -> Any:
    parse_options("%tool prompts", argv, {}, max_args=0)
    return list_prompts(registry=current_registry())
