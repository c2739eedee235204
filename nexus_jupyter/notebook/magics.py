"""The ``%tool`` / ``%%tool`` / ``%tools`` magics: parse, dispatch, and turn mistakes into
``UsageError`` (one clear sentence, no traceback). Behaviour lives in :mod:`.api`; the
subcommands are in ``magic_*`` modules and register themselves in
:data:`~nexus_jupyter.notebook.subcommands.SUBCOMMANDS`.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import pkgutil
import shlex
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class, no_var_expand

from ..core.errors import NexusError
from .line_output import show_line_output, split_silencer
from .subcommands import SUBCOMMANDS, MagicContext, Subcommand

__all__ = ["ToolMagics", "build_help", "dispatch", "load_subcommand_modules"]

log = logging.getLogger(__name__)

_INTRO = """Work with the session's tools (the registry `nexus_jupyter.registry()` returns).

Usage: %tool SUBCOMMAND [ARGS]   ·   %tool help SUBCOMMAND   ·   %tools (the catalog)

Each %tool line of a cell shows its output; `%tool mode allow;` (a trailing ;) shows nothing;
`result = %tool call add a=1` keeps the value (a ToolResult here) and shows nothing.

%%tool [--name N] [--permission P] [--category C] [--capability C] [--requires-credential S]
    Run the cell and register the function(s) it defines as tools (no decorator needed);
    options may repeat (--category math --category demo). Example:

        %%tool --permission read_only --category math
        def add(a: int, b: int) -> int:
            "Add two integers."
            return a + b

A function decorated with @tool in any cell is registered when the cell runs; re-running the
cell updates it, `del name` removes it.

Subcommands:
"""


def load_subcommand_modules() -> list[str]:
    """Import every ``nexus_jupyter.notebook.magic_*`` module so its subcommands register.

    A module that fails to import is logged and skipped: one broken feature must not take
    the other subcommands down.
    """
    from .. import notebook

    loaded = []
    for info in sorted(pkgutil.iter_modules(notebook.__path__), key=lambda m: m.name):
        if not info.name.startswith("magic_"):
            continue
        module = f"{notebook.__name__}.{info.name}"
        try:
            importlib.import_module(module)
            loaded.append(module)
        except Exception:
            log.exception("could not load %s; its %%tool subcommands are missing", module)
    _refresh_docstrings()
    return loaded


def _sub_help(sub: Subcommand) -> str:
    text = f"%tool {sub.usage.removeprefix('%tool ')}\n    {sub.summary}"
    if sub.details:
        text += "\n    " + sub.details.replace("\n", "\n    ")
    return text + f"\n    Example: {sub.example}"


def build_help(name: str | None = None) -> str:
    """The help of one subcommand, or of all of them (what ``%tool?`` shows)."""
    if name is not None:
        return _sub_help(lookup(name))
    return _INTRO + "\n".join(_sub_help(SUBCOMMANDS[n]) for n in sorted(SUBCOMMANDS))


def lookup(name: str) -> Subcommand:
    """The subcommand ``name``; a ``UsageError`` with "did you mean" otherwise."""
    sub = SUBCOMMANDS.get(name)
    if sub is not None:
        return sub
    close = difflib.get_close_matches(name, list(SUBCOMMANDS), n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise UsageError(
        f"Unknown %tool subcommand {name!r}.{hint} Subcommands: {', '.join(sorted(SUBCOMMANDS))}."
    )


def split_line(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"Could not read {line.strip()!r}: {exc}; check the quotes.") from None


def dispatch(shell: Any, line: str) -> Any:
    """Run ``%tool LINE``: find the subcommand and call it; NexusError -> UsageError."""
    argv = split_line(line)
    if not argv:
        from .views import HelpText

        return HelpText(build_help())
    sub = lookup(argv[0])
    ctx = MagicContext(shell=shell, registry=_LazyRegistry(), line=line)
    try:
        return sub.handler(ctx, argv[1:])
    except NexusError as exc:
        raise UsageError(str(exc)) from None
    except KeyError as exc:
        raise UsageError(str(exc.args[0]) if exc.args else str(exc)) from None


class _LazyRegistry:
    """The session registry, made on first attribute access: ``%tool help`` and the parsing
    of a bad line never pay for building it."""

    def __getattr__(self, attr: str) -> Any:
        from .api import current_registry

        return getattr(current_registry(), attr)


@magics_class
class ToolMagics(Magics):
    @no_var_expand  # JSON braces in `%tool call f {"a": 1}` are not variables
    @line_cell_magic
    def tool(self, line: str, cell: str | None = None) -> Any:
        if cell is None:  # every line of a cell shows its output, `;` none (see line_output)
            line, silenced = split_silencer(line)
            return show_line_output(self.shell, dispatch(self.shell, line), silenced=silenced)
        from .cell_tools import run_tool_cell

        try:
            return run_tool_cell(self.shell, line, cell)
        except NexusError as exc:
            raise UsageError(str(exc)) from None

    @line_magic
    def tools(self, line: str) -> Any:
        """Open the tools catalog (search, filters, details, Try). ``%tools QUERY`` starts
        with a search. Same as ``%tool browse``."""
        line, silenced = split_silencer(line)
        value = dispatch(self.shell, "browse " + line)
        return show_line_output(self.shell, value, silenced=silenced)


def _refresh_docstrings() -> None:
    # `%tool?` shows the function's docstring: build it from the subcommand table, which
    # other features extend when their magic_* module loads.
    ToolMagics.tool.__doc__ = build_help()
