"""``%tool toolsets [NAME]`` and ``%tool mode [default|prompt|allow]``.

``toolsets`` shows the toolsets (built-in, nex.yaml, entry points), their tools, approval
defaults and errors. ``mode`` shows or sets the session's permission mode: ``prompt`` asks
for every call above read-only, ``allow`` runs everything granted without asking (tools that
themselves require approval still ask), ``default`` lets the permission tiers decide.
"""

from __future__ import annotations

import html
from typing import Any

from ..core.errors import NexusError
from ..core.toolsets.names import SESSION_MODES
from ..render.tables import left_aligned
from .subcommands import MagicContext, subcommand

__all__ = ["ToolsetTable", "set_mode"]

MODES: tuple[str, ...] = SESSION_MODES


class ToolsetTable:
    """What ``%tool toolsets`` shows: one row per toolset."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def __repr__(self) -> str:
        from ..cli.cmd_toolsets import toolsets_text

        return toolsets_text(self.rows)

    def _repr_html_(self) -> str:
        esc = html.escape
        body = []
        for r in self.rows:
            state = "on" if r["enabled"] else "<span style='color:#888'>off</span>"
            tools = ", ".join(f"<code>{esc(t)}</code>" for t in r["tools"]) or "-"
            error = (
                f"<br><span style='color:#b71c1c'>{esc(r['error'])}</span>" if r["error"] else ""
            )
            body.append(
                f"<tr><td><b>{esc(r['toolset'])}</b></td><td>{state}</td>"
                f"<td>{esc(str(r['origin']))}</td><td>{esc(str(r['approval']))}</td>"
                f"<td>{tools}{error}</td></tr>"
            )
        return left_aligned(
            "<table class='nexus-toolsets'><thead><tr><th>toolset</th><th>state</th>"
            "<th>from</th><th>approval</th><th>tools</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
        )


@subcommand(
    "toolsets",
    usage="%tool toolsets [NAME]",
    summary="List the toolsets: their tools, where they come from, approval defaults, errors.",
    example="%tool toolsets web",
)
def toolsets(ctx: MagicContext, argv: list[str]) -> ToolsetTable:
    from ..core.toolsets.overview import toolset_rows  # pydantic: not at %load_ext

    rows = toolset_rows(ctx.registry)
    if argv:
        chosen = [r for r in rows if r["toolset"] == argv[0]]
        if not chosen:
            known = ", ".join(r["toolset"] for r in rows)
            raise NexusError(f"No toolset {argv[0]!r}; toolsets: {known}.")
        rows = chosen
    return ToolsetTable(rows)


def set_mode(registry: Any, mode: str) -> str:
    """Set the session's permission mode on ``registry``'s policy; returns it."""
    if mode not in MODES:
        raise NexusError(f"Unknown mode {mode!r}; use one of {', '.join(MODES)}.")
    policy = getattr(registry, "policy", None)
    if policy is None or not hasattr(policy, "mode"):
        raise NexusError(
            "This registry has no policy with modes; use Registry.default() (the session's "
            "registry has one)."
        )
    policy.mode = mode
    from .kernel_link import current_link

    link = current_link()
    if link is not None and getattr(link.session, "policy", None) is policy:
        link.policy_changed()  # the sidebar asks as the notebook now does
    return mode


@subcommand(
    "mode",
    usage="%tool mode [default|prompt|allow]",
    summary="Show or set the session's permission mode (prompt: ask above read-only; "
    "allow: never ask for granted tools).",
    example="%tool mode prompt",
    complete=lambda ctx, argv: list(MODES),
)
def mode(ctx: MagicContext, argv: list[str]) -> Any:
    from .views import HelpText  # text, not a quoted str

    if len(argv) > 1:
        raise NexusError(f"`%tool mode` takes one mode, got {' '.join(argv)!r}.")
    if not argv:
        current = getattr(getattr(ctx.registry, "policy", None), "mode", "default")
        return HelpText(f"mode: {current}")
    return HelpText(f"mode: {set_mode(ctx.registry, argv[0])}")
