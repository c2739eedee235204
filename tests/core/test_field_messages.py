"""The same refused arguments get the same message whichever validator refused them: a
Python tool's (pydantic, with the boolean-versus-number check) and the same tool's JSON
Schema (what a worker process's tool, a declared tool or an agent's tool is checked by).
Each case runs through both and through the registry of a real ``isolation: process``
folder, and the words are pinned: one wording, the refused value quoted as JSON."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, field_validator

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import ToolValidationError
from nexus_jupyter.core.tools.jsonschema_check import JsonSchemaValidator
from nexus_jupyter.core.tools.schema import derive_function_schema

pytestmark = pytest.mark.timeout(90)

TOOL = '''from typing import Annotated, Literal

from pydantic import BaseModel, Field

from nexus_jupyter import tool


class Item(BaseModel):
    name: str
    qty: Annotated[int, Field(ge=1)]


@tool
def order(
    n: int,
    price: float = 1.0,
    gift: bool = False,
    note: str = "",
    tags: list[str] = [],
    extra: dict[str, int] = {},
    units: Literal["celsius", "fahrenheit"] = "celsius",
    count: Annotated[int, Field(ge=1, le=10)] = 1,
    share: Annotated[float, Field(gt=0, lt=1)] = 0.5,
    code: Annotated[str, Field(pattern=r"^[a-z]+\\d$")] = "a1",
    word: Annotated[str, Field(min_length=2, max_length=3)] = "ab",
    picks: Annotated[list[int], Field(min_length=1, max_length=2)] = [1],
    items: list[Item] = [],
    maybe: int | None = None,
    either: int | str = 1,
    item: Item | None = None,
) -> str:
    """Takes an order."""
    return "ok"
'''

_module = types.ModuleType("order_tool")
sys.modules[_module.__name__] = _module  # where pydantic looks the tool's types up
exec(TOOL, _module.__dict__)  # the very code the worker process loads
order = _module.order

# (arguments, the message), the message pinned word for word
CASES: list[tuple[dict[str, Any], str]] = [
    ({"n": "x"}, '$.n: expected an integer (got "x")'),
    ({"n": 2.5}, "$.n: expected an integer (got 2.5)"),
    ({"n": True}, "$.n: expected an integer (got true)"),
    ({"n": None}, "$.n: expected an integer (got null)"),
    ({"n": [1]}, "$.n: expected an integer (got [1])"),
    ({"n": 1, "price": "cheap"}, '$.price: expected a number (got "cheap")'),
    ({"n": 1, "price": False}, "$.price: expected a number (got false)"),
    # no JSON number is NaN or infinite, and NaN would pass every bound
    ({"n": 1, "price": "nan"}, '$.price: expected a number (got "nan")'),
    ({"n": 1, "share": "inf"}, '$.share: expected a number (got "inf")'),
    ({"n": 1, "gift": 1}, "$.gift: expected a boolean (got 1)"),
    # a word pydantic does not read as a boolean ("yes" is one: see ACCEPTED)
    ({"n": 1, "gift": "maybe"}, '$.gift: expected a boolean (got "maybe")'),
    ({"n": 1, "note": 5}, "$.note: expected a string (got 5)"),
    ({"n": 1, "tags": 5}, "$.tags: expected an array (got 5)"),
    ({"n": 1, "tags": ["a", 2]}, "$.tags[1]: expected a string (got 2)"),
    ({"n": 1, "extra": [1]}, "$.extra: expected an object (got [1])"),
    ({"n": 1, "extra": {"a": "x"}}, '$.extra.a: expected an integer (got "x")'),
    ({}, "$.n: required argument is missing"),
    (
        {"n": 1, "size": 2},
        "$.size: unexpected argument; this tool takes: n, price, gift, note, tags, extra, "
        "units, count, share, code, word, picks, items, maybe, either, item (got 2)",
    ),
    (
        {"n": 1, "units": "kelvin"},
        '$.units: must be one of: "celsius", "fahrenheit" (got "kelvin")',
    ),
    ({"n": 1, "count": 0}, "$.count: must be at least 1 (got 0)"),
    ({"n": 1, "count": 11}, "$.count: must be at most 10 (got 11)"),
    ({"n": 1, "share": 0}, "$.share: must be greater than 0 (got 0)"),
    ({"n": 1, "share": 1}, "$.share: must be less than 1 (got 1)"),
    ({"n": 1, "code": "A"}, '$.code: must match the pattern ^[a-z]+\\d$ (got "A")'),
    ({"n": 1, "word": "a"}, '$.word: must have at least 2 characters (got "a")'),
    ({"n": 1, "word": "abcd"}, '$.word: must have at most 3 characters (got "abcd")'),
    ({"n": 1, "picks": []}, "$.picks: must have at least 1 item (got [])"),
    ({"n": 1, "picks": [1, 2, 3]}, "$.picks: must have at most 2 items (got [1, 2, 3])"),
    (
        {
            "n": 1,
            "items": [{"name": "a", "qty": 1}, {"name": "b", "qty": 2}, {"name": "c", "qty": 0}],
        },
        "$.items[2].qty: must be at least 1 (got 0)",
    ),
    ({"n": 1, "items": [{"qty": 1}]}, "$.items[0].name: required field is missing"),
    ({"n": 1, "maybe": "x"}, '$.maybe: expected an integer (got "x")'),
    ({"n": 1, "either": [1]}, "$.either: expected an integer or a string (got [1])"),
    ({"n": 1, "item": {"name": "a"}}, "$.item.qty: required field is missing"),
    ({"n": 1, "item": 5}, "$.item: expected an object (got 5)"),
    ({"n": 1, "gift": " true"}, '$.gift: expected a boolean (got " true")'),
    ({"n": 1, "gift": "2"}, '$.gift: expected a boolean (got "2")'),
    # a key a nested object does not take is refused, not dropped, with the closest name
    (
        {"n": 1, "item": {"name": "a", "qty": 1, "qyt": 2}},
        '$.item.qyt: unexpected field (did you mean "qty"?); this object takes: name, qty (got 2)',
    ),
    (
        {"n": 1, "items": [{"name": "a", "qty": 1}, {"nme": "b", "qty": 1}]},
        "$.items[1].name: required field is missing; "
        '$.items[1].nme: unexpected field (did you mean "name"?); this object takes: name, qty '
        '(got "b")',
    ),
    (
        {"n": 1, "cuont": 2},
        '$.cuont: unexpected argument (did you mean "count"?); this tool takes: n, price, gift, '
        "note, tags, extra, units, count, share, code, word, picks, items, maybe, either, item "
        "(got 2)",
    ),
    # several at once: the same ones, in the order of the parameters
    (
        {"n": True, "size": 1, "count": 0},
        "$.n: expected an integer (got true); $.count: must be at least 1 (got 0); "
        "$.size: unexpected argument; this tool takes: n, price, gift, note, tags, extra, "
        "units, count, share, code, word, picks, items, maybe, either, item (got 1)",
    ),
]

# taken alike by both: numbers and booleans sent as strings, a whole float, null for an
# optional argument
ACCEPTED: list[dict[str, Any]] = [
    {"n": 1, "gift": "yes"},
    {"n": 1, "gift": "False"},
    {"n": "2"},
    {"n": " 3 ", "price": "2.5", "maybe": "4"},
    {"n": 2.0},
    {"n": 1, "maybe": None, "note": None},
    {"n": 1, "picks": ["1"], "items": [{"name": "a", "qty": "2"}]},
]


def _refusal(validate: Any, arguments: dict[str, Any], name: str = "order") -> str:
    with pytest.raises(ToolValidationError) as info:
        validate(name, arguments)
    return str(info.value).split("): ", 1)[1]


def _both(fn: Any) -> tuple[Any, Any]:
    """The tool's own validator and its JSON Schema's (as a worker process's stand-in has)."""
    schema = derive_function_schema(fn)
    return schema.validate, JsonSchemaValidator(schema.input_schema, from_python=True).validate


@pytest.fixture(scope="module")
def validators() -> tuple[Any, Any]:
    return _both(order)


@pytest.mark.parametrize(("arguments", "said"), CASES)
def test_both_validators_word_a_refusal_alike(
    validators: tuple[Any, Any], arguments: dict[str, Any], said: str
) -> None:
    in_process, by_schema = validators
    assert _refusal(in_process, arguments) == said
    assert _refusal(by_schema, arguments) == said


@pytest.mark.parametrize("arguments", ACCEPTED)
def test_both_validators_take_the_same_arguments(
    validators: tuple[Any, Any], arguments: dict[str, Any]
) -> None:
    in_process, by_schema = validators
    in_process("order", arguments)
    by_schema("order", arguments)


BOOLEAN_WORDS = ["true", "True", "YES", "on", "1", "t", "y", "false", "No", "OFF", "0", "f", "n"]


@pytest.mark.parametrize("text", BOOLEAN_WORDS)
def test_both_read_a_boolean_sent_as_text_as_pydantic_does(
    validators: tuple[Any, Any], text: str
) -> None:
    """The words pydantic's lax mode reads as a boolean are that boolean to both, at the top
    and inside a list of an optional argument; other text is refused (CASES)."""
    want = TypeAdapter(bool).validate_python(text)
    for validate in validators:
        assert validate("order", {"n": 1, "gift": text})["gift"] is want


def pick(a: int | bool, b: bool | int, flags: list[bool] | None = None) -> str:
    return "ok"


def test_in_a_union_the_first_type_that_reads_the_text_wins_for_both() -> None:
    """``"1"`` is 1 for ``int | bool`` and true for ``bool | int``, as in pydantic's union;
    ``"true"`` is true for both (no integer reads it)."""
    for validate in _both(pick):
        got = validate("pick", {"a": "1", "b": "1", "flags": ["on", "0"]})
        assert (got["a"], got["b"], got["flags"]) == (1, True, [True, False])
        assert type(got["a"]) is int
        got = validate("pick", {"a": "true", "b": "2"})
        assert (got["a"], got["b"]) == (True, 2)


def test_a_tool_in_a_worker_process_answers_as_in_process(tmp_path: Path) -> None:
    """The README's case: ``{a: "x"}`` refused with the same words in process and in a worker
    process (whose registry checks the JSON Schema first), and ``"2"`` taken by both."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "order.py").write_text(TOOL)
    here = Registry(search="keyword")
    here.add(order)
    isolated = Registry(search="keyword")
    isolated.watch(folder, isolation="process", versions=False).wait_ready()
    try:
        for arguments, said in [CASES[0], CASES[2], CASES[14], CASES[16], CASES[26], CASES[-1]]:
            for reg in (here, isolated):
                with pytest.raises(ToolValidationError) as info:
                    reg.call_sync("order", arguments)
                assert str(info.value).split("): ", 1)[1] == said
        for reg in (here, isolated):
            assert reg.call_sync("order", {"n": "2", "maybe": None}).structured == "ok"
    finally:
        isolated.close()
        here.close()


TYPED = '''import datetime
import pathlib
import uuid
from typing import Literal

from pydantic import AnyUrl

from nexus_jupyter import tool


@tool
def typed(
    when: datetime.date,
    color: Literal["red", "blue"],
    path: pathlib.Path,
    at: datetime.datetime | None = None,
    every: datetime.timedelta | None = None,
    key: uuid.UUID | None = None,
    home: AnyUrl | None = None,
    ratio: float = 0.5,
) -> str:
    """Takes values JSON writes as text."""
    return "ok"
'''

_typed_module = types.ModuleType("typed_tool")
sys.modules[_typed_module.__name__] = _typed_module
exec(TYPED, _typed_module.__dict__)
typed = _typed_module.typed
_GOOD = {"when": "2026-01-02", "color": "red", "path": "a/b"}

TYPED_CASES: list[tuple[dict[str, Any], str]] = [
    # every wrong place at once, dates too, in the order of the parameters
    (
        {"when": "tomorrow", "color": "green", "path": 3},
        '$.when: expected a date (YYYY-MM-DD) (got "tomorrow"); '
        '$.color: must be one of: "red", "blue" (got "green"); '
        "$.path: expected a string (got 3)",
    ),
    (
        {**_GOOD, "at": "noon", "every": "often", "key": "k", "home": "nowhere"},
        '$.at: expected a date-time (ISO 8601, e.g. 2026-01-02T15:04:05Z) (got "noon"); '
        '$.every: expected a duration (ISO 8601, e.g. PT1H30M, or seconds) (got "often"); '
        '$.key: expected a UUID (got "k"); $.home: expected a URL (got "nowhere")',
    ),
    ({**_GOOD, "ratio": float("nan")}, "$.ratio: expected a number (got NaN)"),
    ({**_GOOD, "ratio": float("inf")}, "$.ratio: expected a number (got Infinity)"),
]


@pytest.fixture(scope="module")
def typed_validators() -> tuple[Any, Any]:
    return _both(typed)


@pytest.mark.parametrize(("arguments", "said"), TYPED_CASES)
def test_dates_uuids_and_urls_are_worded_alike_by_both(
    typed_validators: tuple[Any, Any], arguments: dict[str, Any], said: str
) -> None:
    for validate in typed_validators:
        assert _refusal(validate, arguments, "typed") == said


def test_both_take_the_same_dates(typed_validators: tuple[Any, Any]) -> None:
    fine = {
        **_GOOD,
        "at": "2026-01-02T10:00:00Z",
        "every": "PT1H",
        "key": "12345678-1234-5678-1234-567812345678",
        "home": "https://example.org/x",
    }
    for validate in typed_validators:
        validate("typed", fine)


def test_a_worker_process_tool_refuses_every_place_at_once(tmp_path: Path) -> None:
    """The worker's registry checks dates before the call, so one refusal names them all,
    not the JSON types first and the worker's dates in a second round."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "typed.py").write_text(TYPED)
    isolated = Registry(search="keyword")
    isolated.watch(folder, isolation="process", versions=False).wait_ready()
    try:
        arguments, said = TYPED_CASES[0]
        with pytest.raises(ToolValidationError) as info:
            isolated.call_sync("typed", arguments)
        assert str(info.value).split("): ", 1)[1] == said
        assert isolated.call_sync("typed", _GOOD).structured == "ok"
    finally:
        isolated.close()


def test_numbers_of_other_python_types_are_numbers_to_both() -> None:
    """numpy's numbers (a notebook's ``df.col.mean()``) and an IntEnum are numbers, as
    jsonschema counts them; only NaN and infinity are not."""
    import enum

    import numpy as np

    class Level(enum.IntEnum):
        HIGH = 3

    check = JsonSchemaValidator({"type": "object", "properties": {"x": {"type": "number"}}})
    for value in (np.float64(1.5), np.int64(3), Level.HIGH):
        check.validate("t", {"x": value})
    with pytest.raises(ToolValidationError):
        check.validate("t", {"x": np.float64("nan")})


class _Spot(BaseModel):
    x: int

    @field_validator("x")
    @classmethod
    def small(cls, x: int) -> int:
        if x >= 5:
            raise ValueError("x must be below 5")
        return x


def _place(spot: _Spot, email: str) -> str:
    """Place something."""
    return email


def test_a_tools_own_validator_is_quoted_in_its_own_words() -> None:
    """A custom validator's ValueError reaches the caller as written, without pydantic's
    "Value error, " in front."""
    reg = Registry()
    reg.add(_place)
    with pytest.raises(ToolValidationError) as refused:
        reg.call_sync("_place", {"spot": {"x": 9}, "email": "a@b"})
    assert [(e.path, e.message) for e in refused.value.errors] == [
        ("$.spot.x", "x must be below 5")
    ]


def test_a_value_that_fits_several_branches_of_a_one_of_is_told_so() -> None:
    check = JsonSchemaValidator(
        {
            "type": "object",
            "properties": {
                "spot": {
                    "oneOf": [
                        {"type": "object", "properties": {"x": {"type": "number"}}},
                        {"type": "object", "properties": {"y": {"type": "number"}}},
                    ]
                }
            },
        }
    )
    with pytest.raises(ToolValidationError) as both:
        check.validate("t", {"spot": {"x": 1, "y": 2}})  # fits both forms
    assert [(e.path, e.message) for e in both.value.errors] == [
        ("$.spot", "fits more than one of the forms this takes, and must fit exactly one")
    ]
    with pytest.raises(ToolValidationError) as neither:
        check.validate("t", {"spot": 3})  # fits neither: what the forms take
    assert [(e.path, e.message) for e in neither.value.errors] == [("$.spot", "expected an object")]
