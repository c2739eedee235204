"""Applying a toolset's settings to the tools its source loaded.

The result is the set the source hands the registry: only the chosen tools, renamed with
the prefix, each stamped with its toolset and its approval entry (read by the policy, see
:mod:`nexus_jupyter.core.policy.toolset_approval`).

Secure by default: a tool of an *external* toolset (a module, an entry point, an ecosystem
library) asks for approval unless its toolset's approval map says otherwise; a tool above
the toolset's permission ceiling is blocked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..tools.spec import permission_rank
from ..tools.tool import Tool
from .settings import ToolApproval, ToolsetRule, ToolsetSettings

__all__ = ["approval_entry", "shape_toolset"]


def shape_toolset(
    tools: Iterable[Tool], toolset: str, settings: ToolsetSettings, *, external: bool
) -> list[Tool]:
    """The tools of ``toolset`` as configured by ``settings`` (``[]`` when disabled)."""
    if not settings.enabled:
        return []
    wanted = set(settings.tools) if settings.tools is not None else None
    shaped: list[Tool] = []
    for tool in tools:
        base = tool.spec.name
        if wanted is not None and base not in wanted:
            continue
        approval = approval_entry(tool, toolset, settings, external=external)
        shaped.append(
            tool.with_spec(name=settings.prefix + base, toolset=toolset, approval=approval)
        )
    return shaped


def approval_entry(
    tool: Tool, toolset: str, settings: ToolsetSettings, *, external: bool
) -> dict[str, Any] | None:
    """The approval map entry stored on the tool's spec, or ``None`` when the toolset says
    nothing (then the global rules and the permission tiers decide)."""
    base = tool.spec.name
    origin = f"toolsets.{toolset}.approval"
    ceiling = settings.permission
    if ceiling is not None and permission_rank(tool.spec.permission) > permission_rank(ceiling):
        return {
            "action": "blocked",
            "rules": [],
            "label": f"toolsets.{toolset}.permission",
            "why": f"it needs {tool.spec.permission}, above the toolset's ceiling {ceiling}",
        }
    entry: ToolApproval | None = settings.approval_for(base)
    label = f"{origin}.{settings.approval_key(base) or 'default'}"
    action = entry.action if entry is not None else None
    if action is None and external:
        action, label = "ask", f"toolsets.{toolset} (external tools ask by default)"
    rules = [_rule(tool.spec.input_schema, r) for r in (entry.rules if entry else [])]
    if action is None and not rules:
        return None
    return {"action": action, "rules": rules, "label": label}


def _rule(schema: Mapping[str, Any], rule: ToolsetRule) -> dict[str, Any]:
    argument = rule.argument or _first_string_parameter(schema)
    matcher = rule.model_dump(exclude_none=True, exclude={"action", "argument"})
    return {"action": rule.action, "arguments": {argument: matcher} if argument else {}}


def _first_string_parameter(schema: Mapping[str, Any]) -> str | None:
    properties: Mapping[str, Any] = schema.get("properties", {})
    for name in schema.get("required", ()):
        if properties.get(name, {}).get("type") == "string":
            return str(name)
    return next((n for n, p in properties.items() if p.get("type") == "string"), None)
