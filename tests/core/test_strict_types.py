"""The boolean-versus-number check: its prepared form answers as the full walk does."""

from __future__ import annotations

import random
from typing import Any

from nexus_jupyter.core.tools.strict_types import argument_checker, type_errors

SCALARS: list[dict[str, Any]] = [
    {"type": "integer"},
    {"type": "number"},
    {"type": "boolean"},
    {"type": "string"},
    {"type": ["integer", "boolean"]},
    {"type": ["number", "null"]},
    {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
    {"enum": [1, 2]},
    {},
]
NESTED: list[dict[str, Any]] = [
    {"type": "array", "items": {"type": "integer"}},
    {"type": "object", "properties": {"on": {"type": "boolean"}}},
]
VALUES: list[Any] = [True, False, 0, 1, 2.5, "1", "true", None, [1, True], {"on": 1}]


def test_the_prepared_check_finds_what_the_walk_finds() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        kinds = SCALARS + NESTED if rng.random() < 0.3 else SCALARS
        names = [f"p{i}" for i in range(rng.randint(0, 4))]
        schema = {"type": "object", "properties": {n: rng.choice(kinds) for n in names}}
        sent = {n: rng.choice(VALUES) for n in names if rng.random() < 0.8}
        if rng.random() < 0.2:
            sent["extra"] = rng.choice(VALUES)  # not in the schema: not this check's business
        got = argument_checker(schema)(sent)
        assert got == type_errors(schema, sent), (schema, sent)


def test_it_names_each_wrong_value_and_leaves_nulls_to_the_validator() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "on": {"type": "boolean"}},
    }
    check = argument_checker(schema)
    assert check({"n": 2, "on": False, "x": True}) == []
    assert check({"n": None, "on": None}) == []
    wrong = check({"n": True, "on": 1})
    assert [(e.path, e.message) for e in wrong] == [
        ("$.n", "expected an integer"),
        ("$.on", "expected a boolean"),
    ]


def test_optional_types_are_checked_as_their_type() -> None:
    schema = {
        "type": "object",
        "properties": {
            "flag": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
            "xs": {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]},
            "opts": {
                "anyOf": [
                    {"type": "object", "properties": {"n": {"type": "number"}}},
                    {"type": "null"},
                ]
            },
        },
    }
    check = argument_checker(schema)
    sent = {"flag": 1, "xs": [1, True], "opts": {"n": False}}
    assert [(e.path, e.message) for e in check(sent)] == [
        ("$.flag", "expected a boolean"),
        ("$.xs[1]", "expected an integer"),
        ("$.opts.n", "expected a number"),
    ]
    assert check({"flag": None, "xs": None, "opts": None}) == []
    assert check({"flag": True, "xs": [1, 2], "opts": {"n": 2.5}}) == []
