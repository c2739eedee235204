"""``%tool check [NAME ...]``, ``%tool install NAME ... | --all-missing [--yes]`` and
``%tool sync``: the tool manifest in the notebook (thin shims over
:mod:`nexus_jupyter.sources.maintenance`, like ``nexus-tools check|install|sync``)."""

from __future__ import annotations

from typing import Any

from ..core.errors import NexusError
from .options import parse_options
from .subcommands import MagicContext, subcommand

__all__ = ["Report"]


class Report:
    """Lines of text shown as the cell's result (``ok`` says whether all went well)."""

    def __init__(self, lines: list[str], ok: bool = True, data: Any = None) -> None:
        self.lines = lines
        self.ok = ok
        self.data = data

    def __repr__(self) -> str:
        return "\n".join(self.lines) or "(nothing to report)"


@subcommand(
    "check",
    usage="%tool check [NAME ...]",
    summary="Re-run availability checks; say why each tool cannot run (and how to fix it).",
    example="%tool check build",
)
def _check(ctx: MagicContext, argv: list[str]) -> Report:
    from ..sources.maintenance import check_tools

    rows = check_tools(ctx.registry, argv or None)
    if not argv:  # everything: only the ones that cannot run are worth a line
        bad = [r for r in rows if not r["available"]]
        lines = [f"{r['name']}: unavailable -- {r['reason']}" for r in bad]
        lines.append(f"{len(rows) - len(bad)} of {len(rows)} tools available.")
        return Report(lines, not bad, rows)
    lines = [
        f"{r['name']}: " + ("available" if r["available"] else f"unavailable -- {r['reason']}")
        for r in rows
    ]
    return Report(lines, all(r["available"] for r in rows), rows)


def _ask(command: str) -> bool:
    try:
        answer = input(f"Run `{command}`? [y/N] ")
    except Exception as exc:  # a front end without stdin (nbclient, some UIs)
        raise NexusError(
            f"Cannot ask whether to run `{command}` here ({type(exc).__name__}); "
            "confirm with `%tool install NAME --yes`."
        ) from None
    return answer.strip().lower() in ("y", "yes")


@subcommand(
    "install",
    usage="%tool install NAME ... | --all-missing [--yes]",
    summary="Run declared tools' install commands (asking first), then check them again.",
    example="%tool install build --yes",
)
def _install(ctx: MagicContext, argv: list[str]) -> Report:
    from ..sources.maintenance import install_tools

    opts = parse_options("%tool install", argv, {"--all-missing": "flag", "--yes": "flag"})
    names = opts["args"]
    if bool(names) == bool(opts.get("all_missing")):
        raise NexusError("%tool install needs tool names or --all-missing (not both).")
    lines: list[str] = []
    outcomes = install_tools(
        ctx.registry,
        names,
        all_missing=bool(opts.get("all_missing")),
        confirm=(lambda _command: True) if opts.get("yes") else _ask,
        report=lines.append,
    )
    return Report(lines, all(o.ok for o in outcomes), outcomes)


@subcommand(
    "sync",
    usage="%tool sync",
    summary="Re-discover every source and say which tools were added, removed or changed.",
    example="%tool sync",
)
def _sync(ctx: MagicContext, argv: list[str]) -> Report:
    from pathlib import Path

    from ..sources.maintenance import sync

    root = Path(getattr(ctx.registry, "root", None) or Path.cwd())
    report = sync(ctx.registry, root)
    lines = [f"added    {n}" for n in report["added"]]
    lines += [f"removed  {n}" for n in report["removed"]]
    lines += [f"changed  {c['name']}: {', '.join(c['changed'])}" for c in report["changed"]]
    return Report(lines or ["No changes since the last sync."], True, report)
