"""JSON's own types, strictly: a boolean is not an integer and an integer is not a boolean.

Python's ``bool`` is an ``int`` and the argument validator is lenient on purpose (numbers
sent as strings are fine), so ``{"n": true}`` would reach an ``int`` parameter as ``1``.
:func:`type_errors` finds such values by the tool's JSON Schema before the call. A string
for a boolean is left to the validator: it takes the words pydantic reads as a boolean
(``"true"``, ``"no"``, ``"1"``, ...; see :mod:`.jsonschema_check`) and refuses the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import FieldError
from .field_messages import expected

__all__ = ["argument_checker", "type_errors"]


def _types(schema: Mapping[str, Any]) -> list[str] | None:
    """The JSON types a schema admits, in its order; ``None`` when it does not say."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return list(declared)
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        found: list[str] = []
        for option in options:
            sub = _types(option) if isinstance(option, Mapping) else None
            if sub is None:
                return None
            found += [kind for kind in sub if kind not in found]
        return found
    return None


def _only_boolean(kinds: list[str]) -> bool:
    return set(kinds) - {"null"} == {"boolean"}


def type_errors(
    schema: Mapping[str, Any], value: Any, path: tuple[str | int, ...] = ()
) -> list[FieldError]:
    """The places in ``value`` where a boolean stands for a number or the other way round.
    An optional type (``X | None``: ``anyOf`` with ``null``) counts as ``X``, and a list or
    an object is looked into through the branch of its kind."""
    # null is the validator's to judge: for an optional argument it means "not given"
    if value is None:
        return []
    allowed = _types(schema)
    if allowed is not None:
        if isinstance(value, bool) and "boolean" not in allowed:
            return [FieldError(path, expected(allowed), value)]
        if _only_boolean(allowed) and not isinstance(value, bool | str):
            return [FieldError(path, expected(allowed), value)]
    errors: list[FieldError] = []
    if isinstance(value, Mapping):
        properties = _branch(schema, "properties")
        if isinstance(properties, Mapping):
            for key, item in value.items():
                sub = properties.get(key)
                if isinstance(sub, Mapping):
                    errors += type_errors(sub, item, (*path, key))
    elif isinstance(value, list):
        items = _branch(schema, "items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                errors += type_errors(items, item, (*path, i))
    return errors


def _branch(schema: Mapping[str, Any], key: str) -> Any:
    """``schema[key]`` (``properties`` of an object, ``items`` of a list), or that of the
    first ``anyOf``/``oneOf`` option that has it."""
    if key in schema:
        return schema[key]
    for option in schema.get("anyOf") or schema.get("oneOf") or ():
        if isinstance(option, Mapping):
            found = _branch(option, key)
            if found is not None:
                return found
    return None


def argument_checker(
    schema: Mapping[str, Any],
) -> Callable[[Mapping[str, Any]], list[FieldError]]:
    """:func:`type_errors` for the arguments of one tool, prepared once: for a schema whose
    properties are scalars (most tools) a loop over the sent values against two sets of
    names, and the full walk only for nested ones. A call pays for it on every face."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or any(
        not isinstance(sub, Mapping)
        or _branch(sub, "properties") is not None
        or _branch(sub, "items") is not None
        for sub in properties.values()
    ):
        return lambda arguments: type_errors(schema, arguments)
    kinds = {name: _types(sub) for name, sub in properties.items()}
    numbers = frozenset(n for n, k in kinds.items() if k is not None and "boolean" not in k)
    flags = frozenset(n for n, k in kinds.items() if k is not None and _only_boolean(k))
    if not numbers and not flags:
        return lambda arguments: []

    def check(arguments: Mapping[str, Any]) -> list[FieldError]:
        for name, value in arguments.items():
            if value.__class__ is bool:
                if name in numbers:
                    break
            elif name in flags and value is not None and value.__class__ is not str:
                break
        else:
            return []
        return type_errors(schema, arguments)  # the walk words the errors

    def check_numbers(arguments: Mapping[str, Any]) -> list[FieldError]:
        for value in arguments.values():  # no flags: only a boolean can be wrong
            if value.__class__ is bool:
                return check(arguments)
        return []

    return check if flags else check_numbers
