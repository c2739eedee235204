"""Tab completion for ``%tool``: subcommands first, then what each subcommand completes
(tool names for ``call``/``info``/``try``/...)."""

from __future__ import annotations

import re
import shlex
from typing import Any

from .subcommands import SUBCOMMANDS, MagicContext

__all__ = ["complete_line", "install_completer"]


def complete_line(line: str, registry: Any = None) -> list[str]:
    """Candidates for the word being typed at the end of ``line`` (``"%tool ca"`` ->
    ``["call"]``, ``"%tool call a"`` -> tool names starting with ``a``)."""
    body = line.lstrip()
    for prefix in ("%tool", "tool"):
        if body.startswith(prefix):
            body = body[len(prefix) :]
            break
    try:
        words = shlex.split(body)
    except ValueError:
        words = body.split()
    if body.endswith((" ", "\t")) or not words:
        words.append("")
    if len(words) == 1:
        return sorted(n for n in SUBCOMMANDS if n.startswith(words[0]))
    sub = SUBCOMMANDS.get(words[0])
    if sub is None or sub.complete is None:
        return []
    if registry is None:
        from .api import current_registry

        registry = current_registry()
    ctx = MagicContext(shell=None, registry=registry, line=line)
    current = words[-1]
    return sorted(c for c in sub.complete(ctx, words[1:]) if c.startswith(current))


_TOOL_LINE = re.compile(r"^\s*%tool\s")


def _matcher(context: Any) -> dict[str, Any]:
    """An IPython matcher (API v2): on a ``%tool`` line, ours are the only completions
    (no Python keywords mixed in)."""
    from IPython.core.completer import SimpleCompletion

    line = context.line_with_cursor
    if not _TOOL_LINE.match(line):
        return {"completions": [], "suppress": False}
    try:
        items = complete_line(line)
    except Exception:  # completion must never raise into the user's typing
        items = []
    return {"completions": [SimpleCompletion(text=t, type="tool") for t in items], "suppress": True}


_matcher.matcher_api_version = 2  # type: ignore[attr-defined]
_matcher.matcher_priority = 10  # type: ignore[attr-defined]
_matcher.matcher_identifier = "nexus_jupyter.tool"  # type: ignore[attr-defined]


def install_completer(shell: Any) -> None:
    """Register the ``%tool`` matcher on the shell's completer (once)."""
    matchers = shell.Completer.custom_matchers
    if _matcher not in matchers:
        matchers.append(_matcher)
