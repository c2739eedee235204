"""``%tool export``: write a notebook tool as a self-contained file in the tools folder.

>>> export_tool("weather", dry_run=True).text     # doctest: +SKIP
"# Tool 'weather', exported by nexus_jupyter from notebook 'demo.ipynb' ...

The file holds a short header (which notebook, when, a content-hash stamp that tells export
the file is its own), the imports the tool needs, the notebook helpers, classes and
constants it uses (found transitively, see :mod:`.export_analysis`) and the function with
its ``@tool(...)`` options. The write is atomic and every version is kept.

After writing, the tool is handed over: the folder's directory source loads the file at
once and the notebook source drops the tool, so the session's entry comes from the file
and edits to the file show up live. Re-running the cell takes the tool back (the file's
version is then listed as shadowed).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import ExportError, ToolNotFound
from ..sources.tool_files import (
    default_tools_dir,
    hand_over,
    stamp_text,
    target_path,
    write_tool_file,
)
from .export_analysis import analyze_tool

__all__ = ["ExportResult", "default_tools_dir", "export_tool", "render_tool_module"]


@dataclass(frozen=True)
class ExportResult:
    """What export did: the file (``path``), its ``text``, and whether it was ``written``
    (``False`` for a dry run). ``status`` is the file's load status after the hand-over;
    ``cases`` how many test cases went from the notebook into ``<name>.tests.yaml``."""

    path: Path
    text: str
    written: bool
    status: Mapping[str, Any] | None = None
    #: test cases copied from the notebook's metadata into ``<name>.tests.yaml``
    cases: int = 0
    #: who else serves the file: the Jupyter server that started this kernel does, or (a
    #: warning) it watches another folder; ``None`` outside such a kernel
    served: str | None = None

    def _repr_markdown_(self) -> str:
        verb = "Wrote" if self.written else "Would write (dry run)"
        tests = (
            f" and {self.cases} test case(s) to `{self.path.stem}.tests.yaml`" if self.cases else ""
        )
        served = f"\n\n{self.served}" if self.served else ""
        return f"{verb} `{self.path}`{tests}:{served}\n\n```python\n{self.text}```\n"

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """In a terminal (``ipython``): what the notebook shows, as text."""
        verb = "Wrote" if self.written else "Would write (dry run)"
        tests = (
            f" and {self.cases} test case(s) to {self.path.stem}.tests.yaml" if self.cases else ""
        )
        served = f"\n{self.served}" if self.served else ""
        p.text(f"{verb} {self.path}{tests}:{served}\n\n{self.text.rstrip()}")

    def __repr__(self) -> str:
        verb = "written" if self.written else "dry run"
        lines = len(self.text.splitlines())
        served = f"; {self.served}" if self.served else ""
        return f"<ExportResult {str(self.path)!r} ({verb}, {lines} lines){served}>"


def _notebook_name(namespace: Mapping[str, Any], given: str | None) -> str:
    if given:
        return given
    for key in ("__vsc_ipynb_file__", "__session__"):
        value = namespace.get(key)
        if isinstance(value, str) and value:
            return os.path.basename(value)
    env = os.environ.get("JPY_SESSION_NAME")
    return os.path.basename(env) if env else "an IPython session"


def _decorator(options: Mapping[str, Any]) -> str:
    if not options:
        return "@tool"
    return "@tool(" + ", ".join(f"{k}={v!r}" for k, v in options.items()) + ")"


def render_tool_module(
    tool: Any, *, namespace: Mapping[str, Any] | None = None, notebook: str | None = None
) -> str:
    """The text of the exported module for ``tool`` (a notebook :class:`Tool`)."""
    fn = tool.fn
    if fn is None:
        raise ExportError(
            f"Cannot export {tool.name!r}: it has no Python function (it comes from "
            f"{tool.spec.source or 'a schema'}); only tools defined in Python can be exported."
        )
    scope = namespace if namespace is not None else getattr(fn, "__globals__", {})
    plan = analyze_tool(fn, tool_name=tool.name, namespace=scope, fallback_source=tool.source_code)
    options = dict(tool.meta.options()) if tool.meta is not None else {}
    if tool.name != fn.__name__:
        options["name"] = tool.name
    parts = ["\n".join(plan.imports)]
    if plan.constants:
        parts.append("\n".join(plan.constants))
    parts += [d.rstrip() for d in plan.definitions]
    parts.append(_decorator(options) + "\n" + plan.tool_source.rstrip())
    body = "\n\n\n".join(p for p in parts if p) + "\n"
    if plan.unresolved:
        note = ", ".join(repr(n) for n in plan.unresolved)
        body = f"# Note: {note} were not defined in the notebook when this was exported.\n" + body
    when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"Tool {tool.name!r}, exported by nexus_jupyter from notebook "
        f"{_notebook_name(scope, notebook)!r} on {when}.\n"
        f"This file is hot-reloaded: edit it freely (`%tool versions {tool.name}` lists its history)."
    )
    return stamp_text(body, header=header)


def _notebook_tool(registry: Any, name: str) -> Any:
    entry = registry.entry(name)  # ToolNotFound with suggestions
    for candidate in (entry.tool, *entry.shadowed):
        if candidate.spec.source_kind == "notebook":
            return candidate
    origin = entry.tool.spec.origin or entry.tool.spec.source
    if entry.tool.spec.source_kind == "directory":
        raise ExportError(
            f"{name!r} already comes from the file {origin}; edit that file, or re-run the cell "
            "that defines it to take it back into the notebook, then export again."
        )
    raise ExportError(
        f"{name!r} comes from {entry.tool.spec.source!r}, not from this notebook; only "
        "notebook tools can be exported."
    )


def export_tool(
    name: str,
    *,
    registry: Any = None,
    namespace: Mapping[str, Any] | None = None,
    tools_dir: str | Path | None = None,
    force: bool = False,
    dry_run: bool = False,
    notebook: str | None = None,
) -> ExportResult:
    """Write notebook tool ``name`` as ``<tools dir>/<name>.py`` and hand it over to the
    folder's directory source. Raises :class:`ExportError` (or :class:`ToolNotFound`).

    ``namespace`` is where the tool's globals are looked up (default: the function's own
    globals, the notebook's namespace). ``dry_run`` returns the text without writing.
    ``force`` overwrites a file export did not write (or one edited since).
    """
    if registry is None:
        import nexus_jupyter

        registry = nexus_jupyter.registry()
    try:
        tool = _notebook_tool(registry, name)
    except ToolNotFound:
        raise
    folder = Path(tools_dir).expanduser() if tools_dir is not None else default_tools_dir(registry)
    path = target_path(folder, name)
    text = render_tool_module(tool, namespace=namespace, notebook=notebook)
    if dry_run:
        return ExportResult(path, text, written=False)
    write_tool_file(folder, name, text, force=force, event="export")
    status = hand_over(registry, folder, path)
    if status.get("status") != "ok":
        raise ExportError(
            f"Wrote {path}, but it does not load: {status.get('message')} "
            f"(line {status.get('line')}). The notebook version stays live; fix the file or "
            "report this as a bug in export."
        )
    from .test_cases import carry_cases_to_file

    carried = carry_cases_to_file(registry, name, path)  # its cases go beside the file
    if name in registry.source("notebook").names():
        registry.remove(name)
    return ExportResult(
        path, text, written=True, status=status, cases=carried, served=_served_by(folder, name)
    )


def _served_by(folder: Path, name: str) -> str | None:
    """Whether the Jupyter server that started this kernel serves ``folder`` (it says which
    folders it watches in the kernel's environment); ``None`` outside such a kernel."""
    from ..core.config.paths import server_root, server_tools_dirs

    watched = server_tools_dirs()
    if watched is None:
        return None
    here = folder.expanduser().resolve()
    if any(here == w.expanduser().resolve() for w in watched):
        return (
            f"The Jupyter server watches this folder: it serves `{name}` from the file "
            "(sidebar, REST, /nexus/mcp) and reloads it on every save."
        )
    where = ", ".join(f"`{w}`" for w in watched) or "no tools folder"
    if watched:
        fix = (
            f"To serve it there, export with `--dir {watched[0]}`, or set `tools_dir:` in the "
            "nex.yaml of this notebook's workspace to that folder."
        )
    else:  # the server has no folder to serve it from: it needs one first
        root = server_root() or Path("<the server's root>")
        fix = (
            f"To serve it, give the server a tools folder: create `{root / 'tools' / 'dynamic'}`, "
            f"or set `tools_dir:` in `{root / 'nex.yaml'}` (the server's own nex.yaml) to "
            "this folder; then restart the Jupyter server."
        )
    return (
        f"**Warning:** the Jupyter server does not watch `{here}` (it watches {where}), so "
        f"its sidebar and /nexus/mcp no longer list `{name}` (this kernel still has it, from "
        f"the file). {fix}"
    )
