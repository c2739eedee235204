"""JSON Schema clean-ups: inline ``$ref``s and drop the titles pydantic invents.

Many MCP clients (and LLM providers) do not follow ``$ref``; a schema with its definitions
inlined works everywhere. Recursive types cannot be inlined, so those keep a ``$defs`` block
holding just the recursive definitions.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["inline_refs", "strip_generated_titles"]

_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_SINGLES = (
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
)


def _ref_name(ref: str) -> str | None:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            return ref[len(prefix) :]
    return None


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of ``schema`` with local ``$ref``s replaced by their definitions."""
    root = copy.deepcopy(dict(schema))
    defs: dict[str, Any] = {}
    defs.update(root.pop("definitions", {}) or {})
    defs.update(root.pop("$defs", {}) or {})
    kept: dict[str, Any] = {}

    def expand(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [expand(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        name = _ref_name(ref) if isinstance(ref, str) else None
        if name is not None and name in defs:
            if name in stack:  # recursive: keep a reference to a kept definition
                kept.setdefault(name, None)
                return {**node, "$ref": f"#/$defs/{name}"}
            target = expand(copy.deepcopy(defs[name]), (*stack, name))
            if target.get("title") == name:
                target.pop("title")
            siblings = {k: expand(v, stack) for k, v in node.items() if k != "$ref"}
            return {**target, **siblings}
        return {key: _expand_value(key, value, stack) for key, value in node.items()}

    def _expand_value(key: str, value: Any, stack: tuple[str, ...]) -> Any:
        if key in ("enum", "const", "default", "examples"):
            return value  # data, not schema
        return expand(value, stack)

    result = expand(root, ())
    while True:
        pending = [n for n, v in kept.items() if v is None]
        if not pending:
            break
        for name in pending:
            body = expand(copy.deepcopy(defs[name]), (name,))
            if body.get("title") == name:
                body.pop("title")
            kept[name] = body
    if kept:
        result["$defs"] = kept
    return result


def _generated_title(name: str) -> str:
    return name.replace("_", " ").title()


def strip_generated_titles(schema: dict[str, Any], *, top_level: bool = False) -> dict[str, Any]:
    """Drop the ``title`` pydantic derives from property and model names (in place).

    A title someone wrote on purpose (different from the derived one) is kept.
    """
    if top_level:
        schema.pop("title", None)
    _strip(schema)
    return schema


def _strip(node: Any) -> None:
    if not isinstance(node, dict):
        return
    props = node.get("properties")
    if isinstance(props, dict):
        for prop_name, sub in props.items():
            if isinstance(sub, dict) and sub.get("title") == _generated_title(prop_name):
                sub.pop("title")
    for key in _SCHEMA_MAPS:
        sub_map = node.get(key)
        if isinstance(sub_map, dict):
            for sub in sub_map.values():
                _strip(sub)
    for key in _SCHEMA_LISTS:
        sub_list = node.get(key)
        if isinstance(sub_list, list):
            for sub in sub_list:
                _strip(sub)
    for key in _SCHEMA_SINGLES:
        _strip(node.get(key))
