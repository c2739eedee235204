"""Typed call arguments: one parser for the magic (a string) and the CLI (argv items)."""

from __future__ import annotations

import pytest

from nexus_jupyter import NexusError
from nexus_jupyter.core.tools.arguments import parse_call_arguments


def test_key_values_parse_as_json_where_they_can() -> None:
    assert parse_call_arguments('a=1 b=[2, 3] c=hello d="two words" e=') == {
        "a": 1,
        "b": [2, 3],
        "c": "hello",
        "d": "two words",
        "e": "",
    }


def test_json_values_inline_keep_their_quotes_and_spaces() -> None:
    assert parse_call_arguments('o={"k": "a b"} l=["x y", 2] s=\'{"q": 1}\'') == {
        "o": {"k": "a b"},
        "l": ["x y", 2],
        "s": {"q": 1},
    }


def test_argv_items_give_the_same_result_as_the_line() -> None:
    argv = ["a=1", "b=[2, 3]", "d=two words"]
    assert parse_call_arguments(argv) == parse_call_arguments("a=1 b=[2, 3] d='two words'")
    assert parse_call_arguments(['{"x": {"y": 1}}']) == {"x": {"y": 1}}


def test_mistakes_are_one_clear_sentence() -> None:
    with pytest.raises(NexusError, match=r"not valid JSON"):
        parse_call_arguments('{"a": }')
    with pytest.raises(NexusError, match=r"key=value pairs or one JSON object, got '\[1, 2\]'"):
        parse_call_arguments("[1, 2]")
    with pytest.raises(NexusError, match=r"quote is not closed"):
        parse_call_arguments('a="open')
    with pytest.raises(NexusError, match=r"nexus-tools call add a=1"):
        parse_call_arguments(["oops"], "add", command="nexus-tools call")


SCHEMA = {
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "name": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "size": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "n": {"type": "integer"},
    },
}


def test_a_parameter_that_takes_text_gets_the_text_on_both_faces() -> None:
    line = "content=42 name=7 size=2 n=3"
    want = {"content": "42", "name": "7", "size": 2, "n": 3}
    assert parse_call_arguments(line, schema=SCHEMA) == want
    assert parse_call_arguments(line.split(), schema=SCHEMA) == want
    # null fits `str | None`; a word fits `int | str`
    assert parse_call_arguments("name=null size=big", schema=SCHEMA) == {
        "name": None,
        "size": "big",
    }
    # on a line, quotes group words; from a shell (which removed the quotes a person typed)
    # a string parameter takes what arrives, quotes included
    assert parse_call_arguments('content="two words"', schema=SCHEMA) == {"content": "two words"}
    assert parse_call_arguments(['content="kept"'], schema=SCHEMA) == {"content": '"kept"'}
    # without a schema, JSON where it parses, as before
    assert parse_call_arguments("content=42") == {"content": 42}


def flags(on: bool, maybe: bool | None = None, n: int = 0) -> str:
    return f"{on} {maybe} {n}"


def test_a_boolean_parameter_takes_the_words_pydantic_reads_on_both_faces() -> None:
    """``on=1`` is the text "1" for a boolean (true, as pydantic reads it), where the
    number 1 would be refused; ``on=yes``, ``on=True``, ``on=off`` are read alike by a
    Python tool and by a tool checked by its JSON Schema. ``n=1`` stays a number."""
    from nexus_jupyter import Registry, ToolValidationError
    from nexus_jupyter.core.tools.tool import Tool

    reg = Registry(search="keyword")
    reg.add(flags)
    schema = reg.get("flags").spec.input_schema
    reg.add(Tool.from_schema("by_schema", "", schema, lambda a: f"{a['on']} {a.get('maybe')}"))
    try:
        for line, want in [
            ("on=1 maybe=0 n=1", ("True False", "1")),
            ("on=yes maybe=null", ("True None", "0")),
            ("on=True maybe=OFF", ("True False", "0")),
            ("on=false maybe=n", ("False False", "0")),
        ]:
            for typed in (line, line.split()):  # %tool call's line, nexus-tools call's argv
                arguments = parse_call_arguments(typed, schema=schema)
                assert reg.call_sync("flags", arguments).value == f"{want[0]} {want[1]}"
                assert reg.call_sync("by_schema", arguments).value == want[0]
        for name in ("flags", "by_schema"):
            with pytest.raises(
                ToolValidationError, match=r'\$\.on: expected a boolean \(got "2"\)'
            ):
                reg.call_sync(name, parse_call_arguments("on=2", schema=schema))
    finally:
        reg.close()
