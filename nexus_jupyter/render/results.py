"""Plain-Python renderers for call results and call history (HTML and text).

The JSON tree is nested ``<details>`` elements: collapsible in any notebook front end without
JavaScript or widgets, and still readable as text in a terminal.
"""

from __future__ import annotations

import html
import json
import math
import re
import time
from collections.abc import Iterable
from typing import Any

from .tables import left_aligned

__all__ = [
    "call_command",
    "content_text",
    "error_html",
    "history_html",
    "history_text",
    "json_tree_html",
    "notes_html",
    "result_html",
    "result_text",
    "text_html",
]

# Text as text: monospace, real line breaks, scrollable past a screenful, selectable to copy.
_TEXT_STYLE = (
    "font-family:var(--jp-code-font-family, monospace);font-size:var(--jp-code-font-size, 13px);"
    "white-space:pre;overflow:auto;max-height:24em;margin:2px 0;padding:4px 6px;"
    "background:var(--jp-layout-color2, #f5f5f5);border-radius:2px;user-select:text"
)


def text_html(text: str) -> str:
    """``text`` in a ``<pre class="nexus-text">``: monospace, scrollable, copyable."""
    return f"<pre class='nexus-text' style='{_TEXT_STYLE}'>{html.escape(text)}</pre>"


_OPEN_DEPTH = 2  # levels unfolded at first: big answers stay readable
_MAX_ITEMS = 200


def _scalar_html(value: Any) -> str:
    color = {str: "#a31515", bool: "#0000ff", type(None): "#0000ff"}.get(type(value), "#098658")
    return f"<span style='color:{color}'>{html.escape(json.dumps(value, default=str))}</span>"


def json_tree_html(value: Any, *, key: str | None = None, depth: int = 0) -> str:
    """``value`` (JSON-like) as a collapsible tree of ``<details>`` elements."""
    label = f"<b>{html.escape(str(key))}</b>: " if key is not None else ""
    if isinstance(value, dict):
        items = list(value.items())
        kind = f"{{…}} {len(items)} key{'s' if len(items) != 1 else ''}"
    elif isinstance(value, list | tuple):
        items = list(enumerate(value))
        kind = f"[…] {len(items)} item{'s' if len(items) != 1 else ''}"
    elif isinstance(value, str) and "\n" in value.rstrip("\n"):
        # A multi-line string (a command's stdout, a file) reads as text, not as "a\nb".
        return f"<div style='margin-left:1em'>{label}{text_html(value)}</div>"
    else:
        return f"<div style='margin-left:1em'>{label}{_scalar_html(value)}</div>"
    if not items:
        return (
            f"<div style='margin-left:1em'>{label}{'{}' if isinstance(value, dict) else '[]'}</div>"
        )
    inner = "".join(json_tree_html(v, key=str(k), depth=depth + 1) for k, v in items[:_MAX_ITEMS])
    if len(items) > _MAX_ITEMS:
        inner += f"<div style='margin-left:1em'>… {len(items) - _MAX_ITEMS} more</div>"
    opened = " open" if depth < _OPEN_DEPTH else ""
    return (
        f"<details{opened} style='margin-left:1em'><summary>{label}"
        f"<span style='color:#888'>{kind}</span></summary>{inner}</details>"
    )


_BARE = re.compile(r"^[\w./:@+-]+$")


def _bare_value(value: Any) -> str | None:
    """``value`` as it can stand after ``key=`` unquoted, or None when it needs JSON."""
    if isinstance(value, bool | int) or (isinstance(value, float) and math.isfinite(value)):
        return json.dumps(value)
    if isinstance(value, str) and _BARE.match(value):
        try:
            json.loads(value)
        except ValueError:
            return value  # stays a string when the magic reads it back
    return None


def call_command(name: str, arguments: dict[str, Any]) -> str:
    """The ``%tool call`` line that makes this call: ``key=value`` pairs when every value
    reads back as itself, else one JSON object (always one line).

    >>> call_command("add", {"a": 1, "b": 2})
    '%tool call add a=1 b=2'
    >>> call_command("bash", {"command": "echo one\\necho two"})
    '%tool call bash {"command": "echo one\\\\necho two"}'
    """
    if not arguments:
        return f"%tool call {name}"
    bare = {k: _bare_value(v) for k, v in arguments.items()}
    if all(v is not None for v in bare.values()):
        return f"%tool call {name} " + " ".join(f"{k}={v}" for k, v in bare.items())
    return f"%tool call {name} {json.dumps(arguments, ensure_ascii=False, default=str)}"


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def notes_html(notes: Iterable[str]) -> str:
    """Warnings about a call (its tool is stale ...), one line each."""
    return "".join(
        f"<div class='nexus-note' style='color:#e65100'>⚠ {html.escape(n)}</div>" for n in notes
    )


def error_html(error_type: str | None, error: str | None, trace: str | None) -> str:
    """A failure: the error line, and the traceback of the tool's own code under it."""
    esc = html.escape
    out = (
        "<pre style='color:#b71c1c;white-space:pre-wrap'>"
        f"{esc(error_type or 'Error')}: {esc(error or '')}</pre>"
    )
    if trace:
        out += (
            "<details open class='nexus-traceback'><summary>traceback (the tool's code)</summary>"
            f"<pre style='white-space:pre-wrap;margin:2px 0'>{esc(trace)}</pre></details>"
        )
    return out


def result_html(result: Any) -> str:
    """A :class:`~nexus_jupyter.core.tools.result.ToolResult`: error, JSON tree, text, images."""
    esc = html.escape
    head = f"<b>{esc(result.tool)}</b> <span style='color:#888'>{_duration(result.duration)}</span>"
    summary = getattr(result, "summary", "")
    if summary:
        head += f"<div class='nexus-call-summary' style='color:#555'>{esc(summary)}</div>"
    head += notes_html(result.notes)
    if result.is_error:
        body = error_html(result.error_type, result.error, result.traceback)
        return f"<div class='nexus-result'>{head}{body}</div>"
    parts = []
    for block in result.content:
        if block.get("type") == "image":
            parts.append(
                f"<img src='data:{esc(block.get('mimeType', 'image/png'))};base64,"
                f"{block.get('data', '')}' style='max-width:100%'/>"
            )
    structured = result.structured
    if isinstance(structured, dict | list):
        parts.append(json_tree_html(structured))
    elif structured is not None:
        parts.append(text_html(str(structured)))
    elif result.text:
        parts.append(text_html(result.text))
    return f"<div class='nexus-result'>{head}{''.join(parts)}</div>"


def _size(data: Any) -> str:
    """The decoded size of base64 ``data``, for a one-line description."""
    size = len(data or "") * 3 // 4
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} KiB"


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind}: {block.get('mimeType', 'unknown type')}, {_size(block.get('data'))}]"
    if kind == "resource":
        resource = block.get("resource") or {}
        head = f"[resource: {resource.get('uri', '?')}"
        if resource.get("mimeType"):
            head += f" ({resource['mimeType']})"
        if isinstance(resource.get("text"), str):
            return f"{head}]\n{resource['text']}"
        return f"{head}, {_size(resource.get('blob'))}]"
    if kind == "resource_link":
        return f"[resource link: {block.get('uri', '?')}]"
    return f"[{kind or 'unknown'} content]"


def content_text(blocks: Iterable[dict[str, Any]]) -> str:
    """MCP content blocks as terminal text: text as it is, one line describing each image,
    audio clip or resource (binary data is never printed)."""
    return "\n".join(_block_text(b) for b in blocks)


def result_text(result: Any) -> str:
    head = f"{result.tool} ({_duration(result.duration)})"
    if getattr(result, "summary", ""):
        head += f"\n  {result.summary}"
    head += "".join(f"\nWarning: {n}" for n in result.notes)
    if result.is_error:
        trace = f"\n{result.traceback}" if result.traceback else ""
        return f"{head}\n  {result.error_type or 'Error'}: {result.error}{trace}"
    structured = result.structured
    if isinstance(structured, dict | list):
        body = json.dumps(structured, indent=2, ensure_ascii=False, default=str)
    else:
        body = content_text(result.content) if structured is None else str(structured)
    return f"{head}\n{body}"


def _args_text(arguments: Any) -> str:
    text = json.dumps(arguments, ensure_ascii=False, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def _summary_html(record: Any) -> str:
    summary = getattr(record, "summary", "")
    return (
        f"<br><small class='nexus-call-summary'>{html.escape(summary)}</small>" if summary else ""
    )


def history_html(records: Iterable[Any]) -> str:
    """Call records (``CallRecord``): id, time, tool, arguments, outcome, duration."""
    esc = html.escape
    rows = []
    for r in records:
        if r.error_type == "ApprovalDenied":  # the user's own answer, not a failure
            outcome = "<span style='color:#666'>denied</span>"
        elif r.error:
            outcome = (
                f"<span style='color:#b71c1c'>{esc(r.error_type or 'Error')}: {esc(r.error)}</span>"
            )
        else:
            outcome = "ok"
        rows.append(
            f"<tr><td>#{r.id}</td><td>{time.strftime('%H:%M:%S', time.localtime(r.at))}"
            f"</td><td><code>{esc(r.tool)}</code>{_summary_html(r)}</td><td><code>"
            f"{esc(_args_text(r.arguments))}</code></td><td>{outcome}</td>"
            f"<td>{_duration(r.duration)}</td></tr>"
        )
    if not rows:
        return "<p><i>No calls yet.</i></p>"
    return left_aligned(
        "<table class='nexus-history'><thead><tr><th>#</th><th>time</th><th>tool</th>"
        "<th>arguments</th><th>outcome</th><th>duration</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


def history_text(records: Iterable[Any]) -> str:
    lines = []
    for r in records:
        outcome = f"{r.error_type or 'Error'}: {r.error}" if r.error else "ok"
        if r.error_type == "ApprovalDenied":
            outcome = "denied"
        lines.append(
            f"#{r.id:<4} {r.tool}({_args_text(r.arguments)}) -> {outcome} [{_duration(r.duration)}]"
        )
        if getattr(r, "summary", ""):
            lines.append(f"      {r.summary}")
    return "\n".join(lines) if lines else "No calls yet."
