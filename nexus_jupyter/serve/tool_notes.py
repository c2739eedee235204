"""What the person serving tools should know about the tools themselves, not their sources:
tools without a description (an agent cannot tell what they do, or when to call them) and
tools hidden by another tool of the same name (they can never be called). ``nexus-tools
check`` notes each one; ``nexus-tools serve`` says each kind in one line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PRECEDENCE",
    "Hidden",
    "hidden_line",
    "hidden_note",
    "hidden_tools",
    "undescribed_line",
    "undescribed_note",
    "undescribed_tools",
    "where",
]

PRECEDENCE = (
    "on a name clash notebook > kernel > tool files > MCP servers > nex.yaml's tools > "
    "built-ins, and a built-in's name is taken only by a tool that `allow_overrides` in "
    "nex.yaml lists and that is not laxer than the built-in"
)


@dataclass(frozen=True)
class Hidden:
    """A tool ``loser`` that the served tool ``winner`` of the same name hides."""

    name: str
    loser: Any  # ToolSpec
    winner: Any  # ToolSpec


def where(spec: Any) -> str:
    """Where a tool comes from, as the operator knows it: ``tool file tools/x.py``."""
    kind, source = spec.source_kind, spec.source or ""
    if kind == "builtin":
        return "the built-in"
    if kind == "directory":
        return f"tool file {spec.origin or source.split(':', 1)[-1]}"
    if kind == "mcp":
        return f"MCP server {source.split(':', 1)[-1]!r}"
    if kind == "notebook":
        return "the notebook"
    if kind == "kernel":
        return f"kernel {source.split(':', 1)[-1]}"
    return source or str(kind)


def _named(name: str, spec: Any) -> str:
    """``the built-in 'read'``, ``'read' of tool file tools/x.py``."""
    if spec.source_kind == "builtin":
        return f"the built-in {name!r}"
    return f"{name!r} of {where(spec)}"


def hidden_tools(entries: Iterable[Any]) -> list[Hidden]:
    """Every tool a winner of another kind of source hides (two tools of one kind are a
    conflict: the entry's own error says it)."""
    return [
        Hidden(entry.name, tool.spec, entry.spec)
        for entry in entries
        for tool in entry.shadowed
        if tool.spec.source_kind != entry.spec.source_kind
    ]


def hidden_note(hidden: Hidden) -> str:
    """One ``check`` note: which tool is hidden, by which, and what to do."""
    name, loser, winner = hidden.name, hidden.loser, hidden.winner
    if winner.source_kind == "builtin":
        if loser.source_kind == "config":
            return (
                f"{loser.source} declares {name!r}, which the built-in {name!r} hides: give it "
                "another id, or list it in `allow_overrides` in nex.yaml to replace the built-in."
            )
        fix = (
            "rename it, or list the name in `allow_overrides` in nex.yaml to replace the "
            "built-in (only a tool as strict as the built-in can)"
        )
    else:
        fix = f"rename one of them ({PRECEDENCE})"
    return (
        f"{name!r} of {where(loser)} is hidden by {_named(name, winner)}, which is served: {fix}."
    )


def hidden_line(hidden: list[Hidden]) -> str:
    """``serve``'s one line for all of them."""
    said = "; ".join(
        f"{h.name!r} of {where(h.loser)} (served: {_named(h.name, h.winner)})" for h in hidden
    )
    return (
        f"{len(hidden)} tool(s) hidden by another of the same name, never served: {said}. "
        f"Rename them; {PRECEDENCE}."
    )


def undescribed_tools(entries: Iterable[Any]) -> list[Any]:
    """The served tools whose description is empty."""
    return [entry.spec for entry in entries if not (entry.spec.description or "").strip()]


def _fix(spec: Any) -> str:
    if spec.source_kind == "mcp":
        return "its MCP server sends none (`description` in that server's tool)"
    if spec.source_kind == "config":
        return f"add `description:` to its entry in {spec.source}"
    return "add a docstring, or `description=` in `@tool(...)`"


def undescribed_note(spec: Any) -> str:
    """One ``check`` note for a tool without a description, with the fix."""
    return (
        f"{spec.name!r} of {where(spec)} has no description, so an agent cannot tell what it "
        f"does: {_fix(spec)}."
    )


def undescribed_line(specs: list[Any]) -> str:
    """``serve``'s one line for all of them."""
    names = ", ".join(f"{s.name!r} ({where(s)})" for s in specs)
    return (
        f"{len(specs)} tool(s) without a description, which agents cannot tell apart: {names}. "
        "Add a docstring or `description=` to each (`nexus-tools check` says how for each)."
    )
