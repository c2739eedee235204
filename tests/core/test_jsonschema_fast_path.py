"""The plain-schema fast path of :class:`JsonSchemaValidator` never accepts what jsonschema
refuses, and what it cannot vouch for still gets jsonschema's verdict and wording.

Seeded random plain schemas (scalar properties, required lists, open or closed objects, some
naming draft 3, 4, 7 or 2020-12) and random argument objects (right and wrong types, ``True``
where a number goes, whole floats, NaN, huge integers, int and str subclasses, ``None``,
missing and extra keys), checked against the jsonschema validator the slow path uses. Read
as from a Python tool, an object that lists properties and says nothing of others takes
those only (see ``nexus_jupyter.core.tools.unknown_keys``); a foreign schema takes others.
"""

from __future__ import annotations

import enum
import random
from typing import Any

import pytest
from pydantic import TypeAdapter

from nexus_jupyter import ToolValidationError
from nexus_jupyter.core.tools.jsonschema_check import JsonSchemaValidator, _plain_check


class Level(enum.IntEnum):
    LOW = 1


class Name(str):
    pass


KINDS = ("string", "integer", "number", "boolean")
VALUES: tuple[Any, ...] = (
    *("x", "", 0, 7, -3, 10**40, 2.0, 2.5, float("nan"), True, False, None, [1], {"a": 1}),
    *(Level.LOW, Name("n")),
)
DRAFTS = (
    "http://json-schema.org/draft-03/schema#",
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2020-12/schema",
)


def _schema(rng: random.Random) -> dict[str, Any]:
    names = rng.sample(["a", "b", "c", "d", "e"], rng.randint(0, 5))
    props = {}
    for name in names:
        prop: dict[str, Any] = {"type": rng.choice(KINDS)}
        if rng.random() < 0.5:
            prop["description"] = f"the {name}"
        if rng.random() < 0.2:
            prop["default"] = rng.choice(VALUES)
        props[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if names and rng.random() < 0.7:
        schema["required"] = rng.sample(names, rng.randint(1, len(names)))
    if rng.random() < 0.6:
        schema["additionalProperties"] = rng.random() < 0.3
    if rng.random() < 0.5:
        schema["$schema"] = rng.choice(DRAFTS)
    return schema


def _arguments(rng: random.Random, schema: dict[str, Any]) -> dict[str, Any]:
    keys = [*schema["properties"], "zz"]
    return {k: rng.choice(VALUES) for k in keys if rng.random() < 0.7}


def _read(prop: dict[str, Any] | None, value: Any) -> Any:
    """``value`` as a Python tool reads it for ``prop``: text for a boolean by pydantic."""
    if prop is None or prop["type"] != "boolean" or not isinstance(value, str):
        return value
    try:
        return TypeAdapter(bool).validate_python(value)
    except ValueError:
        return value


@pytest.mark.parametrize("from_python", [True, False])
def test_the_fast_path_agrees_with_jsonschema_on_random_plain_schemas(from_python: bool) -> None:
    rng = random.Random(20261127)
    vouched = refused = 0
    for _ in range(400):
        schema = _schema(rng)
        check = _plain_check(schema, from_python=from_python)
        assert check is not None, schema
        validator = JsonSchemaValidator(schema, from_python=from_python)
        # the draft's own validator, as the slow path uses, of the schema as it is read here:
        # from a Python tool, properties listed and nothing said of others take those only
        closed = dict(schema)
        if closed["properties"] and from_python:
            closed.setdefault("additionalProperties", False)
        reference = JsonSchemaValidator(closed)._get()
        for _ in range(25):
            data = _arguments(rng, schema)
            valid = reference.is_valid(data)
            if check(data):
                vouched += 1
                assert valid, (schema, data)  # never accepts what jsonschema refuses
            try:
                validator.validate("t", data)
                accepted = True
            except ToolValidationError:
                accepted = False
                refused += 1
            # The validator's own verdict is jsonschema's (a null for a declared optional
            # property is dropped, not refused, and a string pydantic reads as a boolean is
            # that boolean: the two leniencies, and then it is jsonschema's verdict on the
            # arguments so read).
            optional = set(schema["properties"]) - set(schema.get("required", []))
            without_nulls = {
                k: _read(schema["properties"].get(k), v)
                for k, v in data.items()
                if not (v is None and k in optional)
            }
            assert accepted == (valid or reference.is_valid(without_nulls)), (schema, data)
    assert vouched > 1000 and refused > 1000  # both branches really ran


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}},
        {"type": "object", "properties": {"a": {"type": ["integer", "null"]}}},
        {"type": "object", "properties": {"a": {"enum": [1, 2]}}},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"properties": {"a": {"type": "string"}}},  # no "type": object
        {"type": "object", "required": [["a"]]},  # not names: jsonschema says what is wrong
        {"type": "object", "$schema": 5},
    ],
)
def test_a_schema_with_anything_more_has_no_fast_path(schema: dict[str, Any]) -> None:
    assert _plain_check(schema) is None


def test_a_whole_float_and_a_bool_are_left_to_jsonschema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    check = _plain_check(schema)
    assert check is not None
    assert check({"n": 3}) and not check({"n": 3.0}) and not check({"n": True})
    validator = JsonSchemaValidator(schema)
    assert validator.validate("t", {"n": 3.0}) == {"n": 3.0}  # jsonschema's integer
    with pytest.raises(ToolValidationError, match=r"\$\.n: expected an integer \(got true\)"):
        validator.validate("t", {"n": True})
    with pytest.raises(ToolValidationError) as missing:
        validator.validate("t", {})
    assert missing.value.errors[0].loc == ("n",)


def test_plain_valid_arguments_never_reach_jsonschema(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    validator = JsonSchemaValidator(schema)

    def refuse() -> None:
        raise AssertionError("jsonschema was consulted")

    monkeypatch.setattr(validator, "_get", refuse)
    assert validator.validate("t", {"a": 1, "b": "x"}) == {"a": 1, "b": "x"}
    with pytest.raises(ToolValidationError, match="jsonschema was consulted"):
        validator.validate("t", {"a": "1"})  # doubt goes to jsonschema
