"""Call arguments typed by a person: ``{json}`` or ``key=value ...`` (the magic and the CLI)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import NexusError

__all__ = ["parse_call_arguments", "split_top_level", "typed_value"]


def parse_call_arguments(
    text: str | Sequence[str], tool: str = "", *, command: str = "%tool call"
) -> dict[str, Any]:
    """``{json}`` or ``key=value ...`` (a string, or argv items already split by a shell) (each value parsed as JSON where it parses, else kept
    as a string) -> the arguments dict.

    >>> parse_call_arguments('a=1 b=[2, 3] c=hello d="quoted text" o={"k": "a b"}')
    {'a': 1, 'b': [2, 3], 'c': 'hello', 'd': 'quoted text', 'o': {'k': 'a b'}}
    """
    for_tool = f" for {tool!r}" if tool else ""
    if isinstance(text, str):
        text = text.strip()
        if text.startswith("{"):
            return _json_object(text, for_tool)
        tokens = _split_top_level(text)
    else:  # argv items, already split by a shell
        tokens = list(text)
        if len(tokens) == 1 and tokens[0].lstrip().startswith("{"):
            return _json_object(tokens[0], for_tool)
    out: dict[str, Any] = {}
    for token in tokens:
        key, sep, raw = token.partition("=")
        if not sep or not key:
            raise NexusError(
                f"Arguments{for_tool} are key=value pairs or one JSON object, got {token!r}; "
                f'e.g. `{command} {tool or "NAME"} a=1 text="two words"`.'
            )
        out[key] = _value(raw)
    return out


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
