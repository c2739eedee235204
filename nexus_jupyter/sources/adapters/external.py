"""The one way an adapter makes a registry tool of another library's tool."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...core.tools.tool import Tool

__all__ = ["external_tool"]


def external_tool(
    name: str,
    description: str,
    schema: Mapping[str, Any],
    run: Callable[[dict[str, Any]], Any],
    *,
    needs_approval: bool,
    origin: str,
    output_schema: Mapping[str, Any] | None = None,
) -> Tool:
    """A tool with the library's own name, description and JSON schema (arguments checked
    against it before ``run``). Its permission is ``workspace_write``: what a library tool
    does is unknown, so it is neither read-only nor granted shell-level rights; its toolset
    makes it ask (see :mod:`nexus_jupyter.core.toolsets.shape`)."""
    return Tool.from_schema(
        name,
        description or "",
        dict(schema),
        run,
        output_schema=output_schema,
        permission="workspace_write",
        needs_approval=needs_approval,
        source_kind="config",
        origin=origin,
    )
