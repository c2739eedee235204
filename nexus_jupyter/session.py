"""The process-wide session registry used by the magics (``nexus_jupyter.registry()``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = [
    "defer_search_warm_up",
    "reset_session_registry",
    "session_registry",
    "when_session_registry_made",
]

_lock = threading.Lock()
_registry: Any = None
_holds = 0  # warm-ups held back (a kernel link starting)
_warm_pending = False  # the session registry was made while held: warm it on release
_when_made: list[Callable[[Any], Any]] = []  # told of each session registry (the notebook)


def session_registry() -> Any:
    """The session's registry: ``Registry.default()`` of the session's workspace, made once:
    the folder of the nearest ``nex.yaml`` from the current folder upward, else the root of
    the Jupyter server that started this kernel, else the current folder (see
    :func:`~nexus_jupyter.core.config.paths.workspace_root`). So a notebook in a subfolder
    exports to the tools folder its Jupyter server watches. Its search index warms up in the
    background, unless :func:`defer_search_warm_up` holds that back."""
    global _registry, _warm_pending
    if _registry is None:
        with _lock:
            if _registry is None:
                from .core.config.paths import workspace_root
                from .core.registry.registry import Registry

                _registry = Registry.default(root=workspace_root())
                _tell_made(_registry)
                if _holds:
                    _warm_pending = True
                else:
                    _registry.warm_search()
    return _registry


def when_session_registry_made(callback: Callable[[Any], Any]) -> None:
    """Call ``callback(registry)`` with the session registry as soon as it is made (at once
    if it is already), and with each one that replaces it; once per callback. ``%load_ext``
    uses it to record every call of the session registry in the notebook's history."""
    with _lock:
        if callback in _when_made:
            return
        _when_made.append(callback)
        current = _registry
    if current is not None:
        callback(current)


def _tell_made(registry: Any) -> None:
    for callback in list(_when_made):
        try:
            callback(registry)
        except Exception:  # the registry works without what the callback adds: say so
            import logging

            logging.getLogger(__name__).exception("nexus_jupyter: a session hook failed")


def defer_search_warm_up() -> Callable[[], None]:
    """Hold back the session registry's search warm-up (it embeds every tool, seconds of
    CPU) until the returned function is called: a kernel's link to the Jupyter server
    starts first, so the notebook's tools reach the server sooner. Calling it twice is
    harmless."""
    global _holds
    with _lock:
        _holds += 1
    released = False

    def release() -> None:
        global _holds, _warm_pending
        nonlocal released
        with _lock:
            if released:
                return
            released = True
            _holds -= 1
            warm = _registry if _warm_pending and not _holds else None
            if warm is not None:
                _warm_pending = False
        if warm is not None:
            warm.warm_search()

    return release


def reset_session_registry(new: Any = None) -> None:
    """Close the session registry and replace it (tests, ``%reload_ext``)."""
    global _registry, _warm_pending
    if new is not None:
        _tell_made(new)
    with _lock:
        old, _registry = _registry, new
        _warm_pending = False
    if old is not None and old is not new:
        old.close()
