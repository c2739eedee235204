"""How the sidebar's REST answers show one name defined by several sources, and a tool that
is not there (:mod:`.jupyter_handlers` calls these).

- **A conflict** (two sources of one rank, e.g. two notebooks' kernels, define ``add``): no
  call by name alone runs either, so each one's row is in error with the conflict as its
  reason and names the others (``conflicts_with``); neither is "shadowed". A row opens its
  own tool (``GET tools/add?source=kernel:b.ipynb``) and Try calls it (``"source"`` in the
  call's body), as the notebook's own ``%tool call add`` does in its kernel.
- **A shadowed tool** (a weaker source's ``add``) keeps ``shadowed_by``; it opens and runs by
  its source too.
- **A file a live kernel exported** names that kernel (``exported_by``), so the sidebar shows
  it with the notebook while that kernel lives, and under its folder once it restarted.
- **A missing tool**: why it is gone when it left with a kernel, else where to look, worded
  for the sidebar (not for ``%tool list``).
"""

from __future__ import annotations

import os
from typing import Any

from ..core.errors import ToolNotFound
from ..core.registry.state import ToolEntry

__all__ = ["SIDEBAR_ADVICE", "exported_by", "mark_rows", "not_found_message", "source_details"]

#: What the sidebar's user can do about a name that is not a tool.
SIDEBAR_ADVICE = "Search the Tools sidebar for the tools this server has."


def mark_rows(entry: ToolEntry, rows: list[dict[str, Any]], registry: Any) -> None:
    """Mark the rows of ``entry`` (its winner's, then one per tool it shadows) for a
    conflict, and a file a live kernel exported (see the module docs)."""
    conflicting = {t.spec.source for t in entry.conflicting}
    if conflicting:
        everyone = [entry.spec.source, *conflicting]
        for row in rows:
            if row["source"] in everyone:
                row["status"], row["reason"] = "error", entry.reason
                row["conflicts_with"] = [s for s in everyone if s != row["source"]]
                row["shadowed"] = [s for s in row["shadowed"] if s not in conflicting]
                row["shadowed_by"] = None
    for row in rows:
        exported = row.get("exported_from") and registry is not None
        row["exported_by"] = exported_by(registry, row) if exported else None


def exported_by(registry: Any, row: dict[str, Any]) -> str | None:
    """The live kernel (``kernel:<notebook>``) that exported the file of ``row``: a kernel of
    the notebook its header names, whose process started before the file was written;
    ``None`` once that kernel restarted or stopped (a new process started after it)."""
    try:
        written = os.stat(row["origin"]).st_mtime
    except (OSError, TypeError, ValueError):
        return None
    for state in registry.sources():
        source = state.source
        notebook = str(getattr(source, "notebook", "") or "")
        if (
            state.kind == "kernel"
            and notebook.rsplit("/", 1)[-1] == row["exported_from"]
            and getattr(source, "since", written + 1) <= written
        ):
            return str(state.name)
    return None


def source_details(entry: ToolEntry, source: str) -> dict[str, Any] | None:
    """``GET tools/{name}?source=S``: the details of the tool ``source`` defines under the
    name (the winner's, or one it shadows), in conflict or shadowed as its row says;
    ``None`` when ``source`` defines none."""
    chosen = entry.of_source(source)
    if chosen is None:
        return None
    body = (entry if source == entry.spec.source else chosen).to_dict()
    conflicting = {t.spec.source for t in entry.conflicting}
    if conflicting:
        everyone = [entry.spec.source, *conflicting]
        if source in everyone:
            body["status"], body["reason"] = "error", entry.reason
            body["conflicts_with"] = [s for s in everyone if s != source]
            body["shadowed"] = [s for s in body["shadowed"] if s["source"] not in conflicting]
            return body
    if source != entry.spec.source:
        body["shadowed_by"] = entry.spec.source
    return body


def not_found_message(exc: ToolNotFound, live: Any) -> str:
    """A 404's message for the sidebar: why the tool left with its kernel (it restarted, was
    shut down) and how to bring it back, else close names or where to look."""
    kernels = getattr(live, "kernels", None)
    why = kernels.why_gone(exc.name) if kernels is not None and not exc.cause else None
    if why:
        return f"The tool {exc.name!r} is gone: {why}"
    return exc.worded_for(SIDEBAR_ADVICE)
