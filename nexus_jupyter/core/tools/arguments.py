"""Call arguments typed by a person: ``{json}`` or ``key=value ...`` (the magic and the CLI).

A ``key=value`` value is JSON where it parses, else the text. Given the tool's input schema,
a parameter that takes text gets text: ``content=42`` is ``"42"`` for a string parameter
(and for ``str | None``, where 42 does not fit), while ``n=42`` stays the number 42. Typed
on a line (``%tool call``), ``text="two words"`` is the text inside the quotes; from a
shell (``nexus-tools call``), which has already removed the quotes a person typed, a string
parameter takes the text exactly as it arrives. A boolean parameter takes ``true``/``false``
and the words pydantic reads as a boolean (``yes``, ``no``, ``on``, ``off``, ``1``, ``0``, ``t``,
``f``, ``y``, ``n``, in any case): ``flag=1`` is the text ``"1"`` there, so it is true, not
the number 1 (which is refused: a number is not a boolean).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import NexusError

__all__ = ["json_type", "json_types", "parse_call_arguments", "split_top_level", "typed_value"]


def parse_call_arguments(
    text: str | Sequence[str],
    tool: str = "",
    *,
    command: str = "%tool call",
    schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``{json}`` or ``key=value ...`` (a string, or argv items already split by a shell) (each value parsed as JSON where it parses, else kept
    as a string) -> the arguments dict.

    >>> parse_call_arguments('a=1 b=[2, 3] c=hello d="quoted text" o={"k": "a b"}')
    {'a': 1, 'b': [2, 3], 'c': 'hello', 'd': 'quoted text', 'o': {'k': 'a b'}}
    """
    for_tool = f" for {tool!r}" if tool else ""
    from_shell = not isinstance(text, str)
    if isinstance(text, str):
        text = text.strip()
        if text.startswith("{"):
            return _json_object(text, for_tool)
        tokens = _split_top_level(text)
    else:  # argv items, already split by a shell
        tokens = list(text)
        if len(tokens) == 1 and tokens[0].lstrip().startswith("{"):
            return _json_object(tokens[0], for_tool)
    properties = (schema or {}).get("properties")
    if not isinstance(properties, Mapping):
        properties = {}
    out: dict[str, Any] = {}
    for token in tokens:
        key, sep, raw = token.partition("=")
        if not sep or not key:
            raise NexusError(
                f"Arguments{for_tool} are key=value pairs or one JSON object, got {token!r}; "
                f'e.g. `{command} {tool or "NAME"} a=1 text="two words"`.'
            )
        value = _value(raw)
        types = json_types(properties.get(key))
        if types is not None and "string" in types and not isinstance(value, str):
            if types == {"string"} or not _admits(types, value):
                value = raw  # a parameter that takes text: the text typed
        elif from_shell and types == {"string"}:
            value = raw  # the shell removed the quotes a person typed: any left are meant
        elif types is not None and types - {"null"} == {"boolean"} and _is_number(value):
            value = raw  # `flag=1`: the text, which a boolean takes as pydantic reads it
        out[key] = value
    return out


_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def json_type(value: Any) -> str:
    """The JSON type of a Python value (``"null"``, ``"boolean"``, ``"integer"``, ...)."""
    if value is None:
        return "null"
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return name
    return "object"


def json_types(schema: Any) -> set[str] | None:
    """The JSON types ``schema`` admits (through ``anyOf``/``oneOf``, ``enum`` and
    ``const``); ``None`` when it does not say (so admits anything)."""
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
            sub = json_types(option)
            if sub is None:
                return None
            found |= sub
        return found
    values = schema.get("enum", [schema["const"]] if "const" in schema else None)
    if isinstance(values, list) and values:
        return {json_type(v) for v in values}
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _admits(types: set[str], value: Any) -> bool:
    kind = json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def _json_object(text: str, for_tool: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise NexusError(f"The arguments{for_tool} are not valid JSON ({exc}): {text!r}.") from None
    if not isinstance(value, dict):
        raise NexusError(f"The JSON arguments{for_tool} must be an object, got {value!r}.")
    return value


def _value(raw: str) -> Any:
    """JSON where it parses; a quoted text without its quotes; else the text as typed."""
    try:
        return json.loads(raw)
    except ValueError:
        pass
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        inner = raw[1:-1]
        try:
            return json.loads(inner) if inner[:1] in "[{" else inner
        except ValueError:
            return inner
    return raw


def _split_top_level(text: str) -> list[str]:
    """Split on spaces outside quotes and brackets, so `b=[2, 3]` and `o={"k": "a b"}` stay
    whole (a shell-style split would break them and drop the JSON's quotes)."""
    tokens: list[str] = []
    buf: list[str] = []
    depth = 0
    quote: str | None = None
    for ch in text:
        if quote is not None:
            buf.append(ch)
            if ch == quote and (len(buf) < 2 or buf[-2] != "\\"):
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch.isspace() and depth <= 0:
            if buf:
                tokens.append("".join(buf))
                buf = []
            continue
        buf.append(ch)
    if quote is not None:
        raise NexusError(f"Could not read the arguments {text!r}: a {quote} quote is not closed.")
    if buf:
        tokens.append("".join(buf))
    return tokens


#: Public names for other command lines built on the same rules (``%tool test save``).
split_top_level = _split_top_level
typed_value = _value
