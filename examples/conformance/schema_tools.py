"""A tool that declares its own JSON Schema (2020-12) input schema, kept as written
(``$schema``, ``$defs`` with ``$anchor``, ``allOf``/``anyOf``, ``if``/``then``/``else``,
``additionalProperties``): made with ``Tool.from_schema`` at module level."""

from __future__ import annotations

from typing import Any

from nexus_jupyter import Tool

CONTACT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def _register_contact(arguments: dict[str, Any]) -> str:
    return f"registered {arguments.get('name', 'someone')}"


json_schema_2020_12_tool = Tool.from_schema(
    "json_schema_2020_12_tool",
    "Register a contact (an input schema using JSON Schema 2020-12 keywords).",
    CONTACT_SCHEMA,
    _register_contact,
)
