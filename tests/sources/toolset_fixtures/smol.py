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


class SmolLookup(Tool):
    """A tool with an expensive setup (smolagents runs setup() before the first call)."""

    name = "smol_lookup"
    description = "Look a word up in a table loaded by setup()."
    inputs = {"word": {"type": "string", "description": "The word."}}
    output_type = "string"

    def setup(self) -> None:
        self.table = {"hi": "a greeting"}
        self.is_initialized = True

    def forward(self, word: str) -> str:
        return self.table.get(word, "unknown")


smolagents_tools.append(SmolLookup())
