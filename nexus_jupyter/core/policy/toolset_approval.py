"""Reading a tool's toolset approval entry (``ToolSpec.approval``) for one call.

The entry (made by :func:`nexus_jupyter.core.toolsets.shape.approval_entry`) holds the
toolset's action for the tool and its argument rules; a matching rule decides (blocked
first, then the most specific), else the action. The rules are parsed once per entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config.model import ApprovalRule
from ..tools.spec import ToolSpec
from .approvals import pick_rule

__all__ = ["toolset_verdict"]

_PARSED: dict[int, tuple[Mapping[str, Any], list[ApprovalRule]]] = {}


def _rules(spec: ToolSpec, entry: Mapping[str, Any]) -> list[ApprovalRule]:
    cached = _PARSED.get(id(entry))
    if cached is not None and cached[0] is entry:
        return cached[1]
    rules = [
        ApprovalRule(tool=spec.name, action=r["action"], arguments=r.get("arguments", {}))
        for r in entry.get("rules", ())
    ]
    if len(_PARSED) > 4096:
        _PARSED.clear()
    _PARSED[id(entry)] = (entry, rules)
    return rules


def toolset_verdict(spec: ToolSpec, arguments: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(action, label)`` from the tool's toolset approval map, or ``None`` when it has
    nothing to say about this call."""
    entry = spec.approval
    if not entry:
        return None
    label = str(entry.get("label") or f"toolsets.{spec.toolset}.approval")
    rule = pick_rule(_rules(spec, entry), spec.name, arguments)
    if rule is not None:
        return rule.action, f"{label} rule"
    action = entry.get("action")
    if action is None:
        return None
    why = entry.get("why")
    return str(action), f"{label} ({why})" if why else label
