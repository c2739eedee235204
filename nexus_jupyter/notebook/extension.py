"""``%load_ext nexus_jupyter``: magics, cell tracking and tab completion.

Loading must stay fast (well under 250 ms cold), so nothing heavy happens here: the session
registry (built-in tools, the watched tools folder, MCP servers) is made on first use, by the
first magic or the first ``@tool`` cell; mcp, jupyter_server and ipywidgets are imported only
by the features that need them.
"""

from __future__ import annotations

from typing import Any

from ..sources.notebook import NotebookTracker

__all__ = ["current_tracker", "load", "unload"]

_tracker: NotebookTracker | None = None
_shell: Any = None


def current_tracker() -> NotebookTracker | None:
    """The tracker of the shell the extension is loaded in (``None`` when not loaded)."""
    return _tracker


def load(ipython: Any) -> None:
    """Register the magics, the cell hooks and the completer on ``ipython``."""
    global _tracker, _shell
    if _tracker is not None:
        unload(_shell)
    from ..render.display import install_display_formatters
    from . import api
    from .completion import install_completer
    from .magics import ToolMagics, load_subcommand_modules

    load_subcommand_modules()
    install_display_formatters(ipython)
    tracker = NotebookTracker(api.current_registry, ipython.user_ns)
    ipython.events.register("pre_run_cell", tracker.pre_run_cell)
    ipython.events.register("post_run_cell", tracker.post_run_cell)
    ipython.register_magics(ToolMagics)
    install_completer(ipython)
    _tracker, _shell = tracker, ipython


def unload(ipython: Any) -> None:
    """Stop tracking cells (the magics stay until the kernel restarts, as IPython does)."""
    global _tracker, _shell
    tracker = _tracker
    if tracker is None:
        return
    for event, callback in (
        ("pre_run_cell", tracker.pre_run_cell),
        ("post_run_cell", tracker.post_run_cell),
    ):
        try:
            ipython.events.unregister(event, callback)
        except ValueError:
            pass  # already gone (the shell was reset)
    _tracker = _shell = None
