"""Tools of the conformance suite that ask the calling client: its model (sampling) and its
user (elicitation, with defaults and every kind of enum)."""

from __future__ import annotations

from typing import Any

from nexus_jupyter import ToolContext, tool


@tool
async def test_sampling(prompt: str, ctx: ToolContext) -> str:
    """Ask the client's model to answer ``prompt`` and return its answer."""
    answer = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {answer.text}"


@tool
async def test_elicitation(message: str, ctx: ToolContext) -> str:
    """Ask the client's user for a username and an email address."""
    answer = await ctx.elicit(
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    return f"User response: action={answer.action}, content={answer.content}"


@tool
async def test_elicitation_sep1034_defaults(ctx: ToolContext) -> str:
    """Ask for one field of each primitive type, each with a default."""
    answer = await ctx.elicit(
        "Please review and update the form fields with defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verified", "default": True},
            },
            "required": [],
        },
    )
    return f"Elicitation completed: action={answer.action}, content={answer.content}"


def _choices(prefix: str, titles: list[str]) -> list[dict[str, Any]]:
    return [{"const": f"{prefix}{i}", "title": t} for i, t in enumerate(titles, 1)]


@tool
async def test_elicitation_sep1330_enums(ctx: ToolContext) -> str:
    """Ask with each of the five enum shapes (untitled/titled, single/multi, legacy)."""
    options = ["option1", "option2", "option3"]
    answer = await ctx.elicit(
        "Choose your options",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": options},
                "titledSingle": {
                    "type": "string",
                    "oneOf": _choices("value", ["First Option", "Second Option", "Third Option"]),
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": options}},
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": _choices(
                            "value", ["First Choice", "Second Choice", "Third Choice"]
                        )
                    },
                },
            },
            "required": [],
        },
    )
    return f"Elicitation completed: action={answer.action}, content={answer.content}"
