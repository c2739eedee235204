"""``%tool export | watch | versions | rollback``: thin shims over the export and folder APIs.

- ``%tool export NAME [--dir D] [--force] [--dry-run]`` -> :func:`.export.export_tool`
- ``%tool watch DIR [--recursive]`` -> ``Registry.watch``
- ``%tool versions NAME`` -> :func:`nexus_jupyter.sources.versions.versions`
- ``%tool rollback NAME [VERSION]`` -> :func:`nexus_jupyter.sources.versions.rollback`
"""

from __future__ import annotations

import datetime as _dt
import html
from pathlib import Path
from typing import Any

from ..core.errors import NexusError
from ..render.tables import left_aligned
from .options import parse_options
from .subcommands import MagicContext, subcommand

__all__ = ["FolderStatus", "VersionsView"]


def _names(ctx: MagicContext, argv: list[str]) -> list[str]:
    return list(ctx.registry.names()) if len(argv) <= 1 else []


class VersionsView(list[Any]):
    """The versions of a tool file, oldest first (what ``%tool versions`` shows)."""

    def __init__(self, name: str, path: Path, versions: list[Any]) -> None:
        super().__init__(versions)
        self.name = name
        self.path = path

    def _rows(self) -> list[tuple[str, ...]]:
        rows: list[tuple[str, ...]] = []
        for v in self:
            when = _dt.datetime.fromtimestamp(v.time).strftime("%Y-%m-%d %H:%M:%S")
            rows.append((str(v.number), v.short, when, f"{v.size} B", v.summary, v.event))
        return rows

    def __str__(self) -> str:
        if not self:
            return f"No saved versions of {self.name!r} ({self.path})."
        lines = [f"Versions of {self.name!r} ({self.path}), oldest first:"]
        lines += ["  " + "  ".join(row) for row in self._rows()]
        lines.append(f"Restore one with `%tool rollback {self.name} N`.")
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))

    def _repr_html_(self) -> str:
        if not self:
            return f"<p>{html.escape(str(self))}</p>"
        head = "".join(f"<th>{h}</th>" for h in ("#", "hash", "time", "size", "change", "by"))
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in self._rows()
        )
        return (
            f"<p>Versions of <code>{html.escape(self.name)}</code> "
            f"(<code>{html.escape(str(self.path))}</code>)</p>"
            + left_aligned(f"<table><tr>{head}</tr>{body}</table>")
        )


class FolderStatus:
    """A watched folder's per-file status (what ``%tool watch`` shows)."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.status = source.status

    def __str__(self) -> str:
        files = self.status["files"]
        lines = [f"Watching {self.status['path']} ({len(files)} tool file(s))"]
        for rel, info in files.items():
            if info["status"] == "ok":
                lines.append(f"  ok     {rel}: {', '.join(info['tools']) or '(no tools)'}")
            else:
                at = f" (line {info['line']})" if info["line"] else ""
                lines.append(f"  error  {rel}{at}: {info['message']}")
        lines += [f"  {reason}" for reason in self.status["conflicts"].values()]
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


@subcommand(
    "export",
    usage="%tool export NAME [--dir D] [--force] [--dry-run]",
    summary="Write a notebook tool as a self-contained, hot-reloaded file in the tools folder.",
    details="The file gets the imports, helpers, classes and constants the tool uses; "
    "from then on the file owns the tool (edits are live). --dry-run shows the "
    "file without writing; --force overwrites a file export did not write.",
    example="%tool export weather --dry-run",
    complete=_names,
)
def _export(ctx: MagicContext, argv: list[str]) -> Any:
    from .export import export_tool

    opts = parse_options(
        "%tool export", argv, {"--dir": "one", "--force": "flag", "--dry-run": "flag"}, max_args=1
    )
    if not opts["args"]:
        raise NexusError("Give the tool to export: `%tool export NAME [--dir D]`.")
    namespace = getattr(ctx.shell, "user_ns", None)
    result = export_tool(
        opts["args"][0],
        registry=ctx.registry,
        namespace=namespace,
        tools_dir=opts.get("dir"),
        force=bool(opts.get("force")),
        dry_run=bool(opts.get("dry_run")),
    )
    return result


@subcommand(
    "watch",
    usage="%tool watch DIR [--recursive]",
    summary="Load the tool files of a folder and hot-reload them on every save.",
    example="%tool watch tools/shared",
)
def _watch(ctx: MagicContext, argv: list[str]) -> Any:
    opts = parse_options("%tool watch", argv, {"--recursive": "flag"}, max_args=1)
    if not opts["args"]:
        raise NexusError("Give the folder to watch: `%tool watch DIR`.")
    folder = Path(opts["args"][0]).expanduser()
    if not folder.is_dir():
        raise NexusError(f"No folder {str(folder)!r}; create it first, or check the path.")
    source = ctx.registry.watch(folder, recursive=bool(opts.get("recursive")))
    return FolderStatus(source)


@subcommand(
    "versions",
    usage="%tool versions NAME",
    summary="List the saved versions of a tool file, with time and a diff summary.",
    example="%tool versions weather",
    complete=_names,
)
def _versions(ctx: MagicContext, argv: list[str]) -> Any:
    from ..sources.versions import resolve_tool_file, versions

    opts = parse_options("%tool versions", argv, {"--dir": "one"}, max_args=1)
    if not opts["args"]:
        raise NexusError("Give the tool: `%tool versions NAME`.")
    name = opts["args"][0]
    path = resolve_tool_file(name, registry=ctx.registry, tools_dir=opts.get("dir"))
    return VersionsView(name, path, versions(path))


@subcommand(
    "rollback",
    usage="%tool rollback NAME [VERSION]",
    summary="Restore a tool file to an earlier version (default: the previous one).",
    details="VERSION is a number from `%tool versions NAME` or a hash prefix.",
    example="%tool rollback weather 3",
    complete=_names,
)
def _rollback(ctx: MagicContext, argv: list[str]) -> Any:
    from ..sources.versions import resolve_tool_file, rollback

    opts = parse_options("%tool rollback", argv, {"--dir": "one"}, max_args=2)
    if not opts["args"]:
        raise NexusError("Give the tool: `%tool rollback NAME [VERSION]`.")
    name, *rest = opts["args"]
    path = resolve_tool_file(name, registry=ctx.registry, tools_dir=opts.get("dir"))
    existed = path.exists()
    chosen = rollback(path, rest[0] if rest else None, registry=ctx.registry)
    restored = f"version {chosen.number} ({chosen.short})"
    said = (
        f"Restored {path.name} to {restored}"
        if existed
        else f"{path.name} did not exist: wrote it again as {restored}"
    )
    entry = ctx.registry.snapshot.entries.get(name)
    winner = entry.spec if entry is not None else None
    if winner is not None and winner.origin != str(path) and winner.source_kind != "directory":
        # the file's tool loads, but another source's tool of that name is what runs
        way = (
            f"`%tool remove {name}` lets the file's run"
            if winner.source_kind == "notebook"
            else f"rename the file's tool to run it (or, for a built-in {name}, list it in "
            "allow_overrides in nex.yaml)"
        )
        return _Message(
            f"{said}. Its {name} loads, but the {winner.source_kind} tool {name} "
            f"({winner.source}) takes precedence, so calls of {name} run that one; {way}."
        )
    return _Message(f"{said}; it is live now.")


class _Message(str):
    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))
