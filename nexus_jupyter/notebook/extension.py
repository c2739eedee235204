"""``%load_ext nexus_jupyter``: magics, cell tracking and tab completion.

Loading must stay fast (well under 250 ms cold), so nothing heavy happens here: the session
registry (built-in tools, the watched tools folder, MCP servers) is made on first use, by the
first magic or the first ``@tool`` cell; mcp, jupyter_server and ipywidgets are imported only
by the features that need them. In a Jupyter kernel, the link that serves the notebook's tools
to the Jupyter server (:mod:`.kernel_link`) starts on a background thread, which builds the
session registry there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.tools.decorator import on_tool_defined
from ..sources.notebook import NotebookTracker

__all__ = ["current_shell", "current_tracker", "load", "unload"]

_tracker: NotebookTracker | None = None
_shell: Any = None
_stop_listening: Callable[[], None] | None = None
_stop_sign_in_links: Callable[[], None] | None = None
_stop_dropping_lines: Callable[[], None] | None = None


def current_tracker() -> NotebookTracker | None:
    """The tracker of the shell the extension is loaded in (``None`` when not loaded)."""
    return _tracker


def current_shell() -> Any:
    """The shell the extension is loaded in (``None`` when not loaded)."""
    return _shell


def load(ipython: Any) -> None:
    """Register the magics, the cell hooks and the completer on ``ipython``."""
    global _tracker, _shell
    if _tracker is not None:
        unload(_shell)
    from ..render.display import install_display_formatters
    from . import api
    from .completion import install_completer
    from .debugging import name_cells_of
    from .magics import ToolMagics, load_subcommand_modules

    load_subcommand_modules()
    install_display_formatters(ipython)
    tracker = NotebookTracker(api.current_registry, ipython.user_ns)
    for event, callback in _hooks(tracker):
        ipython.events.register(event, callback)
    global _stop_listening
    _stop_listening = on_tool_defined(tracker.on_tool_defined)
    ipython.register_magics(ToolMagics)
    _install_unglue(ipython)
    install_completer(ipython)
    global _stop_sign_in_links
    from .sign_in import install_sign_in_links

    _stop_sign_in_links = install_sign_in_links()
    name_cells_of(ipython)  # tool tracebacks say "Cell In[3]", like IPython's own
    global _stop_dropping_lines
    from .kernel_logging import drop_lines_shown_as_status

    _stop_dropping_lines = drop_lines_shown_as_status()  # no "test broke" in an old cell
    _tracker, _shell = tracker, ipython
    from ..session import when_session_registry_made

    when_session_registry_made(api.follow_session)  # every call, however made, in the history
    from .workspace_notice import warn_of_old_tools_folder

    when_session_registry_made(warn_of_old_tools_folder)  # notebooks/tools/dynamic, once
    from .kernel_link import start_kernel_link

    start_kernel_link(ipython, api.current_registry)


def _install_unglue(ipython: Any) -> None:
    """``%tools;`` runs as ``%tools ;`` (see :func:`.line_output.unglue_silencer`); once per
    shell, and kept on unload like the magics it serves."""
    from .line_output import unglue_silencer

    post = getattr(ipython, "input_transformers_post", None)
    if isinstance(post, list) and unglue_silencer not in post:
        post.append(unglue_silencer)


def _hooks(tracker: NotebookTracker) -> list[tuple[str, Any]]:
    return [
        ("pre_execute", tracker.pre_execute),
        ("pre_run_cell", tracker.pre_run_cell),
        ("post_execute", tracker.post_execute),
        ("post_run_cell", tracker.post_run_cell),
    ]


def unload(ipython: Any) -> None:
    """Stop tracking cells (the magics stay until the kernel restarts, as IPython does)."""
    global _tracker, _shell, _stop_listening
    tracker = _tracker
    if tracker is None:
        return
    for event, callback in _hooks(tracker):
        try:
            ipython.events.unregister(event, callback)
        except ValueError:
            pass  # already gone (the shell was reset)
    if _stop_listening is not None:
        _stop_listening()
    global _stop_sign_in_links, _stop_dropping_lines
    if _stop_sign_in_links is not None:
        _stop_sign_in_links()
        _stop_sign_in_links = None
    if _stop_dropping_lines is not None:
        _stop_dropping_lines()
        _stop_dropping_lines = None
    _tracker = _shell = None
