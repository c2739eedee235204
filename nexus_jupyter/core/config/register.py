"""``nexus-tools register FILE``: add tool definitions to a level's ``nex.yaml``.

A definition file holds one entry (a mapping with ``id``), a list of entries, or a mapping
with a ``tools:`` list. Every entry is validated first (errors name the file, the line
and the key); then the target ``nex.yaml`` is edited as text (:mod:`.entry_text`): an entry
whose ``id`` is already there is replaced in place, new ones are appended, each with the
lines, comments and flow mappings of the definition file, and every other byte of the target
stays as it was, line ends included (a CRLF file gets its new entries in CRLF). A ``tools:``
written as a flow list (``tools: [...]``) is rewritten round-trip (``ruamel.yaml``) instead,
which keeps the file's comments outside that list.
"""

from __future__ import annotations

import difflib
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import ConfigError
from .entry_text import EntryText, entry_nodes, entry_text, splice_entries
from .manifest import ToolDeclaration

__all__ = ["Definition", "read_definitions", "register_definitions"]


@dataclass(frozen=True)
class Definition:
    """One validated tool definition: its mapping and its text as the file has it."""

    entry: dict[str, Any]
    text: EntryText

    @property
    def id(self) -> str:
        return str(self.entry["id"])


def read_definitions(path: Path) -> list[Definition]:
    """The validated entries of definition file ``path``."""
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
    nodes = entry_nodes(text)
    return [
        Definition(dict(entry), entry_text(text, node))
        for entry, node in zip(entries, nodes, strict=True)
    ]


def register_definitions(definitions: list[Definition], target: Path) -> dict[str, str]:
    """Add or replace ``definitions`` (by ``id``) in ``target``, leaving the rest of the
    file as it is; ``{id: "added" | "replaced"}``. The result is validated before writing."""
    from .loading import _validate

    raw = _read_raw(target)  # line ends as the file has them (CRLF stays CRLF)
    original = raw.replace("\r\n", "\n")
    latest = {d.id: d for d in definitions}  # a file naming an id twice: the last one counts
    try:
        current = yaml.safe_load(original) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{target}: invalid YAML ({exc}); fix it, then register again.") from None
    if not isinstance(current, dict):
        raise ConfigError(f"{target}, line 1: the top level must be a mapping of settings.")
    if not isinstance(current.get("tools") or [], list):
        kind = type(current["tools"]).__name__
        raise ConfigError(f"{target}: `tools` must be a list of tool entries, got {kind}.")
    spliced = splice_entries(
        original, [(name, d.text) for name, d in latest.items()], _indentation(original)
    )
    text, done = ("", {}) if spliced is None else (_line_ends_of(raw, spliced[0]), spliced[1])
    if spliced is None or not _loads_as(text, current, latest):
        # a layout the text edit does not handle, or a result that reads differently
        text, done = _rewritten(original, list(latest.values()), target)
        text = _line_ends_of(raw, text)
    _validate(yaml.safe_load(text) or {}, None)
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8", newline="") as out:  # the line ends of `text`
        out.write(text)
    return done


def _read_raw(path: Path) -> str:
    if not path.is_file():
        return ""
    with path.open(encoding="utf-8", newline="") as file:
        return file.read()


def _line_ends_of(raw: str, text: str) -> str:
    """``text`` (``raw`` edited with its line ends read as ``\\n``) with the line ends of
    ``raw``: a line kept from it keeps its own, an added line takes those of the file (of
    its first line; ``\\n`` for a new file)."""
    if "\r\n" not in raw:
        return text
    old = raw.split("\n")  # the last piece is what follows the final line end
    kept = [line.removesuffix("\r") for line in old[:-1]] + old[-1:]
    ends = ["\r\n" if line.endswith("\r") else "\n" for line in old[:-1]]
    usual = ends[0]
    new = text.split("\n")
    chosen = [usual] * (len(new) - 1)
    matcher = difflib.SequenceMatcher(None, kept, new, autojunk=False)
    for tag, i1, _, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for j in range(j1, min(j2, len(chosen))):
                i = i1 + j - j1
                chosen[j] = ends[i] if i < len(ends) else usual
    return "".join(line + end for line, end in zip(new, chosen, strict=False)) + new[-1]


def _loads_as(text: str, current: dict[str, Any], definitions: dict[str, Definition]) -> bool:
    """Whether ``text`` reads as ``current`` with ``definitions`` put in by ``id``."""
    expected = dict(current)
    tools = list(expected.get("tools") or [])
    for name, definition in definitions.items():
        where = next((i for i, t in enumerate(tools) if _id(t) == name), None)
        if where is None:
            tools.append(definition.entry)
        else:
            tools[where] = definition.entry
    expected["tools"] = tools
    try:
        return bool(yaml.safe_load(text) == expected)
    except yaml.YAMLError:
        return False


def _rewritten(
    original: str, definitions: list[Definition], target: Path
) -> tuple[str, dict[str, str]]:
    """``original`` loaded and dumped round-trip with ``definitions`` put in: its comments
    and key order stay; flow mappings may be re-laid out."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

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
        where = next((i for i, t in enumerate(tools) if _id(t) == definition.id), None)
        if where is None:
            tools.append(definition.entry)
            done[definition.id] = "added"
        else:
            tools[where] = definition.entry
            done[definition.id] = "replaced"
    buffer = io.StringIO()
    rt.dump(document, buffer)
    return buffer.getvalue(), done


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
