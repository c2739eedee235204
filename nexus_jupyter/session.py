"""The process-wide session registry used by the magics (``nexus_jupyter.registry()``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["defer_search_warm_up", "reset_session_registry", "session_registry"]

_lock = threading.Lock()
_registry: Any = None
_holds = 0  # warm-ups held back (a kernel link starting)
_warm_pending = False  # the session registry was made while held: warm it on release


def session_registry() -> Any:
    """The session's registry: ``Registry.default()`` of the current directory, made once.
    Its search index warms up in the background, unless :func:`defer_search_warm_up`
    holds that back."""
    global _registry, _warm_pending
    if _registry is None:
        with _lock:
            if _registry is None:
                from .core.registry.registry import Registry

                _registry = Registry.default()
                if _holds:
                    _warm_pending = True
                else:
                    _registry.warm_search()
    return _registry


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
    with _lock:
        old, _registry = _registry, new
        _warm_pending = False
    if old is not None and old is not new:
        old.close()
