"""Plain-Python renderers for tools and results: HTML for notebooks, text for terminals.

The core's objects carry no display code: :mod:`.display` registers these functions with
IPython's formatters, and the faces (magics, widgets, the CLI) call them directly.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .tables import left_aligned

if TYPE_CHECKING:
    from ..core.registry.state import ToolEntry
    from ..core.tools.tool import Tool

__all__ = [
    "add_tools_hint",
    "entries_html",
    "entries_text",
    "entry_html",
    "entry_text",
    "hits_html",
    "hits_text",
    "param_rows",
    "registry_html",
    "registry_text",
    "stale_badge",
    "stale_html",
    "tool_badges",
    "tool_html",
    "tool_text",
]

_PERMISSION_COLORS = {
    "read_only": "#2e7d32",
    "workspace_write": "#ef6c00",
    "danger_full_access": "#c62828",
}
_STALE_COLOR = "#e65100"
_FAILED_COLOR = "#b71c1c"  # a tool file that failed to load: its tools are missing


def _type_label(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(_type_label(s) for s in schema[key])
    kind = schema.get("type", "any")
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array[{_type_label(schema['items'])}]"
    return kind if isinstance(kind, str) else " | ".join(kind)


def param_rows(tool: Tool) -> list[tuple[str, str, bool, str, str]]:
    """(name, type, required, default, description) for each parameter."""
    schema = tool.spec.input_schema
    required = set(schema.get("required", ()))
    rows = []
    for name, sub in (schema.get("properties") or {}).items():
        default = json.dumps(sub["default"]) if "default" in sub else ""
        rows.append((name, _type_label(sub), name in required, default, sub.get("description", "")))
    return rows


def _badge(text: str, color: str) -> str:
    return (
        f'<span style="background:{color};color:#fff;border-radius:3px;padding:0 5px;'
        f'margin-right:4px;font-size:85%;white-space:nowrap;display:inline-block">'
        f"{html.escape(text)}</span>"
    )


def tool_badges(
    tool: Tool,
    status: str = "ok",
    *,
    categories: bool = True,
    ok_badge: bool = True,
    stale: str | None = None,
) -> str:
    """HTML badges: source, permission, status (``ok`` only with ``ok_badge``) and
    categories. ``stale`` is the note of a tool whose file failed to reload: its status
    then reads "stale" (the note as its tooltip), never "ok"."""
    spec = tool.spec
    badges = _badge(spec.source or spec.source_kind, "#546e7a")
    if spec.toolset and spec.toolset != spec.source:
        badges += _badge(f"toolset {spec.toolset}", "#00796b")
    badges += _badge(spec.permission, _PERMISSION_COLORS.get(spec.permission, "#555"))
    if status != "ok":
        badges += _badge(status, "#b71c1c")
    if stale:
        badges += stale_badge(stale)
    elif status == "ok" and ok_badge:
        badges += _badge(status, "#2e7d32")
    if categories:
        for cat in spec.categories:
            badges += _badge(cat, "#5c6bc0")
    return badges


def tool_html(
    tool: Tool,
    status: str = "ok",
    reason: str | None = None,
    *,
    stale: str | None = None,
    version: str | None = None,
) -> str:
    """The tool's card; ``version``: the id to show (``#3 97c1a6b626`` for a tool file's
    saved version), ``v<spec.version>`` when not given."""
    spec = tool.spec
    esc = html.escape
    badges = tool_badges(tool, status, stale=stale)
    rows = "".join(
        f"<tr><td><code>{esc(n)}</code>{'*' if req else ''}</td><td><code>{esc(t)}</code></td>"
        f"<td>{f'<code>{esc(d)}</code>' if d else ''}</td><td>{esc(desc)}</td></tr>"
        for n, t, req, d, desc in param_rows(tool)
    )
    table = (
        left_aligned(
            "<table><thead><tr><th>parameter</th><th>type</th><th>default</th>"
            f"<th>description</th></tr></thead><tbody>{rows}</tbody></table>"
        )
        if rows
        else "<p><i>no parameters</i></p>"
    )
    why = f"<p style='color:#b71c1c'>{esc(reason)}</p>" if reason else ""
    return (
        f"<div class='nexus-tool'><b style='font-size:110%'>{esc(spec.name)}</b> {badges}"
        f"<span style='color:#888'>{esc(version or 'v' + spec.version)}</span>"
        f"<p>{esc(spec.description) or '<i>no description</i>'}</p>{why}{table}</div>"
    )


def tool_text(tool: Tool, status: str = "ok", reason: str | None = None) -> str:
    spec = tool.spec
    head = f"{spec.name}  [{spec.source or spec.source_kind}, {spec.permission}"
    head += f", {status}]" if status != "ok" else "]"
    lines = [head, f"  {spec.description}" if spec.description else "  (no description)"]
    if reason:
        lines.append(f"  ! {reason}")
    for name, kind, req, default, desc in param_rows(tool):
        extra = f" = {default}" if default else ""
        mark = "" if req else "?"
        lines.append(f"  - {name}{mark}: {kind}{extra}" + (f"  # {desc}" if desc else ""))
    return "\n".join(lines)


# -- entries, lists, the registry ------------------------------------------------------------


def stale_badge(note: str) -> str:
    """The "stale" badge alone, its note as the tooltip (rows with no room for the note)."""
    return f"<span title='{html.escape(note)}'>{_badge('stale', _STALE_COLOR)}</span>"


def stale_html(note: str, *, badge: bool = True) -> str:
    """A stale tool's badge and note (its file failed to reload; the last good version runs);
    the note alone with ``badge=False`` (the status column already says "stale")."""
    shown = html.escape(note.removeprefix("stale: "))  # the badge already says it
    text = f"<span style='color:{_STALE_COLOR}'>{shown}</span>"
    return f"{_badge('stale', _STALE_COLOR)}{text}" if badge else text


def entry_html(entry: ToolEntry, *, stale: str | None = None, version: str | None = None) -> str:
    """One entry: the tool card plus where its code lives and what it shadows; ``stale`` is
    the note of a tool whose file failed to reload, ``version`` the id to show."""
    esc = html.escape
    out = tool_html(entry.tool, entry.status, entry.reason, stale=stale, version=version)
    if stale:
        out += f"<p>{stale_html(stale, badge=False)}</p>"
    spec = entry.tool.spec
    extra = []
    if spec.origin:
        extra.append(f"origin <code>{esc(spec.origin)}</code>")
    if spec.capabilities:
        extra.append(
            "capabilities " + ", ".join(f"<code>{esc(c)}</code>" for c in spec.capabilities)
        )
    if spec.requires_credentials:
        extra.append(
            "credentials " + ", ".join(f"<code>{esc(c)}</code>" for c in spec.requires_credentials)
        )
    for other in entry.shadowed:
        extra.append(f"shadows <code>{esc(other.spec.source)}</code> v{esc(other.spec.version)}")
    if extra:
        out += "<p style='color:#666'>" + " · ".join(extra) + "</p>"
    return out


def entry_text(entry: ToolEntry, *, stale: str | None = None, version: str | None = None) -> str:
    lines = [tool_text(entry.tool, entry.status, entry.reason)]
    if version:
        lines.append(f"  version: {version}")
    if stale:
        lines.append(f"  ! {stale}")
    spec = entry.tool.spec
    if spec.origin:
        lines.append(f"  origin: {spec.origin}")
    if spec.capabilities:
        lines.append("  capabilities: " + ", ".join(spec.capabilities))
    if spec.requires_credentials:
        lines.append("  credentials: " + ", ".join(spec.requires_credentials))
    lines += [f"  shadows: {t.spec.source} v{t.spec.version}" for t in entry.shadowed]
    return "\n".join(lines)


def _failed_html(failed: Sequence[str]) -> str:
    """The notes of tool files that failed to load, under a list."""
    return "".join(
        f"<div style='color:{_FAILED_COLOR}; text-align:left'>{html.escape(note)}</div>"
        for note in failed
    )


def entries_html(
    entries: list[ToolEntry],
    *,
    title: str | None = None,
    stale: Mapping[str, str] | None = None,
    failed: Sequence[str] = (),
    hint: str = "",
) -> str:
    """A table of entries: name, badges, summary; ``stale`` maps the names of tools whose
    file failed to reload to their note; ``failed`` notes tool files that failed to load;
    ``hint`` (HTML) says what to do when there are no entries."""
    stale = stale or {}
    esc = html.escape
    head = f"<b>{esc(title)}</b> " if title else ""
    head += f"<span style='color:#888'>{len(entries)} tool{'s' if len(entries) != 1 else ''}</span>"
    if not entries:
        shown = f"<p class='nexus-empty-hint'>{hint}</p>" if hint else "<p><i>no tools</i></p>"
        return f"<div class='nexus-tools'>{head}{shown}{_failed_html(failed)}</div>"
    rows = "".join(
        f"<tr><td><code><b>{esc(e.name)}</b></code></td>"
        f"<td>{tool_badges(e.tool, e.status, stale=stale.get(e.name))}</td>"
        f"<td style='text-align:left'>{esc(e.spec.summary)}"
        + (f"<br>{stale_html(stale[e.name], badge=False)}" if e.name in stale else "")
        + "</td></tr>"
        for e in entries
    )
    table = left_aligned(
        "<table><thead><tr><th>tool</th><th>source · permission · status</th>"
        f"<th>description</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    return f"<div class='nexus-tools'>{head}{table}{_failed_html(failed)}</div>"


def entries_text(
    entries: list[ToolEntry],
    *,
    title: str | None = None,
    stale: Mapping[str, str] | None = None,
    failed: Sequence[str] = (),
    hint: str = "",
) -> str:
    stale = stale or {}
    notes = [f"! {note}" for note in failed]
    if not entries:
        return "\n".join(
            [f"{title + ': ' if title else ''}no tools", *notes, *([hint] * bool(hint))]
        )
    width = max(len(e.name) for e in entries)
    lines = [f"{title}: {len(entries)} tools"] if title else []
    for e in entries:
        status = "" if e.status == "ok" else f", {e.status}"
        status += ", stale" if e.name in stale else ""
        where = f"[{e.spec.source or e.spec.source_kind}, {e.spec.permission}{status}]"
        lines.append(f"{e.name:<{width}}  {where}  {e.spec.summary}")
        if e.name in stale:
            lines.append(f"{'':<{width}}  ! {stale[e.name]}")
    return "\n".join(lines + notes)


def add_tools_hint(folders: Sequence[str] = (), *, as_html: bool = False) -> str:
    """What to do about an empty registry: the ways to add a tool (``folders``: the tools
    folders this registry watches)."""

    def code(text: str) -> str:
        return f"<code>{html.escape(text)}</code>" if as_html else text

    where = (
        " or ".join(code(f"{f.rstrip('/')}/") for f in folders)
        if folders
        else f"a folder you watch ({code('%tool watch DIR')})"
    )
    return (
        f"No tools yet. Add one: put {code('@tool')} (from {code('nexus_jupyter')}) on a "
        f"function and run its cell, run a cell of functions under {code('%%tool')}, or save "
        f"a tool file in {where}."
    )


def unserved_text(unserved: Sequence[str]) -> str:
    """ "no installed tool works with Trello or Zendesk" (``unserved`` must not be empty)."""
    names = list(unserved)
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"no installed tool works with {listed}"


def no_hits_text(query: str, unserved: Sequence[str] = ()) -> str:
    """Why a search found nothing: ``unserved`` names services no installed tool works with."""
    if unserved:
        return f"No tool matches {query!r}: {unserved_text(unserved)}."
    return f"No tool matches {query!r}."


def scored_down_text(unserved: Sequence[str]) -> str:
    """Why hits for a query naming an unserved service are scored down."""
    text = unserved_text(unserved)
    return f"Note: {text}; these tools fit the rest of the request, scored down for that."


def hits_html(
    query: str, hits: list[Any], unserved: Sequence[str] = (), searched_for: str = ""
) -> str:
    """Search hits (``SearchHit``: name, score, spec, matched) as a ranked table;
    ``searched_for`` is the query as search read it, shown when it differs."""
    esc = html.escape
    read_as = (
        f" (searched for <code>{esc(searched_for)}</code>)"
        if searched_for and searched_for != query
        else ""
    )
    if not hits:
        why = f": {esc(unserved_text(unserved))}" if unserved else ""
        return f"<p>No tool matches <code>{esc(query)}</code>{read_as}{why}.</p>"
    note = f"<p class='nexus-unserved'>{esc(scored_down_text(unserved))}</p>" if unserved else ""
    rows = "".join(
        f"<tr><td>{i}</td><td><code><b>{esc(h.name)}</b></code></td><td>{h.score:.2f}</td>"
        f"<td style='text-align:left'>{esc(h.spec.summary)}</td>"
        f"<td style='color:#888'>{esc(', '.join(h.matched))}</td></tr>"
        for i, h in enumerate(hits, 1)
    )
    table = left_aligned(
        "<table><thead><tr><th>#</th><th>tool</th><th>score</th><th>description</th>"
        f"<th>matched</th></tr></thead><tbody>{rows}</tbody></table>"
    )
    return (
        f"<div class='nexus-search'><b>{len(hits)}</b> match(es) for <code>{esc(query)}"
        f"</code>{read_as}{table}{note}</div>"
    )


def hits_text(
    query: str, hits: list[Any], unserved: Sequence[str] = (), searched_for: str = ""
) -> str:
    read_as = [f"searched for: {searched_for}"] if searched_for and searched_for != query else []
    if not hits:
        return "\n".join([*read_as, no_hits_text(query, unserved)])
    width = max(len(h.name) for h in hits)
    lines = [
        f"{i:>2}. {h.name:<{width}}  {h.score:6.2f}  {h.spec.summary}"
        for i, h in enumerate(hits, 1)
    ]
    return "\n".join([*read_as, *lines, *([scored_down_text(unserved)] if unserved else [])])


def registry_html(entries: list[ToolEntry], sources: list[Any]) -> str:
    """The registry: its sources (with errors) and its tools."""
    esc = html.escape
    items = []
    for st in sources:
        status = _badge("error", "#b71c1c") + esc(st.error) if st.error else ""
        items.append(f"<li><code>{esc(st.name)}</code> ({len(st.tools)} tools) {status}</li>")
    return (
        f"<div class='nexus-registry'><b>Registry</b><ul>{''.join(items)}</ul>"
        f"{entries_html(entries)}</div>"
    )


def registry_text(entries: list[ToolEntry], sources: list[Any]) -> str:
    lines = [f"Registry: {len(entries)} tools"]
    for st in sources:
        error = f"  ! {st.error}" if st.error else ""
        lines.append(f"  source {st.name} ({len(st.tools)} tools){error}")
    return "\n".join(lines) + "\n" + entries_text(entries)
