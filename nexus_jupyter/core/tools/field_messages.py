"""How a refused argument is worded, whichever validator refused it.

A tool's arguments are checked by pydantic (a Python function in this process), by
``jsonschema`` (a tool known by its JSON Schema: a worker process's tool, a declared tool, an
agent's), or by :mod:`.strict_types` (booleans versus numbers, before either). The same
arguments must get the same answer on every face, so none of them words its own errors: each
says what it found (pydantic's error ``type`` and ``ctx``, jsonschema's keyword and value) and
this module turns that into one :class:`~nexus_jupyter.core.errors.FieldError` per place:

- a wrong type: ``expected an integer`` (or ``expected an integer or a string``);
- a missing or unexpected argument, or field of a nested object (an unexpected one with the
  closest name it takes: ``unexpected field (did you mean "flow"?); this object takes: ...``);
- ``must be one of: "celsius", "fahrenheit"``, ``must be at least 1``, ``must have at most 3
  characters``, ``must match the pattern ^[a-z]+$``, ...;
- a value of a kind JSON writes as text: ``expected a date (YYYY-MM-DD)``, ``expected a
  date-time (ISO 8601, ...)``, ``expected a UUID``, ``expected a URL`` (:data:`FORMATS`, by the
  place's JSON Schema ``format``; pydantic's date, UUID, URL... errors are worded alike).

The refused value itself is quoted as JSON by ``FieldError.line`` (``(got "x")``), never here.
An optional type (``X | None``) is worded as ``X``: null there means "not given".
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import FieldError

__all__ = [
    "FORMATS",
    "expected",
    "from_jsonschema",
    "from_pydantic",
    "ordered",
    "resolve_ref",
    "unexpected",
]

_KIND_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def expected(kinds: Iterable[str]) -> str:
    """``expected an integer or a string``: the JSON types a place takes, in the schema's
    order; ``null`` is left out when it is one option among others (it means "not given")."""
    names = list(dict.fromkeys(kinds))
    if len(names) > 1:
        names = [k for k in names if k != "null"]
    return "expected " + " or ".join(_KIND_NAMES.get(k, k) for k in names)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _count(n: Any, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def _missing(loc: tuple[str | int, ...]) -> FieldError:
    what = "argument" if len(loc) == 1 else "field"
    return FieldError(loc, f"required {what} is missing", None)


def unexpected(loc: tuple[str | int, ...], takes: Sequence[str], value: Any) -> FieldError:
    """``unexpected field (did you mean "flow"?); this object takes: x, flow``: a key the
    place's schema does not take (``loc`` ends with it), with the closest of ``takes``."""
    what, whose = ("argument", "this tool") if len(loc) == 1 else ("field", "this object")
    close = difflib.get_close_matches(str(loc[-1]), list(takes), n=1) if loc else []
    said = f"unexpected {what}" + (f" (did you mean {_json(close[0])}?)" if close else "")
    if takes:
        said += f"; {whose} takes: {', '.join(takes)}"
    return FieldError(loc, said, value)


def _one_of(sub: Mapping[str, Any] | None) -> str | None:
    """``must be one of: ...`` for a place whose schema lists its values (JSON-quoted)."""
    if sub is None:
        return None
    if "const" in sub:
        return f"must be {_json(sub['const'])}"
    values = sub.get("enum")
    if isinstance(values, list):
        return "must be one of: " + ", ".join(_json(v) for v in values)
    return None


# -- where a path leads in a schema -------------------------------------------------------


def resolve_ref(root: Mapping[str, Any], sub: Any) -> Mapping[str, Any] | None:
    """``sub`` as a schema, the one its local ``$ref`` (``#/$defs/X``) points to if it has
    one; ``None`` when it is no schema (or the reference leads nowhere)."""
    if not isinstance(sub, Mapping):
        return None
    ref = sub.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, Mapping) else None
        return node if isinstance(node, Mapping) else None
    return sub


def _branches(root: Mapping[str, Any], sub: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The options of a union that are not null (an optional type has one)."""
    options = sub.get("anyOf") or sub.get("oneOf")
    if not isinstance(options, list):
        return []
    found = [resolve_ref(root, o) for o in options if _not_null(root, o)]
    return [o for o in found if o is not None]


def _step(root: Mapping[str, Any], sub: Mapping[str, Any], part: str | int) -> Any:
    branches = _branches(root, sub)
    if len(branches) == 1:  # X | None is X
        sub = branches[0]
    if isinstance(part, int):
        prefix = sub.get("prefixItems")
        if isinstance(prefix, list) and part < len(prefix):
            return resolve_ref(root, prefix[part])
        return resolve_ref(root, sub.get("items"))
    props = sub.get("properties")
    if isinstance(props, Mapping) and part in props:
        return resolve_ref(root, props[part])
    return resolve_ref(root, sub.get("additionalProperties"))


def _schema_at(root: Mapping[str, Any], loc: Sequence[str | int]) -> Mapping[str, Any] | None:
    sub: Mapping[str, Any] | None = root
    for part in loc:
        if sub is None:
            return None
        sub = _step(root, sub, part)
    return sub


def _types(sub: Mapping[str, Any] | None, root: Mapping[str, Any]) -> list[str]:
    """The JSON types a place declares, in order ([] when it does not say)."""
    if sub is None:
        return []
    kind = sub.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    out: list[str] = []
    for option in sub.get("anyOf") or sub.get("oneOf") or ():
        resolved = resolve_ref(root, option)
        found = _types(resolved, root) or (
            ["object"] if resolved and "properties" in resolved else []
        )
        if not found:
            return []
        out += found
    return out


def _fits(value: Any, kinds: Sequence[str]) -> bool:
    """Whether ``value`` is of one of the JSON types (an integer is a number too)."""
    if value is None:
        return "null" in kinds
    if isinstance(value, bool):
        return "boolean" in kinds
    if isinstance(value, int):
        return "integer" in kinds or "number" in kinds
    if isinstance(value, float):
        return "number" in kinds or ("integer" in kinds and value.is_integer())
    if isinstance(value, str):
        return "string" in kinds
    if isinstance(value, list | tuple):
        return "array" in kinds
    return "object" in kinds


def _chosen(
    root: Mapping[str, Any], sub: Mapping[str, Any] | None, value: Any, counts: Sequence[int]
) -> int | None:
    """Of a union, the option (its index among the non-null options) whose errors are the
    ones to tell: the one ``value``'s JSON type fits, or of several that fit, the one with
    the fewest errors (``counts``, one per option). ``None`` when none fits."""
    if sub is None:
        return None
    branches = _branches(root, sub)
    fitting = [i for i, b in enumerate(branches) if _fits(value, _types(b, root))]
    fitting = [i for i in fitting if i < len(counts)]
    return min(fitting, key=lambda i: counts[i]) if fitting else None


def _no_option(root: Mapping[str, Any], sub: Mapping[str, Any] | None) -> str:
    kinds = _types(sub, root)
    return expected(kinds) if kinds else "matches none of the forms this takes"


def ordered(errors: Iterable[FieldError], schema: Mapping[str, Any]) -> list[FieldError]:
    """``errors`` in the order of the schema's properties (then by name, list items by index):
    the order does not depend on which validator found them."""

    def key(error: FieldError) -> tuple[tuple[int, int, str], ...]:
        out = []
        sub: Mapping[str, Any] | None = schema
        for part in error.loc:
            if isinstance(part, int):
                out.append((0, part, ""))
            else:
                props = sub.get("properties") if sub is not None else None
                names = list(props) if isinstance(props, Mapping) else []
                out.append((1, names.index(part) if part in names else len(names), part))
            sub = _step(schema, sub, part) if sub is not None else None
        return tuple(out)

    return sorted(errors, key=key)


# what a bound says, by JSON Schema keyword
_BOUNDS = {
    "minimum": "must be at least {}",
    "maximum": "must be at most {}",
    "exclusiveMinimum": "must be greater than {}",
    "exclusiveMaximum": "must be less than {}",
    "multipleOf": "must be a multiple of {}",
}


# -- pydantic -----------------------------------------------------------------------------

_PYDANTIC_TYPES = {
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "int_parsing_size": "integer",
    "float_type": "number",
    "float_parsing": "number",
    "finite_number": "number",  # "nan", "inf": JSON has no such number
    "decimal_type": "number",
    "decimal_parsing": "number",
    "bool_type": "boolean",
    "bool_parsing": "boolean",
    "string_type": "string",
    "list_type": "array",
    "tuple_type": "array",
    "set_type": "array",
    "frozen_set_type": "array",
    "iterable_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "dataclass_type": "object",
    "none_required": "null",
    "path_type": "string",
}
# pydantic's error type -> (its ctx key, the schema's keyword); ctx says 0.0 for a float
# field where the schema says 0, so the schema's number is the one quoted
_PYDANTIC_BOUNDS = {
    "greater_than": ("gt", "exclusiveMinimum"),
    "greater_than_equal": ("ge", "minimum"),
    "less_than": ("lt", "exclusiveMaximum"),
    "less_than_equal": ("le", "maximum"),
    "multiple_of": ("multiple_of", "multipleOf"),
}
_PYDANTIC_UNITS = {"List": "item", "Tuple": "item", "Set": "item", "Dictionary": "key"}

#: what a string of a JSON Schema ``format`` must look like, in the words of a wrong type
FORMATS = {
    "date": "expected a date (YYYY-MM-DD)",
    "date-time": "expected a date-time (ISO 8601, e.g. 2026-01-02T15:04:05Z)",
    "time": "expected a time (HH:MM[:SS])",
    "duration": "expected a duration (ISO 8601, e.g. PT1H30M, or seconds)",
    "uuid": "expected a UUID",
    "uri": "expected a URL",
    "email": "expected an email address",
    "decimal": "expected a decimal number",
}
# pydantic's error types about the values only pydantic knows (dates, UUIDs, URLs, ...),
# worded as the JSON Schema format of their place is
_PYDANTIC_FORMATS = {
    **dict.fromkeys(
        ("date_type", "date_parsing", "date_from_datetime_parsing", "date_from_datetime_inexact"),
        "date",
    ),
    **dict.fromkeys(
        ("datetime_type", "datetime_parsing", "datetime_from_date_parsing"), "date-time"
    ),
    "datetime_object_invalid": "date-time",
    **dict.fromkeys(("time_type", "time_parsing"), "time"),
    **dict.fromkeys(("time_delta_type", "time_delta_parsing"), "duration"),
    **dict.fromkeys(("uuid_type", "uuid_parsing"), "uuid"),
    **dict.fromkeys(("url_type", "url_parsing", "url_syntax_violation"), "uri"),
    **dict.fromkeys(("decimal_type", "decimal_parsing"), "decimal"),
}
# pydantic's error type -> what it says, with its ctx's values
_PYDANTIC_SAYS = {
    "date_past": "must be a date in the past",
    "date_future": "must be a date in the future",
    "datetime_past": "must be in the past",
    "datetime_future": "must be in the future",
    "timezone_aware": "must have a time zone (Z or +HH:MM)",
    "timezone_naive": "must not have a time zone",
    "uuid_version": "must be a version {expected_version} UUID",
    "url_scheme": "must be a URL with the scheme {expected_schemes}",
    "url_too_long": "must be a URL of at most {max_length} characters",
    "decimal_max_digits": "must have at most {max_digits} digits",
    "decimal_max_places": "must have at most {decimal_places} decimal places",
    "decimal_whole_digits": "must have at most {whole_digits} digits before the point",
}


def from_pydantic(
    errors: Sequence[Mapping[str, Any]], schema: Mapping[str, Any], accepted: Sequence[str] = ()
) -> list[FieldError]:
    """pydantic's errors (``ValidationError.errors()``) of arguments checked against
    ``schema`` (the tool's input schema), worded as this module words them. The errors of a
    union are those of the option the value's type fits, else one ``expected A or B``."""
    out: list[FieldError] = []
    unions: dict[tuple[str | int, ...], list[tuple[str, tuple[Any, ...], Mapping[str, Any]]]] = {}
    for err in errors:
        loc = tuple(err["loc"])
        union = _union_prefix(schema, loc)
        if union is None:
            out.append(_pydantic_one(err, loc, schema, accepted))
        else:
            unions.setdefault(loc[:union], []).append((loc[union], loc[union + 1 :], err))
    for at, members in unions.items():
        sub = _schema_at(schema, at)
        value = members[0][2].get("input")
        tags = list(dict.fromkeys(tag for tag, _, _ in members))
        counts = [sum(1 for tag, _, _ in members if tag == t) for t in tags]
        pick = 0 if len(tags) == 1 and sub and "discriminator" in sub else None
        if pick is None:
            pick = _chosen(schema, sub, value, counts)
        if pick is None:
            out.append(FieldError(at, _no_option(schema, sub), value))
            continue
        for tag, rest, err in members:
            if tag == tags[pick]:
                out.append(_pydantic_one(err, (*at, *rest), schema, accepted))
    return ordered(out, schema)


def _union_prefix(schema: Mapping[str, Any], loc: tuple[Any, ...]) -> int | None:
    """Where in ``loc`` pydantic put the tag of a union's option (``("x", "int")``)."""
    sub: Mapping[str, Any] | None = schema
    for i, part in enumerate(loc):
        if sub is None:
            return None
        if len(_branches(schema, sub)) > 1 and i < len(loc) and not isinstance(part, int):
            return i
        sub = _step(schema, sub, part)
    return None


def _pydantic_one(
    err: Mapping[str, Any],
    loc: tuple[Any, ...],
    schema: Mapping[str, Any],
    accepted: Sequence[str],
) -> FieldError:
    loc = tuple(p for p in loc if isinstance(p, str | int))
    kind = err.get("type", "")
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "missing":
        return _missing(loc)
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):  # the latter: a dataclass
        parent = _schema_at(schema, loc[:-1])
        branches = _branches(schema, parent) if parent is not None else []
        parent = branches[0] if len(branches) == 1 else parent  # X | None is X
        props = parent.get("properties") if parent is not None else None
        takes = list(props) if isinstance(props, Mapping) and len(loc) > 1 else list(accepted)
        return unexpected(loc, takes, value)
    if kind in _PYDANTIC_FORMATS and isinstance(value, str):  # else a wrong type, below
        return FieldError(loc, FORMATS[_PYDANTIC_FORMATS[kind]], value)
    if kind in _PYDANTIC_SAYS:
        try:
            return FieldError(loc, _PYDANTIC_SAYS[kind].format(**ctx), value)
        except (KeyError, IndexError):
            pass  # a pydantic that says it otherwise: its own words, below
    if kind in _PYDANTIC_TYPES or kind in _PYDANTIC_FORMATS:
        sub = _schema_at(schema, loc)
        kinds = _types(sub, schema) or [_PYDANTIC_TYPES.get(kind, "string")]
        return FieldError(loc, expected(kinds), value)
    if kind in ("literal_error", "enum"):
        said = _one_of(_schema_at(schema, loc))
        return FieldError(loc, said or f"must be {ctx.get('expected', 'one of its values')}", value)
    if kind in _PYDANTIC_BOUNDS:
        name, keyword = _PYDANTIC_BOUNDS[kind]
        sub = _schema_at(schema, loc) or {}
        bound = sub.get(keyword, ctx.get(name))
        return FieldError(loc, _BOUNDS[keyword].format(_json(bound)), value)
    if kind in ("string_too_short", "string_too_long", "too_short", "too_long"):
        unit = "character" if kind.startswith("string") else "item"
        unit = _PYDANTIC_UNITS.get(str(ctx.get("field_type")), unit)
        bound = "at least" if kind.endswith("short") else "at most"
        n = ctx.get("min_length" if kind.endswith("short") else "max_length")
        return FieldError(loc, f"must have {bound} {_count(n, unit)}", value)
    if kind == "string_pattern_mismatch":
        return FieldError(loc, f"must match the pattern {ctx.get('pattern')}", value)
    if kind in ("value_error", "assertion_error") and str(ctx.get("error") or ""):
        # the tool's own validator: its words, without pydantic's "Value error, " in front
        return FieldError(loc, str(ctx["error"]), value)
    sub = _schema_at(schema, loc)
    if sub is not None and sub.get("format") in FORMATS:  # an email, say (a value_error)
        return FieldError(loc, FORMATS[sub["format"]], value)
    return FieldError(loc, str(err.get("msg", "is not valid")), value)


# -- jsonschema ---------------------------------------------------------------------------

_JSONSCHEMA_SIZES = {
    "minLength": ("at least", "character"),
    "maxLength": ("at most", "character"),
    "minItems": ("at least", "item"),
    "maxItems": ("at most", "item"),
    "minProperties": ("at least", "key"),
    "maxProperties": ("at most", "key"),
}


def from_jsonschema(err: Any, schema: Mapping[str, Any]) -> list[FieldError]:
    """One jsonschema error as :class:`FieldError` s worded like pydantic's (see
    :func:`from_pydantic`), not jsonschema's ``None is not of type 'string'``; keywords
    without such wording keep jsonschema's message."""
    loc = tuple(p for p in err.absolute_path if isinstance(p, str | int))
    kind = err.validator
    here = err.schema if isinstance(err.schema, Mapping) else {}
    if kind == "required" and isinstance(err.validator_value, list):
        # jsonschema reports a missing property at the parent; point at the property itself
        missing = err.message.split("'")[1] if err.message.count("'") >= 2 else None
        if missing:
            return [_missing((*loc, missing))]
    if kind == "additionalProperties":
        props = here.get("properties")
        props = props if isinstance(props, Mapping) else {}
        instance = err.instance if isinstance(err.instance, Mapping) else {}
        extra = [key for key in instance if key not in props]
        if extra and not here.get("patternProperties"):
            return [unexpected((*loc, key), list(props), instance[key]) for key in extra]
    if kind == "type":
        wanted = err.validator_value
        wanted = [wanted] if isinstance(wanted, str) else list(wanted or ())
        return [FieldError(loc, expected(str(w) for w in wanted), err.instance)]
    if kind in ("enum", "const"):
        said = _one_of(here)
        if said is not None:
            return [FieldError(loc, said, err.instance)]
    if kind in _BOUNDS:
        return [FieldError(loc, _BOUNDS[kind].format(_json(err.validator_value)), err.instance)]
    if kind in _JSONSCHEMA_SIZES:
        bound, unit = _JSONSCHEMA_SIZES[kind]
        return [
            FieldError(loc, f"must have {bound} {_count(err.validator_value, unit)}", err.instance)
        ]
    if kind == "pattern":
        return [FieldError(loc, f"must match the pattern {err.validator_value}", err.instance)]
    if kind == "format" and err.validator_value in FORMATS:
        return [FieldError(loc, FORMATS[err.validator_value], err.instance)]
    if kind == "oneOf" and isinstance(err.validator_value, list) and not err.context:
        # (no branch failed: the value fits several, and oneOf wants exactly one)
        return [
            FieldError(
                loc,
                "fits more than one of the forms this takes, and must fit exactly one",
                err.instance,
            )
        ]
    if kind in ("anyOf", "oneOf") and isinstance(err.validator_value, list):
        options = [i for i, o in enumerate(err.validator_value) if _not_null(schema, o)]
        by_option = [
            [c for c in err.context or () if c.relative_schema_path[0] == i] for i in options
        ]
        pick = _chosen(schema, here, err.instance, [len(found) for found in by_option])
        if pick is None or not by_option[pick]:
            return [FieldError(loc, _no_option(schema, here), err.instance)]
        return [f for c in by_option[pick] for f in from_jsonschema(c, schema)]
    return [FieldError(loc, err.message, err.instance)]


def _not_null(root: Mapping[str, Any], option: Any) -> bool:
    resolved = resolve_ref(root, option)
    return resolved is not None and resolved.get("type") != "null"
