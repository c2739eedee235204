"""Keys an object's schema does not take, for a schema derived from a Python tool.

A Python tool's pydantic model drops the unknown keys of a model whose ``extra`` is not set
(its schema then lists the model's ``properties`` and says nothing of
``additionalProperties``), so an agent's typo (``{"spot": {"flor": 2}}`` for ``flow``) would
lose its value without a word. In a schema derived from a Python tool, such an object takes
the keys it lists only: :func:`unknown_keys_check` finds the others, at any depth, for both
validators of such a tool (its pydantic model in-process, and the JSON Schema its stand-in
for a worker process is checked by), so they refuse the same calls with the same words
(:func:`~.field_messages.unexpected`: ``$.spot.flor: unexpected field (did you mean
"flow"?); this object takes: x, flow``). A foreign schema (an MCP server's tool, a declared
tool's) is read as JSON Schema says, where such keys are allowed: its handler gets them and
its upstream decides (see :class:`~.jsonschema_check.JsonSchemaValidator`).

An object takes other keys where its schema says so: ``additionalProperties: true`` or a
schema (pydantic's ``extra="allow"``, a ``dict[str, X]``), ``patternProperties``, or a
composition that declares keys beside ``properties`` (``allOf``, ``anyOf``/``oneOf``,
``$ref``, ``dependencies``, ``if``, ``unevaluatedProperties``, ...). The options of an
``anyOf``/``oneOf`` beside ``properties`` take the parent's properties too, a key either
lists. ``additionalProperties: false`` (pydantic's ``extra="forbid"``) is the validators'
own to report. An empty ``properties: {}`` says nothing of keys (MCP's "any arguments"
schema).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import FieldError
from .field_messages import resolve_ref, unexpected

__all__ = ["unknown_keys_check"]

Loc = tuple[str | int, ...]
# keywords that say more of an object's keys than its ``properties`` list: the validators'
# to judge (an ``anyOf``/``oneOf`` option's keys, a ``$ref``'s, a ``dependencies`` schema's
# are declared keys too)
_OPENING = frozenset(
    {"additionalProperties", "patternProperties", "unevaluatedProperties", "allOf", "if"}
    | {"dependentSchemas", "dependentRequired", "dependencies", "propertyNames", "not"}
    | {"anyOf", "oneOf", "$ref"}
)


def _closed_by_silence(node: Mapping[str, Any]) -> bool:
    props = node.get("properties")
    return isinstance(props, Mapping) and bool(props) and not any(k in node for k in _OPENING)


def _options(
    root: Mapping[str, Any], node: Mapping[str, Any], depth: int = 0
) -> list[Mapping[str, Any]]:
    """The schemas a value at ``node`` is one of: its ``anyOf``/``oneOf`` options (theirs
    in turn: ``Cat | Dog | None`` is a tagged union inside an optional), each with the
    ``properties`` listed beside them, else itself."""
    options = node.get("anyOf") or node.get("oneOf")
    if not isinstance(options, list) or depth > 8:  # a union of itself is no schema to read
        return [node]
    props = node.get("properties")
    found: list[Mapping[str, Any]] = []
    for option in options:
        resolved = _resolve(root, option)
        if resolved is not None:
            found += _options(root, resolved, depth + 1)
    if isinstance(props, Mapping) and props:
        return [_with_properties(props, o) for o in found]
    return found


def _with_properties(props: Mapping[str, Any], option: Mapping[str, Any]) -> Mapping[str, Any]:
    """An object ``option`` of a union that also takes ``props`` (its parent's): a key
    either lists is taken, and others only as ``option`` itself says (an option that lists
    no keys of its own says nothing of them)."""
    if option.get("type", "object") != "object":
        return option
    own = option.get("properties")
    own = own if isinstance(own, Mapping) else {}
    joined = {**option, "properties": {**props, **own}}
    if not _closed_by_silence(option):
        joined.setdefault("additionalProperties", True)
    return joined


def _resolve(root: Mapping[str, Any], node: Any) -> Mapping[str, Any] | None:
    """``node`` as a schema: where its ``$ref`` points, unless it lists ``properties``
    beside it (then both say what it takes: it is read as is, not closed by silence)."""
    if isinstance(node, Mapping) and "$ref" in node and "properties" in node:
        return node
    return resolve_ref(root, node)


def _has_closed(root: Mapping[str, Any], node: Any, seen: set[int]) -> bool:
    """Whether a schema closed by silence is anywhere in ``node`` (walked once per tool)."""
    node = _resolve(root, node)
    if node is None or id(node) in seen:
        return False
    seen.add(id(node))
    if _closed_by_silence(node):
        return True
    subs: list[Any] = []
    for key in ("properties", "$defs", "definitions"):
        if isinstance(node.get(key), Mapping):
            subs += node[key].values()
    for key in ("items", "additionalProperties"):
        subs.append(node.get(key))
    for key in ("anyOf", "oneOf", "prefixItems"):
        if isinstance(node.get(key), list):
            subs += node[key]
    return any(_has_closed(root, sub, seen) for sub in subs)


def unknown_keys_check(
    schema: Mapping[str, Any],
) -> Callable[[Any], list[FieldError]] | None:
    """For a tool's input ``schema``, a function that lists the keys of the arguments (at
    any depth) that their object's schema does not take; ``None`` when no object of the
    schema is closed by silence (most tools: nothing to do on a call).

    >>> check = unknown_keys_check({"type": "object", "properties": {"spot": {
    ...     "type": "object", "properties": {"x": {}, "flow": {}}}}})
    >>> [e.line for e in check({"spot": {"x": 1, "flor": 2}})]
    ['$.spot.flor: unexpected field (did you mean "flow"?); this object takes: x, flow (got 2)']
    """
    if not _has_closed(schema, schema, set()):
        return None

    def check(arguments: Any) -> list[FieldError]:
        found: list[FieldError] = []
        _walk(schema, schema, arguments, (), found)
        return found

    return check


def _walk(
    root: Mapping[str, Any], node: Any, value: Any, loc: Loc, found: list[FieldError]
) -> None:
    node = _resolve(root, node)
    if node is None:
        return
    if isinstance(value, Mapping):
        objects = [o for o in _options(root, node) if _is_object(o)]
        candidates = [o for o in objects if _may_be(root, o, value)]
        if len(candidates) == 1:
            _walk_object(root, candidates[0], value, loc, found)
        elif candidates:
            _walk_union(root, candidates, value, loc, found)
    elif isinstance(value, list):
        arrays = [o for o in _options(root, node) if "items" in o or "prefixItems" in o]
        if len(arrays) != 1:
            return  # a union of lists: the validators' to judge
        prefix = arrays[0].get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else arrays[0].get("items")
            _walk(root, sub, item, (*loc, i), found)


def _is_object(node: Mapping[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or "properties" in node or "additionalProperties" in node


def _may_be(root: Mapping[str, Any], node: Mapping[str, Any], value: Mapping[str, Any]) -> bool:
    """Whether ``value`` may be of this option of a union: its tags fit (the ``const`` or
    ``enum`` of a property, as a discriminated union's options have)."""
    props = node.get("properties")
    if not isinstance(props, Mapping):
        return True
    for key, sub in props.items():
        sub = resolve_ref(root, sub)
        if key not in value or sub is None:
            continue
        if "const" in sub and value[key] != sub["const"]:
            return False
        if isinstance(sub.get("enum"), list) and value[key] not in sub["enum"]:
            return False
    return True


def _walk_object(
    root: Mapping[str, Any],
    node: Mapping[str, Any],
    value: Mapping[str, Any],
    loc: Loc,
    found: list[FieldError],
) -> None:
    props = node.get("properties")
    props = props if isinstance(props, Mapping) else {}
    closed = _closed_by_silence(node)
    extra = node.get("additionalProperties")
    for key, item in value.items():
        if key in props:
            _walk(root, props[key], item, (*loc, key), found)
        elif closed:
            found.append(unexpected((*loc, key), list(props), item))
        elif isinstance(extra, Mapping) and not node.get("patternProperties"):
            _walk(root, extra, item, (*loc, key), found)


def _walk_union(
    root: Mapping[str, Any],
    options: list[Mapping[str, Any]],
    value: Mapping[str, Any],
    loc: Loc,
    found: list[FieldError],
) -> None:
    """A value that may be one of several object ``options``: a key none of them takes is
    refused when each is closed; a key only one takes is looked into by that one's schema."""
    takes: dict[str, list[Any]] = {}
    for option in options:
        props = option.get("properties")
        for key, sub in (props if isinstance(props, Mapping) else {}).items():
            takes.setdefault(key, []).append(sub)
    closed = all(_closed_by_silence(o) or o.get("additionalProperties") is False for o in options)
    for key, item in value.items():
        subs = takes.get(key)
        if subs is None:
            if closed:
                found.append(unexpected((*loc, key), list(takes), item))
        elif len(subs) == 1:
            _walk(root, subs[0], item, (*loc, key), found)
