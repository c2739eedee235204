"""``nexus-tools register FILE``: add tool definitions to a level's ``nex.yaml``.

A definition file holds one entry (a mapping with ``id``), a list of entries, or a mapping
with a ``tools:`` list. Every entry is validated first (errors name the file, the line
and the key); then the target ``nex.yaml`` is edited round-trip (``ruamel.yaml``), so its
comments, key order and other settings stay as they were. An entry whose ``id`` is
already there is replaced in place; new ones are appended.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import ConfigError
from .manifest import ToolDeclaration

__all__ = ["read_definitions", "register_definitions"]


def read_definitions(path: Path) -> list[dict[str, Any]]:
    """The validated entries of definition file ``path``, as plain mappings."""
    from .loading import _describe, read_level

    if not path.is_file():
        raise ConfigError(f"Tool definition file {str(path)!r} does not exist.")
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML ({exc}).") from None
    base: tuple[str, ...] | None  # where the list of entries sits in the file
    if isinstance(data, list):
        entries, base = data, ()
    elif isinstance(data, dict) and "tools" in data:
        read_level(path)  # same checks as a nex.yaml
        entries, base = data["tools"], ("tools",)
    elif isinstance(data, dict):
        entries, base = [data], None  # the file is the entry itself
    else:
        raise ConfigError(
            f"{path}: expected a tool definition (a mapping with `id` and `source`), a list "
            "of them, or a mapping with a `tools:` list."
        )
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{path}: no tool definitions found.")
    for index, entry in enumerate(entries):
        try:
            ToolDeclaration.model_validate(entry)
        except ValidationError as exc:
            in_file = () if base is None else (*base, index)
            raise ConfigError(_describe(exc, path, ("tools", index), in_file)) from None
    return [dict(e) for e in entries]


def register_definitions(definitions: list[dict[str, Any]], target: Path) -> dict[str, str]:
    """Add or replace ``definitions`` (by ``id``) in ``target``, keeping its comments and
    other keys; ``{id: "added" | "replaced"}``. The result is validated before writing."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    from .loading import _validate

    original = target.read_text(encoding="utf-8") if target.is_file() else ""
    rt = YAML(typ="rt")
    rt.preserve_quotes = True
    rt.width = 4096  # long lines stay whole, as the person wrote them
    rt.indent(**_indentation(original))
    document: Any = rt.load(original) if original.strip() else None
    if document is None:
        document = CommentedMap()
    if not isinstance(document, dict):
        raise ConfigError(f"{target}, line 1: the top level must be a mapping of settings.")
    tools = document.get("tools")
    if tools is None:
        tools = document["tools"] = CommentedSeq()
    if not isinstance(tools, list):
        raise ConfigError(f"{target}: `tools` must be a list, got {type(tools).__name__}.")
    done: dict[str, str] = {}
    for definition in definitions:
        where = next((i for i, t in enumerate(tools) if _id(t) == definition["id"]), None)
        if where is None:
            tools.append(definition)
            done[definition["id"]] = "added"
        else:
            tools[where] = definition
            done[definition["id"]] = "replaced"
    buffer = io.StringIO()
    rt.dump(document, buffer)
    text = buffer.getvalue()
    _validate(yaml.safe_load(text) or {}, None)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return done


# a key, then (past blank and comment lines) the first line below it: a nested key or a dash
_BELOW_A_KEY = r"^( *)[^\s#-][^\n]*:[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*"
_NESTED_KEY = re.compile(_BELOW_A_KEY + r"( +)[^\s#-]", re.M)
_SEQUENCE_ITEM = re.compile(_BELOW_A_KEY + r"( *)-( +)\S", re.M)


def _indentation(text: str) -> dict[str, int]:
    """The file's own indentation, so a rewrite keeps its layout: how far a nested key
    sits (``mapping``), where a list's dash sits (``offset``) and its item (``sequence``),
    each from its parent key. New files get the layout of the examples (``  - id: ...``)."""
    nested = next((m for m in _NESTED_KEY.finditer(text) if len(m[2]) > len(m[1])), None)
    item = _SEQUENCE_ITEM.search(text)
    offset, gap = (len(item[2]) - len(item[1]), len(item[3])) if item else (2, 1)
    return {
        "mapping": len(nested[2]) - len(nested[1]) if nested else 2,
        "sequence": offset + gap + 1,
        "offset": offset,
    }


def _id(entry: Any) -> Any:
    return entry.get("id") if isinstance(entry, dict) else None
