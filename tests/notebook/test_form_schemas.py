"""Form generation over many schemas: signature kinds (derived with Tool.from_function), raw
schemas shaped like real MCP servers', and the tool list of the real ``mcp-server-time``.

For each schema: every property gets a field, a sample value put into the form comes back out
unchanged (form mode and JSON mode), and the tool's own validator accepts it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from signature_kinds import SIGNATURE_KINDS, Address, f_list, f_required_optional, f_two

from nexus_jupyter import Registry, Tool
from nexus_jupyter.notebook.widgets.form import ToolForm
from nexus_jupyter.notebook.widgets.form_fields import resolve


class Cat(BaseModel):
    kind: Literal["cat"]
    lives: int


class Dog(BaseModel):
    kind: Literal["dog"]
    good: bool


def f_long_text(body: Annotated[str, Field(max_length=5000)]) -> None: ...
def f_discriminated(pet: Cat | Dog) -> None: ...
def f_optional_model(address: Address | None = None) -> None: ...
def f_bounded_float(ratio: Annotated[float, Field(gt=0, lt=1)] = 0.5) -> None: ...


FUNCTIONS = SIGNATURE_KINDS + [
    v for k, v in dict(globals()).items() if k.startswith("f_") and callable(v)
]

# Raw schemas shaped like the reference filesystem MCP server's and other common shapes.
RAW: dict[str, dict[str, Any]] = {
    "fs_read_text_file": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "head": {"type": "number", "description": "Return only the first N lines."},
            "tail": {"type": "number", "description": "Return only the last N lines."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    "fs_edit_file": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {"type": "string", "description": "Text to search for."},
                        "newText": {"type": "string", "description": "Text to replace with."},
                    },
                    "required": ["oldText", "newText"],
                    "additionalProperties": False,
                },
            },
            "dryRun": {
                "type": "boolean",
                "default": False,
                "description": "Preview changes using git-style diff format",
            },
        },
        "required": ["path", "edits"],
        "additionalProperties": False,
    },
    "fs_search_files": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "pattern": {"type": "string"},
            "excludePatterns": {"type": "array", "items": {"type": "string"}, "default": []},
        },
        "required": ["path", "pattern"],
    },
    "fs_list_directory_with_sizes": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "sortBy": {"type": "string", "enum": ["name", "size"], "default": "name"},
        },
        "required": ["path"],
    },
    "fs_read_multiple_files": {
        "type": "object",
        "properties": {"paths": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
        "required": ["paths"],
    },
    "refs_and_defs": {
        "type": "object",
        "$defs": {"Unit": {"type": "string", "enum": ["c", "f"]}},
        "properties": {"unit": {"$ref": "#/$defs/Unit"}},
        "required": ["unit"],
    },
    "type_list": {
        "type": "object",
        "properties": {
            "value": {"type": ["string", "integer"]},
            "maybe": {"type": ["number", "null"]},
        },
        "required": ["value", "maybe"],
    },
    "one_of_objects": {
        "type": "object",
        "properties": {
            "target": {
                "oneOf": [
                    {
                        "type": "object",
                        "title": "by id",
                        "properties": {"id": {"type": "integer"}},
                        "required": ["id"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "title": "by name",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
        "required": ["target"],
    },
    "const_and_free_object": {
        "type": "object",
        "properties": {"version": {"const": 2}, "meta": {"type": "object"}},
        "required": ["version"],
    },
    "bounded_numbers": {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 0, "maximum": 100, "default": 10},
            "temperature": {"type": "number", "exclusiveMinimum": 0, "maximum": 2},
        },
        "required": ["temperature"],
    },
}


def sample(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int = 0) -> Any:
    """A valid value for ``schema`` that differs from its default where it can."""
    schema = resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][-1]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = [b for b in schema[key] if resolve(b, root).get("type") != "null"]
            return sample(branches[-1], root, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = [k for k in kind if k != "null"][-1]
    if kind == "string":
        return "12345" if schema.get("pattern") else "text " * max(1, schema.get("minLength", 1))
    if kind == "integer":
        return int(schema.get("minimum", 0)) + 3 if "maximum" not in schema else schema["maximum"]
    if kind == "number":
        return 0.25
    if kind == "boolean":
        return True
    if kind == "array":
        if "prefixItems" in schema:
            return [sample(s, root, depth + 1) for s in schema["prefixItems"]]
        if depth > 2:
            return []
        return [sample(schema.get("items", {}), root, depth + 1)]
    if kind == "object" and "properties" in schema:
        return {
            k: sample(v, root, depth + 1)
            for k, v in schema["properties"].items()
            if depth < 3 or k in schema.get("required", ())
        }
    if kind == "object":
        return {"key": 1}
    return {"any": ["json", 1]}


def _tools() -> list[Tool]:
    tools = [Tool.from_function(fn) for fn in FUNCTIONS]
    tools += [
        Tool.from_schema(name, f"{name} (raw schema)", schema, lambda args: args)
        for name, schema in RAW.items()
    ]
    return tools


async def _time_server_tools() -> list[Tool]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = os.path.join(os.path.dirname(sys.executable), "mcp-server-time")
    params = StdioServerParameters(command=command, args=["--local-timezone", "UTC"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
    return [
        Tool.from_schema(t.name, t.description or "", t.input_schema, lambda args: args)
        for t in listed.tools
    ]


@pytest.fixture(scope="module")
def time_server_tools() -> list[Tool]:
    return asyncio.run(_time_server_tools())


@pytest.fixture(scope="module")
def reg() -> Any:
    with Registry(search="keyword") as registry:
        yield registry


def check_form(tool: Tool, reg: Registry) -> None:
    schema = dict(tool.spec.input_schema)
    form = ToolForm(tool, reg)
    assert set(form.fields.fields) == set(schema.get("properties", {}))
    value = sample(schema, schema)
    form.set_arguments(value)
    got = form.arguments()
    assert got == value, f"{tool.name}: form gave {got!r} for {value!r}"
    tool.validate(got)  # the tool's own validator accepts what the form sends
    form.mode.value = "JSON"
    assert json.loads(form.raw.value) == value
    form.mode.value = "form"
    assert form.arguments() == value
    form.close()


@pytest.mark.parametrize("tool", _tools(), ids=lambda t: t.name)
def test_form_round_trips_a_valid_value(tool: Tool, reg: Registry) -> None:
    check_form(tool, reg)


def test_there_are_at_least_25_schemas() -> None:
    assert len(_tools()) >= 25


def test_forms_for_the_real_time_server(time_server_tools: list[Tool], reg: Registry) -> None:
    assert {t.name for t in time_server_tools} == {"get_current_time", "convert_time"}
    for tool in time_server_tools:
        check_form(tool, reg)
        form = ToolForm(tool, reg)
        help_texts = [f.help.value for f in form.fields.fields.values()]
        assert any("IANA timezone" in h for h in help_texts)  # descriptions become help text


def test_optional_fields_left_unset_are_omitted_and_nullable_required_sends_null(
    reg: Registry,
) -> None:
    form = ToolForm(Tool.from_function(f_required_optional), reg)
    assert form.arguments() == {"x": None}
    form = ToolForm(Tool.from_function(f_two), reg)
    b = form.fields.fields["b"]
    assert "default: 2" in b.control.placeholder  # default shown...
    assert form.arguments() == {}  # ...but not sent until the user types a value; a is missing
    b.control.value = "5"
    assert form.arguments() == {"b": 5}


def test_long_strings_get_a_multi_line_box(reg: Registry) -> None:
    import ipywidgets as W

    form = ToolForm(Tool.from_function(f_long_text), reg)
    assert isinstance(form.fields.fields["body"].control, W.Textarea)


def test_array_items_can_be_added_and_removed(reg: Registry) -> None:
    form = ToolForm(Tool.from_function(f_list), reg)
    array = form.fields.fields["items"]
    for text in ("a", "b", "c"):
        array.add_button.click()
        array.items[-1].control.value = text
    array.box.children[1].children[1].click()  # the remove button of the second item
    assert form.arguments() == {"items": ["a", "c"]}
    assert [f.loc for f in array.items] == [("items", 0), ("items", 1)]


def test_union_branch_chooser(reg: Registry) -> None:
    form = ToolForm(Tool.from_function(f_discriminated), reg)
    union = form.fields.fields["pet"]
    union.chooser.value = 1
    union.current().fields["good"].control.value = True
    assert form.arguments() == {"pet": {"kind": "dog", "good": True}}


def test_optional_booleans_choose_between_default_true_and_false(reg: Registry) -> None:
    def flags(verbose: bool = False, strict: bool = True) -> str:
        """Flags."""
        return f"{verbose} {strict}"

    form = ToolForm(Tool.from_function(flags), reg)
    verbose = form.fields.fields["verbose"]
    assert verbose.control.label == "default (false)" and not hasattr(verbose, "use")
    assert form.arguments() == {}
    verbose.set(True)
    assert form.arguments() == {"verbose": True}
