"""An accepted elicitation answer is checked against the schema the tool asked with: a real
``nexus-tools serve`` process, the real SDK client at 2025-11-25 and 2026-07-28 answering
with content outside the schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mcp
import mcp_types as types
import pytest
from serving import result_text, serve_tool_file  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter.core.tools.elicit_check import answer_errors

TOOLS = '''
from nexus_jupyter import ToolContext, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "decision": {"type": "string", "enum": ["approve", "deny"]},
        "size": {"type": "integer", "default": 3},
    },
    "required": ["name", "decision"],
}


@tool
async def decide(ctx: ToolContext) -> str:
    """Ask, and say what came back."""
    answer = await ctx.elicit("Who decides?", SCHEMA)
    return f"{answer.action} {sorted(answer.content.items())}"
'''

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "decision": {"type": "string", "enum": ["approve", "deny"]},
        "size": {"type": "integer", "default": 3},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1},
    },
    "required": ["name", "decision"],
}


def test_answer_errors_name_each_field() -> None:
    assert answer_errors(SCHEMA, {"name": "Ada", "decision": "deny", "tags": ["a"]}) == []
    assert answer_errors(SCHEMA, {}) == [
        "the required field 'name' is missing",
        "the required field 'decision' is missing",
    ]
    assert answer_errors(SCHEMA, {"name": 5, "decision": "yes", "size": True}) == [
        "field 'name' must be a string, not 5",
        "field 'decision' must be one of 'approve', 'deny', not 'yes'",
        "field 'size' must be an integer, not True",
    ]
    assert answer_errors(SCHEMA, {"name": "", "decision": "deny", "tags": ["a", "c"]}) == [
        "field 'name' needs at least 1 characters, got 0",
        "field 'tags' allows only 'a', 'b', not ['c']",
    ]


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_tool_file(tmp_path_factory.mktemp("elicit"), "decide.py", TOOLS) as url:
        yield url


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize(
    ("content", "said"),
    [
        ({}, "the required field 'name' is missing; the required field 'decision' is missing"),
        (
            {"name": 5, "decision": "yes"},
            "field 'name' must be a string, not 5; "
            "field 'decision' must be one of 'approve', 'deny', not 'yes'",
        ),
    ],
)
async def test_an_answer_outside_the_schema_fails_the_question(
    url: str, mode: str, content: dict[str, Any], said: str
) -> None:
    async def answer(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content=content)

    async with mcp.Client(url, mode=mode, elicitation_callback=answer) as client:  # type: ignore[arg-type]
        result = await client.call_tool("decide", {})
    assert result.is_error
    text = result_text(result)
    assert "'Who decides?'" in text and said in text
    # the class name is for programs, in _meta; the text is a sentence for the agent
    assert (result.meta or {})["nexus-jupyter/error"]["type"] == "AnswerMismatch"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_fitting_answer_gets_its_defaults(url: str, mode: str) -> None:
    async def answer(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada", "decision": "deny"})

    async with mcp.Client(url, mode=mode, elicitation_callback=answer) as client:  # type: ignore[arg-type]
        result = await client.call_tool("decide", {})
    assert not result.is_error
    assert result_text(result) == "accept [('decision', 'deny'), ('name', 'Ada'), ('size', 3)]"


def test_an_optional_field_of_a_model_takes_a_value_of_its_type() -> None:
    from pydantic import BaseModel

    class Person(BaseModel):
        name: str
        nickname: str | None = None

    schema = Person.model_json_schema()
    assert answer_errors(schema, {"name": "bob", "nickname": "bobby"}) == []
    assert answer_errors(schema, {"name": "bob", "nickname": None}) == []
