"""The Jupyter server extension: the server's own registry, served under ``/nexus/api/``.

Enabled on install (``jupyter-config/server-config/nexus_jupyter.json``); check with
``jupyter server extension list``. The server holds its own :class:`Registry`, built with
``Registry.default(root=<server root>)``: the built-in tools, the watched tools folder
(``tools/dynamic``, so every cell a kernel exports shows up here too) and the MCP servers of
``nex.yaml``. The folder is the bridge between kernels and the server: the kernels this
server starts are told where it is (see :mod:`.kernel_workspace`), so a notebook in a
subfolder exports into it.

Routes (see :mod:`.jupyter_handlers`)::

    GET  /nexus/api/tools              search (q), filters, paging
    GET  /nexus/api/tools/{name}       spec, schema, status, shadowed, versions
    POST /nexus/api/tools/{name}/call  {"arguments": {...}, "approved": false}
    GET  /nexus/api/status             sources, per-file errors, MCP states
    GET  /nexus/api/events             WebSocket of registry changes

Embedding (and tests) can choose the registry with the tornado setting
``nexus_registry_factory``: a callable taking the server's root directory and returning a
:class:`Registry` (a callable, because config values are deep-copied and a registry holds
locks and threads). The server closes the registry on shutdown.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .jupyter_events import EventHub, VersionHistory

if TYPE_CHECKING:
    from ..core.registry.registry import Registry

__all__ = [
    "NexusServerState",
    "_jupyter_labextension_paths",
    "_jupyter_server_extension_points",
    "_load_jupyter_server_extension",
    "build_server_registry",
]

log = logging.getLogger(__name__)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Where Jupyter finds this extension's loader (re-exported by ``nexus_jupyter``)."""
    return [{"module": "nexus_jupyter.serve.jupyter"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """The prebuilt JupyterLab extension, relative to the ``nexus_jupyter`` package."""
    return [{"src": "labextension", "dest": "nexus-jupyter"}]


@dataclass
class NexusServerState:
    """What the handlers share: the registry, the event hub and the version history."""

    registry: Registry
    root: str
    hub: EventHub = field(default_factory=EventHub)
    history: VersionHistory = field(default_factory=VersionHistory)
    unsubscribe: Any = None
    #: Kernels as sources (:mod:`.jupyter_kernels`) and ``/nexus/mcp`` (:mod:`.jupyter_mcp`).
    live: Any = None

    def close(self) -> None:
        if self.unsubscribe is not None:
            self.unsubscribe()
            self.unsubscribe = None
        self.registry.close()


def build_server_registry(root: str | Path) -> Registry:
    """``Registry.default(root=root)``. If that fails (a broken ``nex.yaml``, a source that
    is not installed), the server still starts with a registry watching
    ``<root>/tools/dynamic``, and the failure shows as the error of a ``nex.yaml`` source in
    ``GET status`` (and so in the sidebar), not only in the log."""
    from ..core.registry.registry import Registry
    from ..core.registry.source import MutableSource

    try:
        # tool files run in worker processes (unless nex.yaml says otherwise): a file that
        # crashes or holds the GIL must not take every open notebook's server down
        return Registry.default(root=root, isolation="process")
    except Exception as exc:
        log.exception("nexus_jupyter: Registry.default(root=%r) failed", root)
        failure = f"{type(exc).__name__}: {exc}"
    reg = Registry()
    reg.add_source(MutableSource("nex.yaml", "config"))
    reg.set_status(
        "nex.yaml", error=f"the default registry failed, serving the tools folder only: {failure}"
    )
    try:
        reg.watch(Path(root) / "tools" / "dynamic")
    except Exception:
        log.exception("nexus_jupyter: cannot watch %s", Path(root) / "tools" / "dynamic")
    return reg


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Build (or adopt) the registry, add the routes, and follow registry changes."""
    from jupyter_server.utils import url_path_join

    from ..core.registry.catalog import catalog_of
    from .jupyter_handlers import handlers
    from .server_log import log_through_server

    stop_logging = log_through_server(serverapp.log)  # the registry's warnings, prefixed
    web_app = serverapp.web_app
    root = str(Path(serverapp.root_dir).expanduser().resolve())
    factory = web_app.settings.get("nexus_registry_factory") or build_server_registry
    registry = factory(root)
    registry.warm_search()  # the sidebar's first search should not wait for the model
    registry.tests.watch()  # tool tests run after every change; their status is in the rows
    state = NexusServerState(registry=registry, root=root)
    state.history.seed(registry)

    def on_change(change: Any) -> None:
        state.history.on_change(registry, change)
        state.hub.on_change(change)

    unsubscribe_tools = registry.subscribe(on_change)
    state.hub.follow_calls(registry)
    unsubscribe_offers = catalog_of(registry).subscribe(state.hub.on_offers_change)

    def unsubscribe() -> None:
        unsubscribe_tools()
        unsubscribe_offers()
        state.hub.close()
        stop_logging()

    state.unsubscribe = unsubscribe
    web_app.settings["nexus"] = state
    web_app.add_handlers(".*$", handlers(web_app.settings["base_url"], url_path_join))
    from ..core.registry.state import RegistryChanged
    from .jupyter_live import start_live_kernels

    state.live = start_live_kernels(serverapp, registry)
    # Jupyter tells a restart after the tools left: the sidebar is told them again, to reread
    # why they are gone (jupyter_kernels.KernelSources.why_gone)
    state.live.kernels.on_told = lambda names: state.hub.on_change(
        RegistryChanged(removed=tuple(names))
    )
    from .kernel_workspace import kernel_environment, pass_to_kernels

    # a kernel runs in its notebook's folder: tell it which folder this server watches
    pass_to_kernels(serverapp.kernel_manager, kernel_environment(root, registry))
    _close_on_shutdown(serverapp, state)
    serverapp.log.info(
        "nexus_jupyter: %d tools under %snexus/api/ (root %s)",
        len(registry),
        web_app.settings["base_url"],
        root,
    )


def _close_on_shutdown(serverapp: Any, state: NexusServerState) -> None:
    """Stop the registry's watcher and background loop when the server stops.

    Only ``ExtensionApp`` extensions get a stop hook; a module extension like this one
    chains onto ``ServerApp.cleanup_extensions``, which every shutdown path awaits."""
    original = getattr(serverapp, "cleanup_extensions", None)
    if original is None:
        return

    async def cleanup_extensions() -> None:
        try:
            if state.live is not None:
                await state.live.stop()
            state.close()
        except Exception:
            serverapp.log.exception("nexus_jupyter: closing the registry failed")
        await original()

    serverapp.cleanup_extensions = cleanup_extensions
