"""One workspace for the Jupyter server and its kernels: one tools folder, and an export that
never leaves the server without the tool.

**The folder.** A kernel runs in its notebook's folder, which is often a subfolder of the
server's root (``notebooks/``). The server watches ``<root>/tools/dynamic`` (or what the
root's ``nex.yaml`` says), so it tells every kernel it starts where that is, in the kernel's
environment (:func:`pass_to_kernels`): ``NEXUS_JUPYTER_SERVER_ROOT`` (the kernel's workspace
when no ``nex.yaml`` is nearer, see :func:`nexus_jupyter.core.config.paths.workspace_root`)
and ``NEXUS_JUPYTER_SERVER_TOOLS`` (the folders the server watches, so ``%tool export`` can
say whether the server serves what it wrote).

**The hand-over.** ``%tool export`` writes the file, then the notebook drops the tool; the
kernel's ``tools/list_changed`` may reach the server before the server's watcher has seen
the file. :class:`ExportHandOver` closes that window: when a kernel's listing drops a name,
the server's tools folders load ``<name>.py`` first (if it is there), so the server has the
tool from the file before it lets go of the kernel's.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.config.paths import SERVER_ROOT_ENV, SERVER_TOOLS_ENV

__all__ = ["ExportHandOver", "kernel_environment", "load_exported_files", "pass_to_kernels"]

log = logging.getLogger(__name__)


def watched_folders(registry: Any) -> list[Path]:
    """The folders of the registry's directory sources (the tools folders it watches)."""
    return [
        Path(state.source.root)
        for state in registry.sources()
        if state.kind == "directory" and getattr(state.source, "root", None) is not None
    ]


def kernel_environment(root: str | Path, registry: Any) -> dict[str, str]:
    """What a kernel of this server gets in its environment: the server's root and the tools
    folders its registry watches."""
    folders = os.pathsep.join(str(p) for p in watched_folders(registry))
    return {SERVER_ROOT_ENV: str(root), SERVER_TOOLS_ENV: folders}


def pass_to_kernels(kernel_manager: Any, extra: Mapping[str, str]) -> None:
    """Add ``extra`` to the environment of every kernel ``kernel_manager`` starts (and
    restarts: Jupyter keeps a kernel's launch arguments).

    Jupyter has no hook for an extension to add to a kernel's environment: the session
    manager passes ``env`` (the server's own plus ``JPY_SESSION_NAME``), ``POST /api/kernels``
    passes none (the server's own is used). So this server's kernel manager gets a
    ``start_kernel`` that adds ``extra`` to either; the server's own ``os.environ`` is left
    alone (another server in the same process keeps its own)."""
    start: Callable[..., Any] = kernel_manager.start_kernel

    async def start_kernel(*args: Any, **kwargs: Any) -> Any:
        env = dict(kwargs.get("env") or os.environ)
        env.update(extra)
        kwargs["env"] = env
        started = start(*args, **kwargs)
        return await started if inspect.isawaitable(started) else started

    kernel_manager.start_kernel = start_kernel


def load_exported_files(registry: Any, names: Iterable[str]) -> list[str]:
    """Make each tools folder of ``registry`` load ``<name>.py`` for every name in ``names``
    whose file is there, now (without waiting for its watcher). Returns the files loaded."""
    from ..sources.tool_files import target_path

    loaded: list[str] = []
    for state in registry.sources():
        source = state.source
        if state.kind != "directory" or not hasattr(source, "reload_file"):
            continue
        for name in names:
            try:
                path = target_path(source.root, name)
            except Exception:  # not a name a file can have: no export wrote it
                continue
            if not path.is_file():
                continue
            try:
                source.reload_file(path, registry=registry)
            except Exception:  # the watcher still loads it; say why this did not
                log.exception("nexus_jupyter: loading the exported %s failed", path)
                continue
            loaded.append(str(path))
    return loaded


class ExportHandOver:
    """Mixed into a kernel's MCP source: before a relist that drops names is published,
    :attr:`take_over` (given the dropped names) loads the files an export wrote for them,
    so a tool handed over from a notebook to a file is never missing from the server."""

    _tools: list[Any]
    #: Called in a worker thread with the names a relist dropped (set by the kernels' owner).
    take_over: Callable[[set[str]], Any] | None = None

    async def _list_tools(self, client: Any, *, publish: bool = True) -> None:
        before = {t.spec.name for t in self._tools}
        await super()._list_tools(client, publish=False)  # type: ignore[misc]
        gone = before - {t.spec.name for t in self._tools}
        if gone and self.take_over is not None:
            await asyncio.to_thread(self.take_over, gone)
        if publish:
            self._publish()  # type: ignore[attr-defined]  # the MCP source's
