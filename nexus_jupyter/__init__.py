"""nexus_jupyter: the notebook as the workbench for AI-agent tools.

>>> from nexus_jupyter import Registry, tool
>>> @tool
... def add(a: int, b: int) -> int:
...     "Add two integers."
...     return a + b
>>> reg = Registry()
>>> _ = reg.add(add)
>>> reg.call_sync("add", {"a": 1, "b": 2}).structured
3

In IPython/Jupyter: ``%load_ext nexus_jupyter``; then ``%tool?`` explains the magics.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from .core.errors import (
    ApprovalRequired,
    ConfigError,
    ExportError,
    FieldError,
    MissingCredential,
    NexusError,
    PermissionDenied,
    SourceError,
    ToolDefinitionError,
    ToolNotFound,
    ToolUnavailable,
    ToolValidationError,
)
from .core.tools.decorator import tool

if TYPE_CHECKING:
    from .core.evals.retrieval import evaluate
    from .core.registry.registry import Registry
    from .core.registry.state import RegistryChanged, ToolEntry
    from .core.tools.channel import AnswerMismatch, CallerUnavailable, Elicitation, Sampled
    from .core.tools.content import Audio, Content, EmbeddedResource, Image, ResourceLink
    from .core.tools.context import Caller, CancellationToken, RequestInfo, ToolContext
    from .core.tools.offers import prompt, resource
    from .core.tools.result import ToolResult
    from .core.tools.spec import ToolSpec
    from .core.tools.tool import Tool

# Imported on first use (PEP 562) so that `import nexus_jupyter` and `%load_ext` stay fast:
# the registry pulls in pydantic, which a kernel may never need before the first tool.
_LAZY = {
    "CancellationToken": ".core.tools.context",
    "Caller": ".core.tools.context",
    "RequestInfo": ".core.tools.context",
    "ToolContext": ".core.tools.context",
    "Registry": ".core.registry.registry",
    "Audio": ".core.tools.content",
    "AnswerMismatch": ".core.tools.channel",
    "CallerUnavailable": ".core.tools.channel",
    "Content": ".core.tools.content",
    "Elicitation": ".core.tools.channel",
    "EmbeddedResource": ".core.tools.content",
    "Image": ".core.tools.content",
    "ResourceLink": ".core.tools.content",
    "Sampled": ".core.tools.channel",
    "prompt": ".core.tools.offers",
    "resource": ".core.tools.offers",
    "ToolResult": ".core.tools.result",
    "ToolSpec": ".core.tools.spec",
    "RegistryChanged": ".core.registry.state",
    "ToolEntry": ".core.registry.state",
    "Tool": ".core.tools.tool",
    "evaluate": ".core.evals.retrieval",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nexus_jupyter' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    "AnswerMismatch",
    "ApprovalRequired",
    "Audio",
    "Caller",
    "CallerUnavailable",
    "CancellationToken",
    "ConfigError",
    "Content",
    "Elicitation",
    "EmbeddedResource",
    "ExportError",
    "FieldError",
    "Image",
    "MissingCredential",
    "NexusError",
    "PermissionDenied",
    "Registry",
    "RegistryChanged",
    "RequestInfo",
    "ResourceLink",
    "Sampled",
    "SourceError",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolEntry",
    "ToolNotFound",
    "ToolResult",
    "ToolSpec",
    "ToolUnavailable",
    "ToolValidationError",
    "__version__",
    "evaluate",
    "load_ipython_extension",
    "prompt",
    "registry",
    "resource",
    "tool",
    "unload_ipython_extension",
]


def registry() -> Registry:
    """The session's registry (what the magics use); created on first use."""
    from .session import session_registry

    return session_registry()


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext nexus_jupyter``."""
    from .notebook.extension import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook.extension import unload

    unload(ipython)


class _LazyAppWiring:
    """Installs :class:`nexus_jupyter.app.AppWiring` without importing it until first use."""

    def default_registry(self, cls: Any, **options: Any) -> Any:
        from .app import AppWiring

        return AppWiring().default_registry(cls, **options)

    def folder_source(self, path: Any, **options: Any) -> Any:
        from .app import AppWiring

        return AppWiring().folder_source(path, **options)


def _install_wiring() -> None:
    from .core.registry.wiring import install_wiring

    install_wiring(_LazyAppWiring())


def _install_display() -> None:
    """Show tools, results and registries richly in a running IPython (even without
    ``%load_ext``); IPython itself is never imported here."""
    ipython_module = sys.modules.get("IPython")
    shell = ipython_module.get_ipython() if ipython_module is not None else None
    if shell is not None and hasattr(shell, "display_formatter"):
        from .render.display import install_display_formatters

        install_display_formatters(shell)


_install_wiring()
_install_display()


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "nexus_jupyter.serve.jupyter"}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "nexus-jupyter"}]
