"""Whether a user's accepted answer fits the question ``ctx.elicit`` asked: the flat object
schema of primitive fields that MCP elicitation allows (strings with ``enum``/``oneOf``,
length bounds, numbers and integers with bounds, booleans, multi-select arrays).

The MCP spec (2025-11-25, elicitation) says servers should validate what comes back against
``requestedSchema``; a client may send anything. :func:`answer_errors` names each field that
does not fit, so the tool is told which one instead of reading a wrong value.
"""

from __future__ import annotations

from typing import Any

__all__ = ["answer_errors"]

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
}


def _allowed(field_schema: dict[str, Any]) -> list[Any] | None:
    """The values a single- or multi-select field allows (``enum`` or ``oneOf``/``anyOf``
    of ``const``), or ``None`` when any value of its type goes."""
    if isinstance(field_schema.get("enum"), list):
        return list(field_schema["enum"])
    for key in ("oneOf", "anyOf"):
        options = field_schema.get(key)
        # choices only when every option is a constant ("str | None" is a type and null)
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, dict) and "const" in o for o in options)
        ):
            return [o["const"] for o in options]
    return None


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "integer" and isinstance(value, float):
        return value.is_integer()
    wanted = _TYPES.get(kind)
    if wanted is None:
        return True  # a type this check does not know: the client's word goes
    # JSON true/false is no number, and a number no boolean
    return isinstance(value, wanted) and (kind == "boolean" or not isinstance(value, bool))


def _field_problem(value: Any, field_schema: dict[str, Any]) -> str | None:
    kind = field_schema.get("type")
    if isinstance(kind, str) and not _type_ok(value, kind):
        return f"must be {'an' if kind[0] in 'aeiou' else 'a'} {kind}, not {value!r}"
    if isinstance(value, list):
        items = field_schema.get("items")
        allowed = _allowed(items) if isinstance(items, dict) else None
        wrong = [v for v in value if allowed is not None and v not in allowed]
        if wrong:
            return f"allows only {', '.join(map(repr, allowed or []))}, not {wrong!r}"
        low, high = field_schema.get("minItems"), field_schema.get("maxItems")
        if isinstance(low, int) and len(value) < low:
            return f"needs at least {low} choices, got {len(value)}"
        if isinstance(high, int) and len(value) > high:
            return f"takes at most {high} choices, got {len(value)}"
        return None
    allowed = _allowed(field_schema)
    if allowed is not None and value not in allowed:
        return f"must be one of {', '.join(map(repr, allowed))}, not {value!r}"
    if isinstance(value, str):
        low, high = field_schema.get("minLength"), field_schema.get("maxLength")
        if isinstance(low, int) and len(value) < low:
            return f"needs at least {low} characters, got {len(value)}"
        if isinstance(high, int) and len(value) > high:
            return f"takes at most {high} characters, got {len(value)}"
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        low, high = field_schema.get("minimum"), field_schema.get("maximum")
        if isinstance(low, (int, float)) and value < low:
            return f"must be at least {low}, not {value!r}"
        if isinstance(high, (int, float)) and value > high:
            return f"must be at most {high}, not {value!r}"
    return None


def answer_errors(schema: dict[str, Any], content: dict[str, Any]) -> list[str]:
    """What is wrong with ``content`` for ``schema``, one ``"field 'x' …"`` per problem
    (a required field missing, a wrong type, a value outside its choices or bounds);
    ``[]`` when it fits. Fields the schema does not name are left alone."""
    properties = schema.get("properties") or {}
    problems = [
        f"the required field {name!r} is missing"
        for name in schema.get("required") or ()
        if name not in content
    ]
    for name, value in content.items():
        field_schema = properties.get(name)
        if isinstance(field_schema, dict):
            problem = _field_problem(value, field_schema)
            if problem:
                problems.append(f"field {name!r} {problem}")
    return problems
