"""Rich display of the core's objects in IPython: HTML in notebooks, text in terminals.

The core stays free of display code; this module registers renderers with the shell's
formatters by class *name*, so nothing is imported until an object is actually shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["html_of", "install_display_formatters", "text_of"]


def _tool_html(tool: Any) -> str:
    from .catalog import tool_html

    return tool_html(tool)


def _tool_text(tool: Any) -> str:
    from .catalog import tool_text

    return tool_text(tool)


def _result_html(result: Any) -> str:
    from .results import result_html

    return result_html(result.redacted())


def _result_text(result: Any) -> str:
    from .results import result_text

    return result_text(result.redacted())


def _registry_html(registry: Any) -> str:
    from .catalog import registry_html

    return registry_html(registry.entries(), registry.sources())


def _registry_text(registry: Any) -> str:
    from .catalog import registry_text

    return registry_text(registry.entries(), registry.sources())


#: (module, class name, to HTML, to text) for every core type with a rich display.
_RENDERERS: tuple[tuple[str, str, Callable[[Any], str], Callable[[Any], str]], ...] = (
    ("nexus_jupyter.core.tools.tool", "Tool", _tool_html, _tool_text),
    ("nexus_jupyter.core.tools.result", "ToolResult", _result_html, _result_text),
    ("nexus_jupyter.core.registry.registry", "Registry", _registry_html, _registry_text),
)


def html_of(obj: Any) -> str | None:
    """The HTML a notebook shows for ``obj`` (``None`` when it has no rich display)."""
    for module, name, to_html, _ in _RENDERERS:
        if _is_instance(obj, module, name):
            return to_html(obj)
    return None


def text_of(obj: Any) -> str | None:
    """The text a terminal shows for ``obj`` (``None`` when it has no rich display)."""
    for module, name, _, to_text in _RENDERERS:
        if _is_instance(obj, module, name):
            return to_text(obj)
    return None


def _is_instance(obj: Any, module: str, name: str) -> bool:
    return any(c.__module__ == module and c.__name__ == name for c in type(obj).__mro__)


def install_display_formatters(shell: Any) -> None:
    """Register the renderers with ``shell``'s HTML and plain-text formatters (idempotent)."""
    formatters = shell.display_formatter.formatters
    html, plain = formatters["text/html"], formatters["text/plain"]
    for module, name, to_html, to_text in _RENDERERS:
        html.for_type_by_name(module, name, to_html)
        plain.for_type_by_name(module, name, _pretty(to_text))


def _pretty(to_text: Callable[[Any], str]) -> Callable[[Any, Any, bool], None]:
    def printer(obj: Any, p: Any, cycle: bool) -> None:
        p.text(to_text(obj))

    return printer
