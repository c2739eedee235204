"""Validate arguments against a raw JSON Schema (tools from MCP servers and agents).

``jsonschema`` takes about two seconds to import here (it builds a grammar), so it is imported
on first use only; :func:`warm_up` lets a background thread pay that cost early.
"""

from __future__ import annotations

import json
import math
import numbers
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import FieldError, ToolValidationError
from .field_messages import from_jsonschema, ordered
from .unknown_keys import unknown_keys_check

__all__ = ["JsonSchemaValidator", "check_is_object", "warm_up"]

_import_lock = threading.Lock()


def _validator_class() -> Any:
    with _import_lock:
        from jsonschema import validators

        return validators


def warm_up() -> None:
    """Import jsonschema now (call from a background thread)."""
    _validator_class()


def check_is_object(tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The minimal check when the remote end validates: arguments must be an object."""
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping):
        raise ToolValidationError(
            tool, [FieldError((), "arguments must be a JSON object", arguments)]
        )
    return dict(arguments)


class JsonSchemaValidator:
    """Checks arguments against ``schema``; JSON strings sent for array/object properties
    are parsed first, as LLM clients often send them that way. A ``null`` given for an
    optional property whose schema does not accept null means "not given" (agents send
    null for arguments they leave out): it is dropped, not refused. Numbers and booleans
    sent as strings are read as a Python tool reads them (:func:`_scalars_from_strings`).

    Keys an object's schema does not list are JSON Schema's to judge: taken unless it says
    ``additionalProperties: false``, as an MCP server or a declared tool's handler, which
    gets them, expects. ``from_python``: the schema was derived from a Python tool (one in a
    worker process), whose pydantic model would drop them silently: then an object that
    lists its ``properties`` and says nothing of others takes those only, as the tool itself
    does in-process (:mod:`.unknown_keys`)."""

    def __init__(self, schema: Mapping[str, Any], *, from_python: bool = False) -> None:
        self.schema = dict(schema)
        self._validator: Any = None
        props = self.schema.get("properties") or {}
        self._json_props = tuple(
            name for name, sub in props.items() if isinstance(sub, Mapping) and _container_only(sub)
        )
        self._plainly_valid = _plain_check(self.schema, from_python=from_python)
        self._unknown_keys = unknown_keys_check(self.schema) if from_python else None

    def _get(self) -> Any:
        if self._validator is None:
            validators = _validator_class()
            cls = validators.validator_for(self.schema)
            try:
                cls.check_schema(self.schema)
            except Exception:
                cls = validators.Draft202012Validator  # lenient: servers ship odd schemas
            # JSON has no NaN nor infinity (Python's json reads them): not numbers here either
            number = cls.TYPE_CHECKER.redefine("number", _finite_number)
            cls = validators.extend(cls, type_checker=number)
            self._validator = cls(self.schema, format_checker=_format_checker())
        return self._validator

    def validate(self, tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        data = check_is_object(tool, arguments)
        for name in self._json_props:
            value = data.get(name)
            if isinstance(value, str) and value[:1] in ("[", "{"):
                try:
                    data[name] = json.loads(value)
                except ValueError:
                    pass
        if self._plainly_valid is not None and self._plainly_valid(data):
            return data  # what jsonschema would accept too, at a tenth of its cost
        errors = self._errors(tool, data)
        scalars = _scalars_from_strings(data, errors)
        if scalars is not None:
            data = scalars
            errors = self._errors(tool, data)
        unset = _refused_nulls(data, errors, self.schema)
        if unset:
            data = {key: value for key, value in data.items() if key not in unset}
            errors = self._errors(tool, data)
        unknown = self._unknown_keys(data) if self._unknown_keys is not None else []
        if errors or unknown:
            found = [f for e in errors for f in from_jsonschema(e, self.schema)]
            seen = {f.loc for f in found}
            found += [f for f in unknown if f.loc not in seen]
            raise ToolValidationError(tool, ordered(found, self.schema))
        return data

    def _errors(self, tool: str, data: dict[str, Any]) -> list[Any]:
        try:
            return sorted(self._get().iter_errors(data), key=lambda e: list(e.absolute_path))
        except Exception as exc:  # a schema the library cannot evaluate: say so, don't crash
            raise ToolValidationError(
                tool, [FieldError((), f"the tool's schema cannot be evaluated: {exc}", None)]
            ) from None


def _finite_number(checker: Any, value: Any) -> bool:
    """A number as jsonschema counts one (any ``numbers.Number`` but a bool: numpy's too),
    except NaN and infinity, which JSON cannot carry."""
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return False
    try:
        return math.isfinite(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # a complex number: jsonschema's own rule lets it be
        return True


# the formats checked (a string only), each as a Python tool takes it (by pydantic, so a
# tool in a worker process refuses nothing its parent let through): dates, UUIDs, URLs
_CHECKED_FORMATS = {
    "date": "datetime:date",
    "date-time": "datetime:datetime",
    "time": "datetime:time",
    "duration": "datetime:timedelta",
    "uuid": "uuid:UUID",
    "uri": "pydantic:AnyUrl",  # an absolute URI, as the format means (not a relative path)
}
_format_checkers: list[Any] = []


def _format_checker() -> Any:
    """A jsonschema ``FormatChecker`` of :data:`_CHECKED_FORMATS` (others stay annotations:
    an MCP server's own formats are its to judge)."""
    if _format_checkers:
        return _format_checkers[0]
    import importlib

    from jsonschema import FormatChecker
    from pydantic import TypeAdapter

    checker = FormatChecker(formats=())
    for name, where in _CHECKED_FORMATS.items():
        module, _, attr = where.partition(":")
        parse = TypeAdapter(getattr(importlib.import_module(module), attr)).validate_python

        def check(value: Any, parse: Callable[[Any], Any] = parse) -> bool:
            if isinstance(value, str):
                parse(value)  # raises pydantic's ValidationError, a ValueError
            return True

        checker.checks(name, raises=ValueError)(check)
    _format_checkers.append(checker)
    return checker


# The keywords a plain schema may use: an object of named scalar properties, the shape of
# most tools' arguments. Annotations only, besides "type" ("format" is not checked: the
# validator checks only :data:`_CHECKED_FORMATS`, which make a schema not plain).
_PLAIN_TOP = frozenset(
    {"type", "properties", "required", "additionalProperties", "title", "description", "$schema"}
)
_PLAIN_PROPERTY = frozenset({"type", "description", "title", "default", "examples", "format"})
# A value that is surely of the JSON type: bool is not an integer or a number here (JSON
# Schema says so too), and a float that is whole, which jsonschema counts as an integer,
# is left to jsonschema.
_SURELY: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) is int or (type(v) is float and math.isfinite(v)),
    "boolean": lambda v: type(v) is bool,
}


def _plain_check(
    schema: Mapping[str, Any], *, from_python: bool = False
) -> Callable[[dict[str, Any]], bool] | None:
    """For a plain schema (see :data:`_PLAIN_TOP`), a check that says ``True`` only for
    arguments jsonschema accepts too (and, ``from_python``, :mod:`.unknown_keys`); any
    doubt (``False``) goes to jsonschema, which also words the errors. ``None`` for any
    other schema."""
    if not set(schema) <= _PLAIN_TOP or schema.get("type") != "object":
        return None
    props = schema.get("properties", {})
    required = schema.get("required", [])
    # from a Python tool, properties listed and nothing said of others: those keys only
    extra = schema.get("additionalProperties", not (from_python and props))
    if not isinstance(props, Mapping) or type(extra) is not bool:
        return None
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return None
    if not isinstance(schema.get("$schema", ""), str):
        return None  # jsonschema cannot evaluate it: let it say so
    checks: dict[str, Callable[[Any], bool]] = {}
    for name, sub in props.items():
        if not (isinstance(sub, Mapping) and set(sub) <= _PLAIN_PROPERTY):
            return None
        if sub.get("format") in _CHECKED_FORMATS:
            return None
        kind = sub.get("type")
        check = _SURELY.get(kind) if isinstance(kind, str) else None
        if check is None:
            return None
        checks[name] = check
    needed = tuple(required)
    closed = not extra

    def plainly_valid(data: dict[str, Any]) -> bool:
        if closed and not data.keys() <= checks.keys():
            return False
        return all(key in data for key in needed) and all(
            check(data[key]) for key, check in checks.items() if key in data
        )

    return plainly_valid


def _refused_nulls(
    data: Mapping[str, Any], errors: list[Any], schema: Mapping[str, Any]
) -> set[str]:
    """The optional top-level arguments given as ``null`` that an error is about. A property
    marked ``nullable: true`` (OpenAPI's way to allow null, which JSON Schema ignores) keeps
    its null: there it may mean "clear this", so it is refused, not dropped."""
    if not errors:
        return set()
    required = schema.get("required")
    required = set(required) if isinstance(required, list | tuple) else set()
    props = schema.get("properties")
    props = props if isinstance(props, Mapping) else {}
    about = {e.absolute_path[0] for e in errors if len(e.absolute_path) == 1 and e.instance is None}
    return {
        key
        for key in about
        if isinstance(key, str)
        and key in data
        and data[key] is None
        and key not in required
        and not (isinstance(props.get(key), Mapping) and props[key].get("nullable") is True)
    }


def _container_only(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    kinds = {kind} if isinstance(kind, str) else set(kind or ())
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key, ()):
            if isinstance(sub, Mapping) and isinstance(sub.get("type"), str):
                kinds.add(sub["type"])
    return bool(kinds & {"array", "object"}) and "string" not in kinds


def _scalars_from_strings(data: dict[str, Any], errors: list[Any]) -> dict[str, Any] | None:
    """``data`` with the numbers and booleans sent as strings (``"2"`` for an integer,
    ``"true"`` for a boolean) as such, parsed as a Python tool's arguments are (by pydantic's
    lax mode: ``" 2 "`` and ``"2.0"`` are 2; ``"true"``, ``"yes"``, ``"on"``, ``"1"`` are true
    in any case, ``"x"`` is refused), so both kinds of tool take the same arguments; ``None``
    when there are none. Where several types are allowed (``int | bool``), the first in the
    schema's order that reads the text wins, as in pydantic's union (``"1"`` is 1 there)."""
    found: Any = None
    done: set[tuple[Any, ...]] = set()
    for err in _with_context(errors):
        if err.validator != "type" or not isinstance(err.instance, str):
            continue
        at = tuple(err.absolute_path)
        if at in done:
            continue
        wanted = err.validator_value
        wanted = [wanted] if isinstance(wanted, str) else list(wanted or ())
        if "string" in wanted:
            continue
        for kind in wanted:
            value = _parsed(kind, err.instance) if kind in _SCALAR_TYPES else None
            if value is not None:
                found = _put(found if found is not None else data, list(at), value)
                done.add(at)
                break
    return found


def _with_context(errors: list[Any]) -> list[Any]:
    """The errors and those of the options of a union (``int | None`` sent ``"2"``)."""
    out = []
    for err in errors:
        out.append(err)
        out += _with_context(list(err.context or ()))
    return out


_SCALAR_TYPES: dict[str, type] = {"integer": int, "number": float, "boolean": bool}
_SCALAR_PARSERS: dict[str, Callable[[Any], Any]] = {}


def _parsed(kind: str, text: str) -> int | float | bool | None:
    parse = _SCALAR_PARSERS.get(kind)
    if parse is None:
        from pydantic import TypeAdapter

        parse = _SCALAR_PARSERS[kind] = TypeAdapter(_SCALAR_TYPES[kind]).validate_python
    try:
        value = parse(text)
    except ValueError:  # pydantic's ValidationError is one
        return None
    # "nan" and "inf" parse as floats, but JSON has no such number, and NaN passes every
    # bound (each comparison with it is false): refused, as the string they are
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value if isinstance(value, int | float) else None


def _put(data: Any, path: list[Any], value: Any) -> Any:
    """A copy of ``data`` with ``value`` at ``path`` (the containers on the way copied)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    copy: Any = list(data) if isinstance(data, list) else dict(data)
    copy[head] = _put(data[head], rest, value)
    return copy
