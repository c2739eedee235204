"""Approval rules: which rule applies to a call, and how specific it is.

A rule matches when its ``tool`` glob matches the tool name and every argument matcher
matches the call's arguments. Among matching rules ``blocked`` always wins; otherwise the
most specific rule decides (more argument matchers first, then an exact name over a glob,
then the later rule).

Chained shell commands cannot ride on an approval: a ``pre_approved`` rule's ``prefix`` or
``glob`` matcher never matches a string holding shell control characters (``;``, ``&``,
``|``, backquote, ``$(``, redirections, newlines), so ``git status; rm -rf ~`` is not
covered by ``{command: {prefix: "git "}}`` and falls back to asking.

When a call needs approval and no one can give it where it was made,
:func:`how_to_approve` words the way out for that kind of face.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..config.model import ApprovalRule, ArgumentMatcher
from ..tools.context import Face

__all__ = ["how_to_approve", "matching_rules", "pick_rule", "rule_matches"]

_SHELL_CONTROL = re.compile(r"[;&|`<>\n\r]|\$\(")


def _value_matches(matcher: ArgumentMatcher, value: Any, strict: bool) -> bool:
    text = value if isinstance(value, str) else str(value)
    if matcher.equals is not None and value != matcher.equals:
        return False
    if (
        (matcher.prefix is not None or matcher.glob is not None)
        and strict
        and _SHELL_CONTROL.search(text)
    ):
        return False
    if matcher.prefix is not None and not text.startswith(matcher.prefix):
        return False
    if matcher.glob is not None and not fnmatch.fnmatchcase(text, matcher.glob):
        return False
    return matcher.regex is None or re.search(matcher.regex, text) is not None


def rule_matches(rule: ApprovalRule, tool: str, arguments: Mapping[str, Any]) -> bool:
    """Whether ``rule`` applies to a call of ``tool`` with ``arguments``."""
    if not fnmatch.fnmatchcase(tool, rule.tool):
        return False
    strict = rule.action == "pre_approved"
    for name, matcher in rule.arguments.items():
        if name not in arguments or not _value_matches(matcher, arguments[name], strict):
            return False
    return True


def matching_rules(
    rules: Iterable[ApprovalRule], tool: str, arguments: Mapping[str, Any]
) -> list[tuple[int, ApprovalRule]]:
    return [(i, r) for i, r in enumerate(rules) if rule_matches(r, tool, arguments)]


def _specificity(item: tuple[int, ApprovalRule]) -> tuple[int, int, int]:
    index, rule = item
    exact = 0 if any(c in rule.tool for c in "*?[") else 1
    return (len(rule.arguments), exact, index)


def pick_rule(
    rules: Iterable[ApprovalRule], tool: str, arguments: Mapping[str, Any]
) -> ApprovalRule | None:
    """The rule that decides a call, or ``None`` when no rule matches."""
    found = matching_rules(rules, tool, arguments)
    if not found:
        return None
    blocked = [item for item in found if item[1].action == "blocked"]
    return max(blocked or found, key=_specificity)[1]


def how_to_approve(face: Face, tool: str) -> str:
    """How a person approves a call of ``tool`` made from ``face``, in that face's terms."""
    rule = f"pre-approve it in nex.yaml (approvals: {{{tool}: pre_approved}})"
    ways: dict[Face, str] = {
        "python": f"Code cannot approve it: pass approved=True once a person has, or {rule}.",
        "notebook": f"Approve it in its form (`%tool try {tool}`, then Run), or {rule}.",
        "cli": f"Pass --yes to approve it, or {rule}.",
        # an agent is not told which line of nex.yaml would raise its own rights
        "mcp": "No one can approve it over MCP; only the person running this server can "
        "allow it, so ask the user.",
        "rest": (
            f'Approve it in the sidebar (over the REST API, resend with "approved": true), '
            f"or {rule}."
        ),
    }
    return ways[face]
