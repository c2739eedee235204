"""JSON's own types, strictly: a boolean is not an integer and an integer is not a boolean.

Python's ``bool`` is an ``int`` and the argument validator is lenient on purpose (numbers
sent as strings are fine), so ``{"n": true}`` would reach an ``int`` parameter as ``1``.
:func:`type_errors` finds such values by the tool's JSON Schema before the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import FieldError

__all__ = ["type_errors"]


def _types(schema: Mapping[str, Any]) -> set[str] | None:
    """The JSON types a schema admits; ``None`` when it does not say."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return set(declared)
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        found: set[str] = set()
        for option in options:
            sub = _types(option) if isinstance(option, Mapping) else None
            if sub is None:
                return None
            found |= sub
        return found
    return None


def type_errors(
    schema: Mapping[str, Any], value: Any, path: tuple[str | int, ...] = ()
) -> list[FieldError]:
    """The places in ``value`` where a boolean stands for a number or the other way round."""
    allowed = _types(schema)
    if allowed is not None:
        if isinstance(value, bool) and "boolean" not in allowed:
            return [FieldError(path, "expected a number, got a boolean", value)]
        if allowed == {"boolean"} and not isinstance(value, bool):
            return [FieldError(path, "expected a boolean (true or false)", value)]
    errors: list[FieldError] = []
    if isinstance(value, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            for key, item in value.items():
                sub = properties.get(key)
                if isinstance(sub, Mapping):
                    errors += type_errors(sub, item, (*path, key))
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                errors += type_errors(items, item, (*path, i))
    return errors
