"""Form fields that hold other fields: objects, arrays, unions and "may be left unset"."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as W

from .form_fields import (
    UNSET,
    EnumField,
    Field,
    FieldInputError,
    Loc,
    NumberField,
    StringField,
    build_field,
    resolve,
    split_null,
)

__all__ = ["BUILDERS", "ArrayField", "ObjectField", "OptionalField", "UnionField"]

_INDENT = W.Layout(margin="0 0 0 24px", border_left="2px solid #ddd", padding="0 0 0 6px")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", dict: "object", list: "array"}.get(type(value), "")


def _branch_label(schema: Mapping[str, Any]) -> str:
    if schema.get("title"):
        return str(schema["title"])
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"array of {_branch_label(schema['items'])}"
    if kind == "object" and schema.get("properties"):
        return "object {" + ", ".join(list(schema["properties"])[:3]) + "}"
    return str(kind or "any")


def _fits(schema: Mapping[str, Any], value: Any) -> bool:
    """Whether ``value`` looks like an instance of branch ``schema`` (enough to pick the
    branch a value came from; the registry does the real validation)."""
    if "const" in schema:
        return bool(schema["const"] == value)
    if "enum" in schema:
        return value in schema["enum"]
    kind, types = _json_type(value), schema.get("type")
    allowed = types if isinstance(types, list) else [types] if types else []
    if allowed and kind not in allowed and not (kind == "integer" and "number" in allowed):
        return False
    if kind == "object" and isinstance(schema.get("properties"), Mapping):
        props, required = schema["properties"], set(schema.get("required") or ())
        extra_ok = schema.get("additionalProperties", True) is not False
        return required <= set(value) and (extra_ok or set(value) <= set(props))
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return all(_fits(schema["items"], v) for v in value)
    return True


class _Container(Field):
    def __init__(
        self, schema: Mapping[str, Any], loc: Loc, label: str, root: Mapping[str, Any]
    ) -> None:
        self.root = root
        super().__init__(schema, loc, label)

    def row(self) -> W.Widget:
        if not self.label:
            return self.control
        self.control.layout = _INDENT
        return W.VBox([W.Label(self.label), self.control])

    def on_change(self, callback: Callable[[], Any]) -> None:
        for child in self.children():
            child.on_change(callback)


class OptionalField(Field):
    """A field that may be left unset: a "set" checkbox in front of the real field. Unset
    means "leave it out" (the tool's default applies), or ``null`` when ``send_null``."""

    def __init__(self, inner: Field, *, send_null: bool = False) -> None:
        self.inner, self.send_null = inner, send_null
        self.schema, self.loc, self.label = inner.schema, inner.loc, inner.label
        self.error, self.help = inner.error, inner.help
        self.use = W.Checkbox(
            value=False, description="set", indent=False, layout=W.Layout(width="56px")
        )
        self.control = inner.control
        inner.on_change(self._touched)
        self.widget = W.HBox([self.use, inner.widget])

    def _touched(self) -> None:
        self.use.value = True  # typing into an optional field means "send it"

    def get(self) -> Any:
        if not self.use.value:
            return None if self.send_null else UNSET
        return self.inner.get()

    def set(self, value: Any) -> None:
        if value is None:  # null: unset (sent as null where required, else left out)
            self.use.value = False
            return
        self.inner.set(value)
        self.use.value = True

    def reset(self) -> None:
        self.inner.reset()  # which ticks "set" (an edit of the inner field): untick after
        self.use.value = False

    def children(self) -> list[Field]:
        return [self.inner]

    def set_error(self, message: str | None) -> None:
        self.inner.set_error(message)

    def on_change(self, callback: Callable[[], Any]) -> None:
        self.use.observe(lambda _: callback(), names="value")
        self.inner.on_change(callback)

    def prefill(self) -> None:
        pass  # the inner field was pre-filled when it was built


class ObjectField(_Container):
    """An object with ``properties``: one field per property; optional ones can stay unset."""

    def build(self) -> W.Widget:
        props = self.schema.get("properties") or {}
        required = set(self.schema.get("required") or ())
        self.fields: dict[str, Field] = {}
        for name, sub in props.items():
            nullable, core = split_null(resolve(sub, self.root))
            label = f"{name} *" if name in required else name
            optional = name not in required and not nullable
            if optional and core.get("type") == "boolean" and "enum" not in core:
                # true / false / "default (…)" rather than a checkbox behind a "set" checkbox
                core = {**core, "enum": [True, False]}
            inner = build_field(
                core, (*self.loc, name), label, root=self.root, required=name in required
            )
            # An empty text or number box already means "not given": no "set" checkbox.
            blank_means_unset = isinstance(inner, NumberField | StringField) and not nullable
            if isinstance(inner, StringField) and name not in required:
                inner.blank_is_unset = True
            if isinstance(inner, EnumField) and optional:
                inner.allow_unset()  # "default (X)" is the first choice: no checkbox either
                blank_means_unset = True
            wrap = (name not in required or nullable) and not blank_means_unset
            self.fields[name] = OptionalField(inner, send_null=name in required) if wrap else inner
        return W.VBox([f.widget for f in self.fields.values()])

    def get(self) -> Any:
        out: dict[str, Any] = {}
        problems: list[FieldInputError] = []
        for name, field in self.fields.items():
            try:
                value = field.get()
            except FieldInputError as exc:  # read the rest too: each problem is flagged at once
                problems += exc.problems
                value = exc.partial
            if value is not UNSET:
                out[name] = value
        if problems:
            raise FieldInputError.several(problems, out)
        return out

    def set(self, value: Any) -> None:
        """Set the properties ``value`` names (the others keep theirs; :meth:`reset` first
        for exactly ``value``)."""
        if isinstance(value, Mapping):
            for key, item in value.items():
                if key in self.fields:
                    self.fields[key].set(item)

    def reset(self) -> None:
        for field in self.fields.values():
            field.reset()

    def children(self) -> list[Field]:
        return list(self.fields.values())


class ArrayField(_Container):
    """A list: one field per item, "+ add" and a remove button per item; ``prefixItems`` are fixed."""

    def build(self) -> W.Widget:
        items = self.schema.get("items")
        self.item_schema: Mapping[str, Any] = items if isinstance(items, Mapping) else {}
        self.items: list[Field] = []
        self._listeners: list[Callable[[], Any]] = []
        self.box = W.VBox()
        self.add_button = W.Button(description="+ add", layout=W.Layout(width="80px"))
        self.add_button.on_click(lambda _: self.add_item())
        prefix = self.schema.get("prefixItems")
        if isinstance(prefix, list):
            self.items = [
                build_field(s, (*self.loc, i), f"[{i}]", root=self.root)
                for i, s in enumerate(prefix)
            ]
            self.box.children = [f.widget for f in self.items]
            return self.box
        for _ in range(int(self.schema.get("minItems") or 0)):
            self.add_item()
        return W.VBox([self.box, self.add_button])

    @property
    def fixed(self) -> bool:
        return isinstance(self.schema.get("prefixItems"), list)

    def add_item(self, value: Any = UNSET) -> Field:
        field = build_field(
            self.item_schema, (*self.loc, len(self.items)), f"[{len(self.items)}]", root=self.root
        )
        if value is not UNSET:
            field.set(value)
        self.items.append(field)
        self._redraw()
        return field

    def remove_item(self, index: int) -> None:
        values = [f.get() for i, f in enumerate(self.items) if i != index]
        self.items = []
        for value in values:  # rebuild so every item's loc matches its new position
            self.add_item(value)
        self._redraw()

    def on_change(self, callback: Callable[[], Any]) -> None:
        self._listeners.append(callback)  # adding or removing an item is a change
        super().on_change(callback)

    def _redraw(self) -> None:
        for listener in getattr(self, "_listeners", ()):
            listener()
        rows = []
        for i, field in enumerate(self.items):
            remove = W.Button(
                icon="minus", tooltip="remove this item", layout=W.Layout(width="32px")
            )
            remove.on_click(lambda _, i=i: self.remove_item(i))
            rows.append(W.HBox([field.widget, remove]))
        self.box.children = rows

    def get(self) -> Any:
        out: list[Any] = []
        problems: list[FieldInputError] = []
        for field in self.items:
            try:
                value = field.get()
            except FieldInputError as exc:
                problems += exc.problems
                value = exc.partial
            if value is not UNSET:
                out.append(value)
        if problems:
            raise FieldInputError.several(problems, out)
        return out

    def reset(self) -> None:
        if self.fixed:
            for field in self.items:
                field.reset()
            return
        self.items = []
        for _ in range(int(self.schema.get("minItems") or 0)):
            self.add_item()
        self._redraw()

    def set(self, value: Any) -> None:
        if not isinstance(value, list):
            return
        if self.fixed:
            for field, item in zip(self.items, value, strict=False):
                field.set(item)
            return
        self.items = []
        for item in value:
            self.add_item(item)
        self._redraw()

    def children(self) -> list[Field]:
        return list(self.items)


class UnionField(_Container):
    """``anyOf`` / ``oneOf`` / a list of types: choose a branch, then fill it in."""

    def build(self) -> W.Widget:
        schema = self.schema
        raw = schema.get("anyOf") or schema.get("oneOf")
        if not isinstance(raw, list):
            raw = [{"type": t} for t in schema.get("type", [])]
        self.branches = [resolve(b, self.root) for b in raw]
        labels = [_branch_label(b) for b in self.branches]
        self.chooser = W.Dropdown(
            options=list(zip(labels, range(len(labels)), strict=True)),
            value=0,
            layout=W.Layout(width="auto"),
        )
        self.built: dict[int, Field] = {}
        self.holder = W.VBox()
        self.chooser.observe(lambda _: self._show(), names="value")
        self._show()
        return W.VBox([self.chooser, self.holder])

    def current(self) -> Field:
        index = self.chooser.value
        if index not in self.built:
            self.built[index] = build_field(self.branches[index], self.loc, "", root=self.root)
        return self.built[index]

    def _show(self) -> None:
        self.holder.children = [self.current().widget]

    def get(self) -> Any:
        return self.current().get()

    def set(self, value: Any) -> None:
        for i, branch in enumerate(self.branches):
            if _fits(branch, value):
                self.chooser.value = i
                self.current().set(value)
                return

    def reset(self) -> None:
        self.chooser.value = 0
        self.current().reset()

    def children(self) -> list[Field]:
        return [self.current()]


def _object(
    schema: Mapping[str, Any], loc: Loc, label: str, root: Mapping[str, Any], required: bool
) -> Field | None:
    if schema.get("type") == "object" and (schema.get("properties") or loc == ()):
        return ObjectField(schema, loc, label, root)
    return None


def _array(
    schema: Mapping[str, Any], loc: Loc, label: str, root: Mapping[str, Any], required: bool
) -> Field | None:
    return ArrayField(schema, loc, label, root) if schema.get("type") == "array" else None


def _union(
    schema: Mapping[str, Any], loc: Loc, label: str, root: Mapping[str, Any], required: bool
) -> Field | None:
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        if len(branches) == 1:
            return build_field(
                {**branches[0], **{k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}},
                loc,
                label,
                root=root,
            )
        return UnionField(schema, loc, label, root)
    if isinstance(schema.get("type"), list) and len(schema["type"]) > 1:
        return UnionField(schema, loc, label, root)
    if isinstance(schema.get("type"), list) and len(schema["type"]) == 1:
        return build_field({**schema, "type": schema["type"][0]}, loc, label, root=root)
    return None


BUILDERS = (_union, _object, _array)
