"""Where a result differs from what a case expects: the first difference, as a path.

JSON values are compared as JSON: ``3`` equals ``3.0``, but ``true`` is not ``1`` and
``"3"`` is not ``3``. A subset is what Jest calls ``toMatchObject``: every key of the
expected mapping is in the result with a matching value (recursively; extra keys in the
result are fine), and a list matches a list of the same length element by element.

>>> first_difference({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]})
'$.b[1]: expected 2, got 3'
>>> subset_difference({"units": "celsius"}, {"units": "celsius", "t": 21})
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["first_difference", "show", "subset_difference"]

_MAX_SHOWN = 160


def show(value: Any) -> str:
    """A value as JSON for a message, cut to a readable length."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _key_path(path: str, key: Any) -> str:
    key = str(key)
    return f"{path}.{key}" if key.isidentifier() else f"{path}[{json.dumps(key)}]"


def _scalars_differ(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is not type(actual) or expected != actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected != actual
    return type(expected) is not type(actual) or expected != actual


def first_difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """``None`` when ``actual`` equals ``expected``, else where and how they first differ."""
    return _difference(expected, actual, path, subset=False)


def subset_difference(expected: Any, actual: Any, path: str = "$") -> str | None:
    """``None`` when ``actual`` contains ``expected`` (see the module docstring), else the
    first key or item that is missing or differs."""
    return _difference(expected, actual, path, subset=True)


def _difference(expected: Any, actual: Any, path: str, *, subset: bool) -> str | None:
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{path}: expected an object {show(expected)}, got {show(actual)}"
        for key, want in expected.items():
            where = _key_path(path, key)
            if key not in actual:
                return f"{where}: missing (expected {show(want)})"
            found = _difference(want, actual[key], where, subset=subset)
            if found:
                return found
        if not subset:
            extra = [k for k in actual if k not in expected]
            if extra:
                return f"{_key_path(path, extra[0])}: not expected (got {show(actual[extra[0]])})"
        return None
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list | tuple):
            return f"{path}: expected a list {show(expected)}, got {show(actual)}"
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} item(s), got {len(actual)}: {show(actual)}"
        for i, (want, got) in enumerate(zip(expected, actual, strict=True)):
            found = _difference(want, got, f"{path}[{i}]", subset=subset)
            if found:
                return found
        return None
    if _scalars_differ(expected, actual):
        return f"{path}: expected {show(expected)}, got {show(actual)}"
    return None
