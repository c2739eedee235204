"""The arguments of ``nexus-tools call`` read against the tool's input schema, and its
errors worded (and shaped, with ``--json``) for the command line.

``key=value`` values are JSON where that fits the schema: ``n=2`` is the number 2 for an
integer parameter, but ``content=42`` or ``text=true`` stay the text typed for a string
parameter (the shell has already removed any quotes a person typed around it).

>>> parse_call_arguments(["n=2", "text=true"], {"properties": {"n": {"type": "integer"},
...     "text": {"type": "string"}}})
{'n': 2, 'text': 'true'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import NexusError, ToolNotFound, ToolValidationError
from ..core.tools.arguments import parse_call_arguments as parse_typed_arguments
from .main import UsageProblem

__all__ = ["error_object", "parse_call_arguments", "validation_message"]

_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def _schema_types(schema: Any) -> set[str] | None:
    """The JSON types ``schema`` admits; ``None`` when it does not say (or says anything)."""
    if not isinstance(schema, Mapping):
        return None
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list) and all(isinstance(t, str) for t in declared):
        return set(declared)
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list) and options:
        found: set[str] = set()
        for option in options:
            sub = _schema_types(option)
            if sub is None:
                return None
            found |= sub
        return found
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values:
        return {_json_type(v) for v in values}
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return "object"


def _admits(types: set[str], value: Any) -> bool:
    kind = _json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def parse_call_arguments(
    items: Sequence[str], schema: Mapping[str, Any] | None = None, tool: str = ""
) -> dict[str, Any]:
    """One JSON object, or ``key=value`` items. A value is JSON where it parses (else the
    text); for a parameter whose schema admits only strings it is the text as typed, and
    for one that admits strings among other types, the text when its JSON value is of a
    type the schema does not admit (``name=42`` for ``str | None``)."""
    try:
        arguments = parse_typed_arguments(list(items), tool, command="nexus-tools call")
    except NexusError as exc:
        raise UsageProblem(str(exc)) from None
    single_json = len(items) == 1 and items[0].lstrip().startswith("{")
    properties = (schema or {}).get("properties")
    if single_json or not isinstance(properties, Mapping):
        return arguments
    for item in items:
        key, _, raw = item.partition("=")
        types = _schema_types(properties.get(key))
        if types is None or "string" not in types:
            continue
        if types == {"string"} or not _admits(types, arguments[key]):
            arguments[key] = raw
    return arguments


def validation_message(exc: ToolValidationError) -> str:
    """What is wrong with the arguments (the refused values as JSON), and where to look."""
    return f"{str(exc).rstrip('.')}. See its parameters with `nexus-tools info {exc.tool}`."


def error_object(tool: str | None, message: str, exc: BaseException | None) -> dict[str, Any]:
    """``call --json``'s answer when the call could not be made: the fields of a failed
    call's result that apply (``tool``, ``error``, ``error_type``, ``is_error``), plus the
    field errors of invalid arguments and the close names of an unknown tool."""
    kind = type(exc).__name__ if exc is not None else "UsageError"
    kind = "UsageError" if kind == "UsageProblem" else kind
    data: dict[str, Any] = {
        "tool": tool,
        "structured": None,
        "content": [],
        "error": message,
        "error_type": kind,
        "is_error": True,
    }
    if isinstance(exc, ToolValidationError):
        data["errors"] = [e.to_dict() for e in exc.errors]
    if isinstance(exc, ToolNotFound):
        data["suggestions"] = list(exc.suggestions)
    return data
