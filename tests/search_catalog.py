"""The small catalogue the search tests rank, and an index of it in either mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter.core.search.index import SearchIndex, semantic_missing
from nexus_jupyter.core.tools.spec import ToolSpec

__all__ = ["CATALOG", "index_in", "spec"]


def spec(name: str, description: str = "", **kw: Any) -> ToolSpec:
    return ToolSpec(name=name, description=description, **kw)


CATALOG = [
    spec(
        "list_directory",
        "List the files and folders in a directory.",
        input_schema={
            "type": "object",
            "properties": {"path": {"type": "string", "description": "Folder to list."}},
        },
    ),
    spec("read_file", "Read the contents of a text file.", permission="read_only"),
    spec(
        "write_file",
        "Write text to a file, replacing its contents.",
        permission="workspace_write",
        categories=["files"],
    ),
    spec(
        "getWeatherForecast",
        "Forecast for the next days.",
        categories=["weather"],
        capabilities=["forecast"],
    ),
    spec(
        "current_weather",
        "Current temperature and conditions for a location.",
        categories=["weather"],
        source="mcp:weather",
        source_kind="mcp",
    ),
    spec(
        "mcp__github__create_issue",
        "Open a new issue in a GitHub repository.",
        source="mcp:github",
        source_kind="mcp",
        input_schema={
            "type": "object",
            "properties": {
                "labels": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "color": {"type": "string", "description": "Hex colour of the label."}
                        },
                    },
                }
            },
        },
    ),
    spec(
        "bash",
        "Run a shell command.",
        permission="danger_full_access",
        source="builtin",
        source_kind="builtin",
    ),
]


def index_in(mode: str, tmp_path: Path, tools: list[ToolSpec]) -> SearchIndex:
    """An index in ``mode`` holding ``tools``; hybrid skips when the semantic extra is missing."""
    if mode == "hybrid" and semantic_missing():
        pytest.skip(f"semantic extra missing ({semantic_missing()})")
    idx = SearchIndex(mode, cache_dir=tmp_path)
    idx.update(tools)
    return idx
