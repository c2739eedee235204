"""A catalog file as a registry: tool descriptions to search and evaluate, not to call.

``nexus-tools eval QUERIES --catalog catalog.json`` ranks the tools of a JSON (or YAML) list
such as an MCP server's ``tools/list`` answer, or the toolret catalogue::

    [{"name": "github__get_me", "server": "github", "description": "...",
      "input_schema": {...}, "annotations": {"readOnlyHint": true}}, ...]

``inputSchema`` is accepted for ``input_schema``. Tools are grouped in one source per
``server`` (named ``mcp:<server>``, as a connected MCP server's would be, so search sees the
same text); a tool with no server goes in the source ``catalog``. Calling one says it is a
description only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError, ToolUnavailable
from ..core.evals.queries import read_listing
from ..core.registry.registry import Registry
from ..core.registry.source import MutableSource
from ..core.tools.tool import Tool

__all__ = ["load_catalog", "registry_from_catalog"]


def load_catalog(path: str | Path) -> list[dict[str, Any]]:
    """The tool descriptions of a catalog file (a JSON or YAML list, or ``{tools: [...]}``)."""
    data = read_listing(path, "catalog")
    name = Path(path).name
    if isinstance(data, Mapping) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, list):
        raise ConfigError(
            f"{name}: a catalog is a list of tools ({{name, description, input_schema}})."
        )
    for i, item in enumerate(data):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise ConfigError(f"{name}: tool {i + 1} has no `name`: {item!r:.80}.")
    return [dict(item) for item in data]


def _describe_only(name: str) -> Any:
    async def handler(arguments: dict[str, Any]) -> Any:
        raise ToolUnavailable(
            f"{name!r} comes from a catalog file: it can be searched and evaluated, not called."
        )

    return handler


def _tool(item: Mapping[str, Any]) -> Tool:
    schema = dict(item.get("input_schema") or item.get("inputSchema") or {})
    schema.setdefault("type", "object")
    return Tool.from_schema(
        item["name"],
        item.get("description") or "",
        schema,
        _describe_only(item["name"]),
        annotations=dict(item.get("annotations") or {}),
        validate=False,
    )


def registry_from_catalog(path: str | Path, *, search: Any = "auto", **options: Any) -> Registry:
    """A registry holding the tools of the catalog file ``path`` (see the module docstring);
    ``search`` and ``options`` go to :class:`Registry`."""
    items = load_catalog(path)
    reg = Registry(search=search, **options)
    by_server: dict[str, list[Tool]] = {}
    for item in items:
        server = str(item.get("server") or "")
        by_server.setdefault(f"mcp:{server}" if server else "catalog", []).append(_tool(item))
    for name, tools in by_server.items():
        source = MutableSource(name, "mcp" if name.startswith("mcp:") else "config")
        for tool in tools:
            source.put(tool)
        reg.add_source(source)
    return reg
