"""smolagents tools (its @tool must be spelled `tool`: smolagents reads the source)."""

from __future__ import annotations

from smolagents import Tool, tool


@tool
def smol_reverse(text: str) -> str:
    """Reverse a text.

    Args:
        text: The text to reverse.
    """
    return text[::-1]


class SmolCount(Tool):
    name = "smol_count"
    description = "Count the words of a text."
    inputs = {"text": {"type": "string", "description": "The text."}}
    output_type = "integer"

    def forward(self, text: str) -> int:
        return len(text.split())


smolagents_tools = [smol_reverse, SmolCount()]
