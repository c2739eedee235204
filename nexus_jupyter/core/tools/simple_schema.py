"""JSON Schema for the common parameter types without building a pydantic model.

Most tools take scalars, lists, string-keyed dicts, ``Literal`` choices and optional values.
For those, :func:`simple_schema` writes the JSON Schema that pydantic would derive, so a
registry can describe thousands of tools quickly and build each tool's validation model only
when the tool is first called (:class:`~nexus_jupyter.core.tools.schema.FunctionSchema`).
``None`` means "not a simple type": the caller then asks pydantic, which handles everything.

``tests/core/test_simple_schema.py`` checks, over generated signatures, that the two agree.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["simple_default", "simple_input_schema", "simple_schema"]

_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}
_UNIONS = (typing.Union, types.UnionType)
_NO_DEFAULT = object()


def simple_schema(annotation: Any) -> dict[str, Any] | None:
    """The JSON Schema pydantic derives for ``annotation``, or ``None`` when it is not one of
    the simple types (scalars, ``list[...]``, ``dict[str, ...]``, ``Literal`` of one scalar
    type, and unions of these)."""
    try:
        scalar = _SCALARS.get(annotation)
    except TypeError:  # unhashable (Annotated with dict metadata, say): pydantic's to judge
        return None
    if scalar is not None:
        return dict(scalar)
    if annotation is list:
        return {"items": {}, "type": "array"}
    if annotation is dict:
        return {"additionalProperties": True, "type": "object"}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is list and len(args) == 1:
        items = simple_schema(args[0])
        return None if items is None else {"items": items, "type": "array"}
    if origin is dict and len(args) == 2 and args[0] is str:
        values = simple_schema(args[1])
        return None if values is None else {"additionalProperties": values, "type": "object"}
    if origin is Literal:
        return _literal_schema(args)
    if origin in _UNIONS:
        return _union_schema(args)
    return None


def _union_schema(args: tuple[Any, ...]) -> dict[str, Any] | None:
    # pydantic describes ``X | None`` as X made nullable: ``null`` comes last, whatever the
    # order the union was written in.
    members = [simple_schema(arg) for arg in args if arg is not type(None)]
    if any(m is None for m in members):
        return None
    schemas: list[dict[str, Any]] = [m for m in members if m is not None]
    inner = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    if len(schemas) == len(args):
        return inner
    if "anyOf" in inner:
        return {"anyOf": [*inner["anyOf"], {"type": "null"}]}
    return {"anyOf": [inner, {"type": "null"}]}


def _literal_schema(values: tuple[Any, ...]) -> dict[str, Any] | None:
    kinds = {type(v) for v in values}
    if len(kinds) != 1 or not values:
        return None
    kind = kinds.pop()
    if kind not in (str, int):  # bool literals, enums and mixed choices go to pydantic
        return None
    if len(values) == 1:
        return {"const": values[0], "type": _SCALARS[kind]["type"]}
    return {"enum": list(values), "type": _SCALARS[kind]["type"]}


def simple_default(value: Any) -> Any:
    """``value`` as JSON when it is a plain JSON value (what pydantic writes as the schema's
    ``default``); a sentinel otherwise, which sends the parameter to pydantic."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else _NO_DEFAULT
        )
    if type(value) is list:
        items = [simple_default(v) for v in value]
        return _NO_DEFAULT if any(i is _NO_DEFAULT for i in items) else items
    if type(value) is dict and all(isinstance(k, str) for k in value):
        converted = {k: simple_default(v) for k, v in value.items()}
        return _NO_DEFAULT if any(v is _NO_DEFAULT for v in converted.values()) else converted
    return _NO_DEFAULT


def is_simple_default(value: Any) -> bool:
    return value is not _NO_DEFAULT


def simple_input_schema(fields: Mapping[str, Any]) -> dict[str, Any] | None:
    """The input schema written directly when every parameter (``name -> param`` with
    ``annotation``, ``help`` and ``default``, ``...`` when required) has a simple type and a
    plain default: what pydantic would derive. ``None`` otherwise."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field_name, param in fields.items():
        schema = simple_schema(param.annotation)
        if schema is None:
            return None
        if param.help:
            schema["description"] = param.help
        if param.default is ...:
            required.append(field_name)
        else:
            plain = simple_default(param.default)
            if not is_simple_default(plain):
                return None
            schema["default"] = plain
        properties[field_name] = dict(sorted(schema.items()))
    out: dict[str, Any] = {"additionalProperties": False, "properties": properties}
    if required:
        out["required"] = required
    out["type"] = "object"
    return out
