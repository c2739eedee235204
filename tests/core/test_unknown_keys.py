"""A key that a nested object's schema does not take is refused, not dropped, by both
validators of a Python tool (its pydantic model, and its JSON Schema, which the same tool in a
worker process is checked by in its parent), with its path and the closest name the object
takes; an object that says it takes other keys keeps them, and so does an object whose
composition (``anyOf``/``oneOf``, ``$ref``, ``dependencies`` beside ``properties``) declares
them. A foreign JSON Schema (an MCP server's tool, a declared tool) is read as JSON Schema
says: a key it does not list reaches its handler, unless it says ``additionalProperties:
false``."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from nexus_jupyter import Registry, ToolValidationError
from nexus_jupyter.core.tools.jsonschema_check import JsonSchemaValidator
from nexus_jupyter.core.tools.schema import derive_function_schema
from nexus_jupyter.core.tools.tool import Tool
from nexus_jupyter.core.tools.unknown_keys import unknown_keys_check


class Spot(BaseModel):  # extra not set: pydantic would drop an unknown key
    x: int
    flow: float = 0.0


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")
    x: int


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: int


@dataclasses.dataclass
class Box:
    width: float


class Pair(TypedDict):
    left: int
    right: int


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int = 9


class Dog(BaseModel):
    kind: Literal["dog"]
    bark: str = "woof"


def place(
    spot: Spot,
    spots: list[Spot] = [],
    named: dict[str, Spot] = {},
    maybe: Spot | None = None,
    box: Box | None = None,
    pair: Pair | None = None,
    pet: Annotated[Cat | Dog, Field(discriminator="kind")] | None = None,
    open: Open | None = None,
    closed: Closed | None = None,
) -> str:
    return "ok"


@pytest.fixture(scope="module")
def validators() -> list[Any]:
    """The tool's own validator and its JSON Schema's (as a worker process's stand-in has)."""
    schema = derive_function_schema(place)
    return [schema.validate, JsonSchemaValidator(schema.input_schema, from_python=True).validate]


def _refused(validate: Any, arguments: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ToolValidationError) as info:
        validate("place", arguments)
    return [(e.path, e.message) for e in info.value.errors]


SPOT = {"x": 1}
CASES: list[tuple[dict[str, Any], list[tuple[str, str]]]] = [
    (
        {"spot": {"x": 1, "flor": 2}},
        [("$.spot.flor", 'unexpected field (did you mean "flow"?); this object takes: x, flow')],
    ),
    (
        {"spot": SPOT, "spots": [SPOT, {"x": 2, "y": 3}]},
        [("$.spots[1].y", "unexpected field; this object takes: x, flow")],
    ),
    (
        {"spot": SPOT, "named": {"a": {"x": 1, "flows": 1}}},
        [
            (
                "$.named.a.flows",
                'unexpected field (did you mean "flow"?); this object takes: x, flow',
            )
        ],
    ),
    (
        {"spot": SPOT, "maybe": {"x": 1, "z": 0}},
        [("$.maybe.z", "unexpected field; this object takes: x, flow")],
    ),
    (
        {"spot": SPOT, "box": {"width": 1, "widht": 2}},
        [("$.box.widht", 'unexpected field (did you mean "width"?); this object takes: width')],
    ),
    (
        {"spot": SPOT, "pair": {"left": 1, "right": 2, "rigth": 3}},
        [
            (
                "$.pair.rigth",
                'unexpected field (did you mean "right"?); this object takes: left, right',
            )
        ],
    ),
    (  # a tagged union: the option the tag names
        {"spot": SPOT, "pet": {"kind": "dog", "bark": "wuff", "lives": 3}},
        [("$.pet.lives", "unexpected field; this object takes: kind, bark")],
    ),
    (  # pydantic's extra="forbid" (additionalProperties false) is worded alike
        {"spot": SPOT, "closed": {"x": 1, "xx": 2}},
        [("$.closed.xx", 'unexpected field (did you mean "x"?); this object takes: x')],
    ),
    (  # with the other wrong places, in the order of the parameters
        {"spot": {"x": "one", "flor": 2}, "spots": 5},
        [
            ("$.spot.x", "expected an integer"),
            ("$.spot.flor", 'unexpected field (did you mean "flow"?); this object takes: x, flow'),
            ("$.spots", "expected an array"),
        ],
    ),
]


@pytest.mark.parametrize(("arguments", "said"), CASES)
def test_both_validators_refuse_an_unknown_nested_key_alike(
    validators: list[Any], arguments: dict[str, Any], said: list[tuple[str, str]]
) -> None:
    for validate in validators:
        assert _refused(validate, arguments) == said


def test_an_object_that_takes_other_keys_keeps_them(validators: list[Any]) -> None:
    """pydantic's ``extra="allow"`` (``additionalProperties: true``) and a ``dict``'s keys."""
    in_process, by_schema = validators
    arguments = {"spot": SPOT, "open": {"x": 1, "note": "kept"}, "named": {"any": SPOT}}
    assert in_process("place", arguments)["open"].note == "kept"
    assert by_schema("place", arguments)["open"] == {"x": 1, "note": "kept"}


SCHEMA_TOOL = {
    "type": "object",
    "properties": {
        "where": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
        },
        "meta": {"type": "object", "properties": {"a": {}}, "additionalProperties": True},
        "labels": {
            "type": "object",
            "properties": {"main": {"type": "string"}},
            "additionalProperties": {"type": "string"},
        },
        "any": {"type": "object", "properties": {}},
    },
}


def test_a_schema_from_python_refuses_what_its_objects_do_not_list() -> None:
    """Derived from a Python tool (a worker process's stand-in), an object schema that
    lists its properties and says nothing of others takes those only, at the top too;
    ``additionalProperties`` true or a schema, and an empty ``properties``, take others."""
    tool = Tool.from_schema("geo", "", SCHEMA_TOOL, lambda arguments: arguments, from_python=True)
    assert tool.schema_from_python
    fine = {
        "where": {"lat": 1, "lon": 2},
        "meta": {"a": 1, "b": 2},
        "labels": {"main": "x", "other": "y"},
        "any": {"whatever": 1},
    }
    assert tool.validate(fine) == fine
    with pytest.raises(ToolValidationError) as info:
        tool.validate({"where": {"lat": 1, "lng": 2}, "labels": {"x": 3}, "wher": 1})
    assert [e.line for e in info.value.errors] == [
        '$.where.lng: unexpected field (did you mean "lon"?); this object takes: lat, lon (got 2)',
        "$.labels.x: expected a string (got 3)",
        '$.wher: unexpected argument (did you mean "where"?); this tool takes: where, meta, '
        "labels, any (got 1)",
    ]


def test_a_foreign_json_schema_takes_keys_it_does_not_list() -> None:
    """An MCP server's or a declared tool's schema is JSON Schema: absent
    ``additionalProperties`` means other keys are allowed, and they reach the handler (its
    upstream decides); ``additionalProperties: false`` is still enforced as declared."""
    tool = Tool.from_schema("geo", "", SCHEMA_TOOL, lambda arguments: arguments)
    assert not tool.schema_from_python
    extra = {"where": {"lat": 1, "lng": 2}, "verbose": True}
    assert tool.validate(extra) == extra
    closed = {**SCHEMA_TOOL, "additionalProperties": False}
    with pytest.raises(ToolValidationError) as info:
        Tool.from_schema("geo", "", closed, lambda arguments: arguments).validate(extra)
    assert [e.line for e in info.value.errors] == [
        "$.verbose: unexpected argument; this tool takes: where, meta, labels, any (got true)"
    ]
    # a plain schema (the fast path's) too: the time server's get_current_time
    plain = {
        "type": "object",
        "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"],
    }
    got = JsonSchemaValidator(plain).validate("t", {"timezone": "UTC", "verbose": True})
    assert got == {"timezone": "UTC", "verbose": True}
    with pytest.raises(ToolValidationError, match=r"\$\.verbose: unexpected argument"):
        JsonSchemaValidator(plain, from_python=True).validate(
            "t", {"timezone": "UTC", "verbose": True}
        )


# Schemas whose composition declares keys beside ``properties``: none of their keys is
# refused, read as from a Python tool or not (the first is the reviewer's: its ``oneOf``
# options match any object, so only ``anyOf`` lets a call through jsonschema).
MODE = {"type": "string"}
INT = {"type": "integer"}
COMPOSED: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        {
            "type": "object",
            "properties": {"mode": MODE},
            "anyOf": [{"properties": {"x": INT}}, {"properties": {"y": INT}}],
        },
        {"mode": "a", "x": 1},
    ),
    (
        {
            "type": "object",
            "properties": {"mode": MODE},
            "oneOf": [
                {"properties": {"x": INT}, "required": ["x"]},
                {"properties": {"y": INT}, "required": ["y"]},
            ],
        },
        {"mode": "a", "x": 1},
    ),
    (  # a tagged union beside the parent's properties: the parent's key is the tag
        {
            "type": "object",
            "properties": {"kind": {"enum": ["cat", "dog"]}, "name": MODE},
            "oneOf": [
                {"properties": {"kind": {"const": "cat"}, "lives": INT}},
                {"properties": {"kind": {"const": "dog"}, "bark": MODE}},
            ],
        },
        {"kind": "dog", "name": "Rex", "bark": "wuff"},
    ),
    (
        {
            "type": "object",
            "properties": {"a": INT},
            "dependencies": {"a": {"properties": {"b": INT}}},
        },
        {"a": 1, "b": 2},
    ),
    (
        {
            "type": "object",
            "$ref": "#/$defs/B",
            "properties": {"extra": {}},
            "$defs": {"B": {"type": "object", "properties": {"b": INT}}},
        },
        {"b": 1, "extra": 2},
    ),
    (  # the same, nested
        {
            "type": "object",
            "properties": {"inner": {"$ref": "#/$defs/B", "properties": {"extra": {}}}},
            "$defs": {"B": {"type": "object", "properties": {"b": INT}}},
        },
        {"inner": {"b": 1, "extra": 2}},
    ),
]


@pytest.mark.parametrize(("schema", "arguments"), COMPOSED)
@pytest.mark.parametrize("from_python", [True, False])
def test_keys_a_composition_declares_are_taken(
    schema: dict[str, Any], arguments: dict[str, Any], from_python: bool
) -> None:
    check = unknown_keys_check(schema)
    assert check is None or check(arguments) == []
    validator = JsonSchemaValidator(schema, from_python=from_python)
    assert validator.validate("t", arguments) == arguments


def test_the_options_beside_properties_refuse_what_none_lists() -> None:
    """Read as from a Python tool, a key that neither the parent's properties nor any
    option lists is refused, with all of them; inside the option the tag names, its own
    closed objects refuse a typo too."""
    union = {
        "type": "object",
        "properties": {"mode": MODE},
        "anyOf": [
            {"properties": {"x": INT}, "required": ["x"]},
            {"properties": {"y": INT}, "required": ["y"]},
        ],
    }
    with pytest.raises(ToolValidationError) as info:
        JsonSchemaValidator(union, from_python=True).validate("t", {"mode": "a", "x": 1, "z": 2})
    assert [e.line for e in info.value.errors] == [
        "$.z: unexpected argument; this tool takes: mode, x, y (got 2)"
    ]
    tagged = COMPOSED[2][0]
    check = unknown_keys_check(tagged)
    assert check is not None
    assert [e.line for e in check({"kind": "cat", "name": "Tom", "bark": "no"})] == [
        '$.bark: unexpected argument; this tool takes: kind, name, lives (got "no")'
    ]


def test_a_schema_without_such_objects_costs_a_call_nothing() -> None:
    """No checker at all for a tool of simple types (most tools): nothing runs per call."""

    def simple(a: int, tags: list[str] = [], counts: dict[str, int] = {}) -> None: ...

    assert unknown_keys_check(derive_function_schema(simple).input_schema) is None
    assert unknown_keys_check({"type": "object", "properties": {}}) is None
    assert unknown_keys_check(derive_function_schema(place).input_schema) is not None


def test_every_face_of_the_registry_gets_the_refusal() -> None:
    reg = Registry(search="keyword")
    reg.add(place)
    try:
        with pytest.raises(ToolValidationError) as info:
            reg.call_sync("place", {"spot": {"x": 1, "flor": 2}})
        assert info.value.to_dict()["errors"][0]["path"] == "$.spot.flor"
        assert reg.call_sync("place", {"spot": {"x": 1, "flow": 2}}).value == "ok"
    finally:
        reg.close()
