"""Read a tool's description and per-parameter help from its docstring.

Google (``Args:``), NumPy (``Parameters`` + dashes) and Sphinx (``:param x:``) styles are
understood. The description is the docstring's prose: every paragraph before its first
section (``Args:``, ``Parameters`` + dashes, ``:param x:``, ``Returns:``, ``Raises:``,
``Examples:``...), dedented, each line and paragraph break as written (a ``Note:`` or
``Warning:`` section before the first such section is prose too). Parameter descriptions are
joined onto one line each.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_GOOGLE_ARGS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
_GOOGLE_SECTIONS = _GOOGLE_ARGS | {
    "returns",
    "return",
    "yields",
    "raises",
    "examples",
    "example",
    "note",
    "notes",
    "attributes",
    "see also",
    "references",
    "warning",
    "warnings",
    "todo",
}
#: Google sections that are prose for the reader, kept in the description
_PROSE_SECTIONS = {"note", "notes", "warning", "warnings"}
_SPHINX_PARAM = re.compile(
    r"^:(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?(\w+)\s*:(.*)$"
)
_SPHINX_FIELD = re.compile(r"^:\w+")
_GOOGLE_ITEM = re.compile(r"^(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*:(.*)$")
_NUMPY_ITEM = re.compile(r"^(\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$")


@dataclass(frozen=True)
class ParsedDocstring:
    description: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str = ""


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Parse ``doc`` (any of the three styles; a plain docstring is fine too)."""
    if not doc:
        return ParsedDocstring()
    lines = inspect.cleandoc(doc).splitlines()
    description = _prose(lines)
    params: dict[str, str] = {}
    returns = ""
    for parser in (_parse_sphinx, _parse_google, _parse_numpy):
        found, ret = parser(lines)
        if found or ret:
            params, returns = found, ret
            break
    return ParsedDocstring(description=description, params=params, returns=returns)


def _is_section_start(lines: list[str], i: int) -> bool:
    line = lines[i].strip()
    if line.rstrip(":").lower() in _GOOGLE_SECTIONS and line.endswith(":"):
        return True
    if _SPHINX_FIELD.match(line):
        return True
    nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
    return bool(line) and bool(nxt) and set(nxt) <= {"-"} and len(nxt) >= 3


def _prose(lines: list[str]) -> str:
    """The lines before the first section, blank runs squeezed to one paragraph break."""
    out: list[str] = []
    for i, line in enumerate(lines):
        header = line.strip().rstrip(":").lower()
        if _is_section_start(lines, i) and not (
            header in _PROSE_SECTIONS and line.strip().endswith(":")
        ):
            break
        if line.strip() or (out and out[-1]):
            out.append(line.rstrip())
    return "\n".join(out).strip("\n")


def _join(parts: list[str]) -> str:
    return " ".join(p.strip() for p in parts if p.strip())


def _parse_sphinx(lines: list[str]) -> tuple[dict[str, str], str]:
    params: dict[str, list[str]] = {}
    returns: list[str] = []
    current: list[str] | None = None
    for raw in lines:
        line = raw.strip()
        m = _SPHINX_PARAM.match(line)
        if m:
            current = params.setdefault(m.group(1), [])
            current.append(m.group(2))
        elif line.startswith((":returns:", ":return:")):
            current = returns
            current.append(line.split(":", 2)[2])
        elif _SPHINX_FIELD.match(line) or not line:
            current = None
        elif current is not None and raw[:1].isspace():
            current.append(line)
    return {k: _join(v) for k, v in params.items()}, _join(returns)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parse_google(lines: list[str]) -> tuple[dict[str, str], str]:
    params: dict[str, list[str]] = {}
    returns: list[str] = []
    section: str | None = None
    item_indent = -1
    current: list[str] | None = None
    for raw in lines:
        line = raw.strip()
        header = line.rstrip(":").lower()
        if line.endswith(":") and header in _GOOGLE_SECTIONS and _indent(raw) == 0:
            section, item_indent, current = header, -1, None
            if section in ("returns", "return", "yields"):
                current = returns
            continue
        if section is None or not line:
            continue
        if section in _GOOGLE_ARGS:
            m = _GOOGLE_ITEM.match(line)
            if m and (item_indent < 0 or _indent(raw) <= item_indent):
                item_indent = _indent(raw)
                current = params.setdefault(m.group(1).lstrip("*"), [])
                current.append(m.group(3))
            elif current is not None:
                current.append(line)
        elif current is returns:
            returns.append(line)
    return {k: _join(v) for k, v in params.items()}, _join(returns)


def _parse_numpy(lines: list[str]) -> tuple[dict[str, str], str]:
    params: dict[str, list[str]] = {}
    returns: list[str] = []
    section: str | None = None
    current: list[str] | None = None
    i = 0
    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line and nxt and set(nxt) <= {"-"} and len(nxt) >= 3:
            section = line.lower()
            current = returns if section in ("returns", "yields") else None
            i += 2
            continue
        if section in ("parameters", "other parameters", "keyword arguments") and line:
            if _indent(raw) == 0:
                m = _NUMPY_ITEM.match(line)
                if m:
                    names = [n.strip().lstrip("*") for n in line.split(":", 1)[0].split(",")]
                    current = []
                    for name in names:
                        params[name] = current
            elif current is not None:
                current.append(line)
        elif section in ("returns", "yields") and line and _indent(raw) > 0:
            returns.append(line)
        i += 1
    return {k: _join(v) for k, v in params.items()}, _join(returns)
