"""Schema derivation over many signature kinds, compared with the exact JSON expected."""

from __future__ import annotations

from typing import Any

import pytest
from signature_kinds import (  # tests/ is on sys.path (rootdir conftest)
    Point,
    f_annotated,
    f_annotated_desc,
    f_any,
    f_bool,
    f_ctx,
    f_dataclass,
    f_dict,
    f_enum,
    f_float,
    f_int,
    f_int_enum,
    f_kwonly,
    f_list,
    f_list_models,
    f_list_of_int_default,
    f_literal,
    f_model,
    f_nested_list,
    f_none_params,
    f_optional,
    f_posonly,
    f_recursive,
    f_required_optional,
    f_reserved_names,
    f_set,
    f_str,
    f_tuple,
    f_two,
    f_typeddict,
    f_union,
    f_union_none,
    f_var_tuple,
)

from nexus_jupyter import Tool, ToolDefinitionError, tool


def s(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    return out


ADDRESS = s(
    {
        "street": {"type": "string"},
        "zip_code": {"type": "string", "pattern": r"^\d{5}$", "description": "Five digits."},
    },
    ["street", "zip_code"],
)
ADDRESS.pop("additionalProperties")

CASES: list[tuple[Any, dict[str, Any]]] = [
    (f_int, s({"a": {"type": "integer"}}, ["a"])),
    (f_two, s({"a": {"type": "integer"}, "b": {"type": "integer", "default": 2}}, ["a"])),
    (f_str, s({"text": {"type": "string"}}, ["text"])),
    (f_float, s({"x": {"type": "number"}}, ["x"])),
    (f_bool, s({"flag": {"type": "boolean", "default": False}})),
    (f_optional, s({"x": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}})),
    (f_union_none, s({"x": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None}})),
    (f_required_optional, s({"x": {"anyOf": [{"type": "string"}, {"type": "null"}]}}, ["x"])),
    (f_literal, s({"mode": {"type": "string", "enum": ["a", "b"], "default": "a"}})),
    (f_enum, s({"color": {"type": "string", "enum": ["red", "green"]}}, ["color"])),
    (f_int_enum, s({"level": {"type": "integer", "enum": [1, 2], "default": 1}})),
    (f_list, s({"items": {"type": "array", "items": {"type": "string"}}}, ["items"])),
    (
        f_list_of_int_default,
        s({"items": {"type": "array", "items": {"type": "integer"}, "default": [1, 2]}}),
    ),
    (
        f_dict,
        s(
            {"mapping": {"type": "object", "additionalProperties": {"type": "integer"}}},
            ["mapping"],
        ),
    ),
    (
        f_tuple,
        s(
            {
                "pair": {
                    "type": "array",
                    "maxItems": 2,
                    "minItems": 2,
                    "prefixItems": [{"type": "integer"}, {"type": "string"}],
                }
            },
            ["pair"],
        ),
    ),
    (f_var_tuple, s({"values": {"type": "array", "items": {"type": "number"}}}, ["values"])),
    (
        f_set,
        s({"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}, ["tags"]),
    ),
    (f_any, s({"value": {}}, ["value"])),
    (f_annotated, s({"n": {"type": "integer", "minimum": 1, "maximum": 10}}, ["n"])),
    (
        f_annotated_desc,
        s({"q": {"type": "string", "minLength": 2, "description": "Query."}}, ["q"]),
    ),
    (
        f_model,
        s(
            {
                "person": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "address": ADDRESS},
                    "required": ["name", "address"],
                }
            },
            ["person"],
        ),
    ),
    (
        f_dataclass,
        s(
            {
                "point": {
                    "type": "object",
                    "properties": {
                        "x": {"type": "number"},
                        "y": {"type": "number", "default": 0.0},
                    },
                    "required": ["x"],
                    "additionalProperties": False,
                }
            },
            ["point"],
        ),
    ),
    (
        f_typeddict,
        s(
            {
                "movie": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                    "required": ["title", "year"],
                    "additionalProperties": False,
                }
            },
            ["movie"],
        ),
    ),
    (f_list_models, s({"addresses": {"type": "array", "items": ADDRESS}}, ["addresses"])),
    (f_union, s({"value": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}, ["value"])),
    (f_kwonly, s({"a": {"type": "integer"}, "b": {"type": "string", "default": "x"}}, ["a"])),
    (f_posonly, s({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"])),
    (f_ctx, s({"query": {"type": "string"}}, ["query"])),
    (f_none_params, s({})),
    (
        f_nested_list,
        s(
            {"grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}},
            ["grid"],
        ),
    ),
    (
        f_reserved_names,
        s({"json": {"type": "string"}, "schema": {"type": "integer", "default": 1}}, ["json"]),
    ),
]


@pytest.mark.parametrize(("fn", "expected"), CASES, ids=[c[0].__name__ for c in CASES])
def test_schema_matches_expected_json(fn: Any, expected: dict[str, Any]) -> None:
    assert dict(Tool.from_function(fn).spec.input_schema) == expected


def test_at_least_thirty_signature_kinds() -> None:
    assert len(CASES) >= 30


def test_recursive_model_keeps_defs_and_no_dangling_refs() -> None:
    schema = Tool.from_function(f_recursive).spec.input_schema
    assert schema["properties"]["tree"]["properties"]["children"]["items"] == {
        "$ref": "#/$defs/Tree"
    }
    assert set(schema["$defs"]) == {"Tree"}
    assert "$ref" not in str(schema["$defs"]["Tree"]["properties"]["value"])


def test_non_recursive_schema_has_no_refs() -> None:
    for fn, _ in CASES:
        assert "$ref" not in str(Tool.from_function(fn).spec.input_schema), fn.__name__


def google(city: str, days: int = 3) -> str:
    """Get the forecast.

    More text the agent reads too.

    Args:
        city: City name
            or coordinates.
        days (int): Number of days.

    Returns:
        The forecast.
    """
    return city


def numpy_style(city: str, days: int = 3) -> str:
    """Get the forecast.

    Parameters
    ----------
    city : str
        City name.
    days : int, optional
        Number of days.
    """
    return city


def sphinx_style(city: str, days: int = 3) -> str:
    """Get the forecast.

    :param city: City name.
    :param int days: Number of days.
    :returns: the forecast
    """
    return city


@pytest.mark.parametrize("fn", [google, numpy_style, sphinx_style])
def test_docstring_styles_give_description_and_param_help(fn: Any) -> None:
    spec = Tool.from_function(fn).spec
    more = "\n\nMore text the agent reads too." if fn is google else ""
    assert spec.description == "Get the forecast." + more
    assert spec.summary == "Get the forecast."
    props = spec.input_schema["properties"]
    assert props["city"]["description"].startswith("City name")
    assert props["days"]["description"] == "Number of days."


def test_google_continuation_lines_join() -> None:
    props = Tool.from_function(google).spec.input_schema["properties"]
    assert props["city"]["description"] == "City name or coordinates."


def test_output_schema_from_return_annotation() -> None:
    def f() -> list[Point]: ...

    out = Tool.from_function(f).spec.output_schema
    assert out is not None
    assert out["type"] == "array"
    assert out["items"]["properties"]["x"] == {"type": "number"}
    assert Tool.from_function(f_int).spec.output_schema is None


def test_var_args_refused_with_one_line_reason() -> None:
    def f(*args: int) -> None: ...

    with pytest.raises(ToolDefinitionError, match=r"Tool 'f': parameter \*args is not supported"):
        Tool.from_function(f)


def test_var_kwargs_refused() -> None:
    def g(a: int, **extra: Any) -> None: ...

    with pytest.raises(ToolDefinitionError, match=r"parameter \*\*extra"):
        Tool.from_function(g)


def test_unannotated_parameter_refused_naming_it() -> None:
    def h(a: int, b) -> None: ...  # type: ignore[no-untyped-def]

    with pytest.raises(ToolDefinitionError) as info:
        Tool.from_function(h)
    assert "'h'" in str(info.value) and "'b'" in str(info.value)
    assert "\n" not in str(info.value)


class Opaque:
    pass


def test_type_without_json_schema_refused() -> None:
    def k(thing: Opaque) -> None: ...

    with pytest.raises(ToolDefinitionError, match="'thing'"):
        Tool.from_function(k)


def test_decorator_returns_function_unchanged_and_options_apply() -> None:
    def raw(a: int) -> int:
        """Double."""
        return a * 2

    marked = tool(permission="workspace_write", categories=["math"], eager=True, timeout=3)(raw)
    assert marked is raw and marked(2) == 4
    spec = Tool.from_function(marked).spec
    assert (spec.permission, spec.categories, spec.eager, spec.timeout) == (
        "workspace_write",
        ("math",),
        True,
        3.0,
    )


def test_bad_decorator_options_are_clear() -> None:
    with pytest.raises(ToolDefinitionError, match="Unknown permission 'root'"):
        tool(permission="root")
    with pytest.raises(ToolDefinitionError, match="timeout"):
        tool(timeout=-1)


def test_a_missing_argument_is_reported_without_a_value() -> None:
    from nexus_jupyter import ToolValidationError

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    with pytest.raises(ToolValidationError) as info:
        Tool.from_function(add).validate({"a": None})
    message = str(info.value)
    assert "$.b: required argument is missing" in message and "missing (got" not in message
    assert "$.a:" in message and "(got null)" in message  # a null that was sent is quoted
