"""Form fields generated from JSON Schema, one small class per kind of value.

:func:`build_field` walks a chain of builders (as ipywidgets' ``interaction`` does); each
returns a :class:`Field` or ``None`` for "not mine", and the raw-JSON field catches the rest.
Every field has an ``error`` line right under it, so a validation error from the registry
(``FieldError.loc``) is shown next to the value it is about.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as W

__all__ = [
    "UNSET",
    "EnumField",
    "Field",
    "FieldInputError",
    "NumberField",
    "StringField",
    "build_field",
    "field_at",
]

UNSET: Any = type("Unset", (), {"__repr__": lambda self: "UNSET"})()
Loc = tuple[str | int, ...]
_LONG_TEXT = 120  # a string allowed to be longer than this gets a multi-line box
_BIG = 2**53  # JavaScript's safe integer range: the front end cannot hold more


class FieldInputError(ValueError):
    """What the user typed cannot be read (text in a number box, bad JSON in a JSON box).

    A field that holds others reads them all before it raises, so every unreadable one is
    flagged at once: ``problems`` are the fields' own errors (just this one for a single
    field), ``partial`` the value of what could be read (``UNSET`` when nothing could), and
    ``loc`` and the message are the first problem's.
    """

    def __init__(
        self,
        loc: Loc,
        message: str,
        *,
        problems: list[FieldInputError] | None = None,
        partial: Any = UNSET,
    ) -> None:
        super().__init__(message)
        self.loc = loc
        self.problems: list[FieldInputError] = problems or [self]
        self.partial = partial

    @classmethod
    def several(cls, problems: list[FieldInputError], partial: Any) -> FieldInputError:
        """The problems of a field's parts, with what its readable parts hold."""
        return cls(problems[0].loc, str(problems[0]), problems=problems, partial=partial)


class Field:
    """A labelled control for one value at ``loc``, with help text and an error line."""

    blank: Any = ""  # the control's value when nothing is given

    def __init__(self, schema: Mapping[str, Any], loc: Loc, label: str) -> None:
        self.schema = schema
        self.loc = loc
        self.label = label
        self.error = W.HTML("", layout=W.Layout(display="none"))
        self.control = self.build()
        description = schema.get("description", "")
        self.help = W.HTML(f"<small style='color:#666'>{_esc(description)}</small>")
        self.help.layout.display = None if description else "none"
        self.widget = W.VBox([self.row(), self.help, self.error])

    def row(self) -> W.Widget:
        if not self.label:
            return self.control
        return W.HBox([W.Label(self.label, layout=W.Layout(width="160px")), self.control])

    # subclasses -----------------------------------------------------------------------
    def build(self) -> W.Widget:
        raise NotImplementedError

    def get(self) -> Any:
        return self.control.value

    def set(self, value: Any) -> None:
        self.control.value = value

    def children(self) -> list[Field]:
        return []

    def reset(self) -> None:
        """Back to how it was built: empty, or the schema's default (a value the arguments
        being shown leave out)."""
        self.control.value = self.blank
        self.prefill()

    # shared ---------------------------------------------------------------------------
    def set_error(self, message: str | None) -> None:
        self.error.value = (
            f"<span style='color:#c62828'>⚠ {_esc(message)}</span>" if message else ""
        )
        self.error.layout.display = None if message else "none"

    def clear_errors(self) -> None:
        self.set_error(None)
        for child in self.children():
            child.clear_errors()

    def on_change(self, callback: Callable[[], Any]) -> None:
        self.control.observe(lambda _: callback(), names="value")

    def prefill(self) -> None:
        default = self.schema.get("default")
        if default is not None:
            try:
                self.set(default)
            except Exception:  # an odd default must not break the form; the JSON mode has it
                pass


def _esc(text: Any) -> str:
    import html

    return html.escape(str(text))


def field_at(root: Field, loc: Loc) -> Field:
    """The deepest field whose ``loc`` is a prefix of ``loc`` (the root if none)."""
    best = root
    for child in root.children():
        if child.loc == loc[: len(child.loc)] and len(child.loc) >= len(best.loc):
            best = field_at(child, loc)
            break
    return best


# -- scalars ------------------------------------------------------------------------------


_MULTILINE_NAMES = ("command", "code", "script", "content", "body", "text", "prompt", "source")


class StringField(Field):
    """A text box; a multi-line one for long text (a shell command, code, a file's content).
    Left empty, an optional string is left out (the tool's default applies)."""

    blank_is_unset = False  # set by the object field for optional properties

    def build(self) -> W.Widget:
        name = str(self.loc[-1]).lower() if self.loc else ""
        long = (
            (self.schema.get("maxLength") or 0) > _LONG_TEXT
            or self.schema.get("format") in ("textarea", "multiline")
            or len(str(self.schema.get("default") or "")) > 60
            or any(word in name for word in _MULTILINE_NAMES)
        )
        placeholder = (
            str(self.schema.get("examples", [""])[0]) if self.schema.get("examples") else ""
        )
        if not placeholder and self.schema.get("default") is not None:
            placeholder = f"default: {self.schema['default']}"
        if long:
            return W.Textarea(
                placeholder=placeholder, rows=3, layout=W.Layout(flex="1 1 auto", width="auto")
            )
        return W.Text(placeholder=placeholder, layout=W.Layout(flex="1 1 auto", width="auto"))

    def get(self) -> Any:
        value = self.control.value
        return UNSET if value == "" and self.blank_is_unset else value

    def set(self, value: Any) -> None:
        self.control.value = value if isinstance(value, str) else json.dumps(value)

    def prefill(self) -> None:
        pass  # the default is the placeholder: left empty, the tool's default applies


def _bounds(schema: Mapping[str, Any], step: float) -> tuple[float | None, float | None]:
    low = schema.get("minimum")
    if isinstance(schema.get("exclusiveMinimum"), int | float):
        low = schema["exclusiveMinimum"] + step
    high = schema.get("maximum")
    if isinstance(schema.get("exclusiveMaximum"), int | float):
        high = schema["exclusiveMaximum"] - step
    return low, high


class NumberField(Field):
    """A number typed as text: empty means "not given" (no 0 that looks like a choice), so a
    required number left empty gets the registry's "required" error and an optional one is
    left out. The bounds and the default are shown as the placeholder; the registry checks them."""

    integer = False

    def build(self) -> W.Widget:
        low, high = _bounds(self.schema, 1 if self.integer else 1e-9)
        hints = []
        if self.schema.get("default") is not None:
            hints.append(f"default: {self.schema['default']}")
        if low is not None or high is not None:
            hints.append(
                f"{_number(low) if low is not None else ''}…{_number(high) if high is not None else ''}"
            )
        kind = "integer" if self.integer else "number"
        return W.Text(placeholder=", ".join(hints) or kind, layout=W.Layout(width="200px"))

    def get(self) -> Any:
        text = self.control.value.strip()
        if not text:
            return UNSET
        number = read_number(text, self.integer)
        if isinstance(number, str):
            raise FieldInputError(self.loc, number)
        if number.is_integer() and (self.integer or text.lstrip("+-").isdigit()):
            return int(number)  # "1000" stays 1000, not 1000.0, in the call and its history
        return number

    def set(self, value: Any) -> None:
        self.control.value = "" if value is None or value is UNSET else _number(value)

    def prefill(self) -> None:
        pass  # the default is the placeholder: left empty, the tool's default applies


_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?", re.IGNORECASE)


def read_number(text: str, integer: bool) -> float | str:
    """The number ``text`` (stripped, not empty) spells, or why it is none, worded as the
    sidebar's Try form words it (numbers.ts): ``"abc" is not an integer.``, ``"1.5" is not an
    integer (no decimals).``; the text is quoted as JSON, as every refused value is."""
    noun = "an integer" if integer else "a number"
    shown = json.dumps(text, ensure_ascii=False)
    if not _NUMBER.fullmatch(text):
        tail = ""
        if re.search(r"[\d.]\s*[-+*/%()]|^[(]", text):
            tail = " (the form does not work out expressions: type the result)"
        elif re.fullmatch(r"[+-]?\.?", text) or re.search(r"e[+-]?$", text, re.IGNORECASE):
            tail = " yet: finish typing it"
        return f"{shown} is not {noun}{tail}."
    number = float(text)
    if not math.isfinite(number):
        return f"{shown} is too large for {noun}."
    if integer and not number.is_integer():
        return f"{shown} is not an integer (no decimals)."
    return number


def _number(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


class IntegerField(NumberField):
    integer = True


class BooleanField(Field):
    blank = False

    def build(self) -> W.Widget:
        return W.Checkbox(value=False, indent=False)

    def set(self, value: Any) -> None:
        self.control.value = bool(value)


class EnumField(Field):
    """``enum`` / ``Literal``: a dropdown of the allowed values. For an optional property
    (:meth:`allow_unset`) the first choice is "default (X)": left there, the value is not sent
    and the tool's default applies."""

    unset_allowed = False

    def build(self) -> W.Widget:
        self.choices = list(self.schema["enum"])
        labels = [_choice_label(c) for c in self.choices]
        return W.Dropdown(options=list(zip(labels, range(len(labels)), strict=True)), value=0)

    def allow_unset(self) -> None:
        default = self.schema.get("default", UNSET)
        shown = "default" if default is UNSET else f"default ({_choice_label(default)})"
        self.control.options = [(shown, -1), *self.control.options]
        self.control.value = -1
        self.unset_allowed = True

    def reset(self) -> None:
        self.control.value = -1 if self.unset_allowed else 0
        if not self.unset_allowed:
            self.prefill()

    def get(self) -> Any:
        return UNSET if self.control.value == -1 else self.choices[self.control.value]

    def set(self, value: Any) -> None:
        if value in self.choices:
            self.control.value = self.choices.index(value)


def _choice_label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


class ConstField(Field):
    def build(self) -> W.Widget:
        return W.HTML(f"<code>{_esc(json.dumps(self.schema['const']))}</code>")

    def get(self) -> Any:
        return self.schema["const"]

    def set(self, value: Any) -> None:
        pass

    def reset(self) -> None:
        pass

    def on_change(self, callback: Callable[[], Any]) -> None:
        pass


class NullField(ConstField):
    def build(self) -> W.Widget:
        return W.HTML("<code>null</code>")

    def get(self) -> Any:
        return None


class JsonField(Field):
    """Anything else (free-form objects, ``dict[str, X]``, odd schemas): a JSON text box."""

    def build(self) -> W.Widget:
        return W.Textarea(placeholder="JSON value", layout=W.Layout(width="60%", height="60px"))

    def get(self) -> Any:
        text = self.control.value.strip()
        if not text:
            return UNSET
        try:
            return json.loads(text)
        except ValueError as exc:
            raise FieldInputError(self.loc, f"not valid JSON: {exc}") from None

    def set(self, value: Any) -> None:
        self.control.value = json.dumps(value, indent=1)


def _kind(schema: Mapping[str, Any]) -> str | None:
    kind = schema.get("type")
    return kind if isinstance(kind, str) else None


def _scalar(
    schema: Mapping[str, Any], loc: Loc, label: str, root: Mapping[str, Any], required: bool
) -> Field | None:
    if "const" in schema:
        return ConstField(schema, loc, label)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return EnumField(schema, loc, label)
    cls = {
        "string": StringField,
        "integer": IntegerField,
        "number": NumberField,
        "boolean": BooleanField,
        "null": NullField,
    }.get(_kind(schema) or "")
    return cls(schema, loc, label) if cls else None


# -- resolution and the builder chain -----------------------------------------------------


def resolve(
    schema: Mapping[str, Any], root: Mapping[str, Any], depth: int = 0
) -> Mapping[str, Any]:
    """Follow a local ``$ref`` and flatten a one-element ``allOf``."""
    while "$ref" in schema and depth < 20:
        ref = schema["$ref"]
        target: Any = root
        if isinstance(ref, str) and ref.startswith("#/"):
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, Mapping) else {}
        extra = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**(target if isinstance(target, Mapping) else {}), **extra}
        depth += 1
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        merged = {**resolve(schema["allOf"][0], root, depth), **schema}
        merged.pop("allOf")
        return merged
    return schema


def split_null(schema: Mapping[str, Any]) -> tuple[bool, Mapping[str, Any]]:
    """``(nullable, schema without the null branch)`` for ``anyOf [X, null]`` and
    ``"type": ["X", "null"]``."""
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and any(b.get("type") == "null" for b in branches):
            rest = [b for b in branches if b.get("type") != "null"]
            base = {k: v for k, v in schema.items() if k != key}
            if len(rest) == 1:
                return True, {**rest[0], **base}
            return True, {**base, key: rest}
    kind = schema.get("type")
    if isinstance(kind, list) and "null" in kind:
        rest_kinds = [k for k in kind if k != "null"]
        return True, {**schema, "type": rest_kinds[0] if len(rest_kinds) == 1 else rest_kinds}
    return False, schema


Builder = Callable[[Mapping[str, Any], Loc, str, Mapping[str, Any], bool], "Field | None"]


def build_field(
    schema: Mapping[str, Any],
    loc: Loc = (),
    label: str = "",
    *,
    root: Mapping[str, Any] | None = None,
    required: bool = True,
) -> Field:
    """The field for ``schema`` at ``loc``; ``root`` holds ``$defs`` for references."""
    from .form_containers import BUILDERS

    root = root if root is not None else schema
    schema = resolve(schema, root)
    if len(loc) > 8:  # deep or recursive schemas: JSON beyond this depth
        return JsonField(schema, loc, label)
    for builder in (*BUILDERS, _scalar):
        field = builder(schema, loc, label, root, required)
        if field is not None:
            field.prefill()
            return field
    field = JsonField(schema, loc, label)
    field.prefill()
    return field
