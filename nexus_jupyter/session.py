"""The process-wide session registry used by the magics (``nexus_jupyter.registry()``)."""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["reset_session_registry", "session_registry"]

_lock = threading.Lock()
_registry: Any = None


def session_registry() -> Any:
    """The session's registry: ``Registry.default()`` of the current directory, made once."""
    global _registry
    if _registry is None:
        with _lock:
            if _registry is None:
                from .core.registry.registry import Registry

                _registry = Registry.default()
                _registry.warm_search()
    return _registry


def reset_session_registry(new: Any = None) -> None:
    """Close the session registry and replace it (tests, ``%reload_ext``)."""
    global _registry
    with _lock:
        old, _registry = _registry, new
    if old is not None and old is not new:
        old.close()
