"""Tool entries as text: cut out of a definition file, spliced into a ``nex.yaml``.

``nexus-tools register`` edits a file a person wrote. A YAML library that loads and dumps the
document re-lays it out (a flow mapping spread over two lines becomes one, a comment inside it
is dropped), so the edit is done on the text instead: the entry's lines are copied from the
definition file as they were written (comments, flow mappings, long lines), moved to the
target's indentation, and put in place of the entry with the same ``id`` or after the last
entry. Every other byte of the target stays as it was.

The node positions come from PyYAML's composer. :func:`splice_entries` answers ``None`` for a
layout it does not edit as text (``tools:`` written as a flow list, a flow top level); the
caller then rewrites the document with a round-trip dumper.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["EntryText", "entry_nodes", "entry_text", "splice_entries"]


@dataclass(frozen=True)
class EntryText:
    """One entry as its file has it: ``text`` starts at the entry's first character (its
    first key, or ``{``); its later lines keep the indentation they had, and ``column`` is
    where the entry started, so the lines can be moved as a block."""

    text: str
    column: int


def entry_nodes(document: str) -> list[Node]:
    """The nodes of the entries of a definition file (one entry, a list of them, or a
    mapping with a ``tools:`` list), in the order :func:`yaml.safe_load` gives them."""
    root = yaml.compose(document, Loader=yaml.SafeLoader)
    if isinstance(root, SequenceNode):
        return list(root.value)
    if isinstance(root, MappingNode):
        tools = _value_of(root, "tools")
        if tools is None:
            return [root]
        return list(tools.value) if isinstance(tools, SequenceNode) else []
    return []


def entry_text(document: str, node: Node) -> EntryText:
    """The text of ``node`` in ``document``, up to the end of its last line (so a comment
    after its last value comes along)."""
    end = _line_end(document, _content_end(node))
    return EntryText(document[node.start_mark.index : end], node.start_mark.column)


def splice_entries(
    original: str, entries: Sequence[tuple[str, EntryText]], indentation: dict[str, int]
) -> tuple[str, dict[str, str]] | None:
    """``original`` with each ``(id, text)`` in place of the entry of that ``id`` under
    ``tools:``, or after the last one (``tools:`` is added at the end when missing):
    ``(text, {id: "added" | "replaced"})``. ``indentation`` (``offset``, ``sequence``, as
    for a round-trip dumper) lays out a new ``tools:`` list. ``None`` when ``tools:`` is a
    flow list with entries, or the top level is not a block mapping."""
    root = yaml.compose(original, Loader=yaml.SafeLoader) if original.strip() else None
    if root is not None and not (isinstance(root, MappingNode) and not root.flow_style):
        return None
    tools = _value_of(root, "tools") if root is not None else None
    done: dict[str, str] = {}
    edits: list[tuple[int, int, str]] = []  # (start, end, new text), applied back to front
    if isinstance(tools, SequenceNode) and not tools.flow_style:
        dash = tools.start_mark.column
        first = tools.value[0]
        same_line = first.start_mark.line == tools.start_mark.line
        gap = first.start_mark.column - dash - 1 if same_line else _gap(indentation)
        appended: list[str] = []
        for name, text in entries:
            item = next((n for n in tools.value if _id_of(n) == name), None)
            if item is None:
                appended.append(_item(text, dash, gap))
                done[name] = "added"
            else:
                start, end = item.start_mark.index, _line_end(original, _content_end(item))
                edits.append((start, end, _moved(text, item.start_mark.column)))
                done[name] = "replaced"
        if appended:
            at = _line_end(original, _content_end(tools.value[-1]))
            edits.append((at, at, "".join("\n" + item for item in appended)))
    elif tools is None or _is_empty(tools):
        dash, gap = indentation["offset"], _gap(indentation)
        block = "".join("\n" + _item(text, dash, gap) for _, text in entries)
        done = {name: "added" for name, _ in entries}
        if tools is not None:  # `tools:` with nothing after it, or `tools: []`
            at = _line_end(original, tools.end_mark.index)
            edits.append((at, at, block))
            start, end = tools.start_mark.index, tools.end_mark.index
            edits.append((start - (original[start - 1 : start] == " "), end, ""))
        else:
            key = " " * (root.start_mark.column if root is not None else 0) + "tools:"
            at = len(original)
            lead = "" if not original or original.endswith("\n") else "\n"
            edits.append((at, at, lead + key + block + "\n"))
    else:
        return None
    edited = original
    for start, end, new in sorted(edits, key=lambda edit: edit[0], reverse=True):
        edited = edited[:start] + new + edited[end:]
    return edited, done


def _value_of(mapping: Any, key: str) -> Node | None:
    if not isinstance(mapping, MappingNode):
        return None
    return next((v for k, v in mapping.value if isinstance(k, ScalarNode) and k.value == key), None)


def _id_of(node: Node) -> str | None:
    value = _value_of(node, "id")
    return str(value.value) if isinstance(value, ScalarNode) else None


def _is_empty(node: Node) -> bool:
    """``tools:`` with no value, or ``tools: []``."""
    if isinstance(node, SequenceNode):
        return not node.value
    return isinstance(node, ScalarNode) and node.tag.endswith(":null") and not node.value


def _content_end(node: Node) -> int:
    """Where ``node``'s own text ends. A block collection's end mark is where the next
    token starts (past comment and blank lines that are not its own): take its last value's."""
    if isinstance(node, MappingNode) and not node.flow_style and node.value:
        return _content_end(node.value[-1][1])
    if isinstance(node, SequenceNode) and not node.flow_style and node.value:
        return _content_end(node.value[-1])
    return int(node.end_mark.index)


def _line_end(text: str, index: int) -> int:
    """The end of the line ``index`` is on (before its line break); an index just past a
    line break (a block scalar ends there) belongs to the line it ended."""
    if index > 0 and text[index - 1] == "\n":
        return index - 1
    found = text.find("\n", index)
    return len(text) if found < 0 else found


def _gap(indentation: dict[str, int]) -> int:
    return indentation["sequence"] - indentation["offset"] - 1


def _item(entry: EntryText, dash: int, gap: int) -> str:
    """``entry`` as a new list item: its dash at column ``dash``, then ``gap`` spaces."""
    return " " * dash + "-" + " " * gap + _moved(entry, dash + 1 + gap)


def _moved(entry: EntryText, column: int) -> str:
    """``entry``'s lines moved as a block so that it starts at ``column``."""
    shift = column - entry.column
    lines = entry.text.split("\n")
    moved = [lines[0]]
    for line in lines[1:]:
        if not line.strip():
            moved.append("")
        elif shift >= 0:
            moved.append(" " * shift + line)
        else:
            lead = len(line) - len(line.lstrip(" "))
            moved.append(line[min(lead, -shift) :])
    return "\n".join(moved)
