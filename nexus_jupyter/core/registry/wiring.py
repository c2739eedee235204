"""The seam between the core and the parts that know every source.

``Registry.default()`` needs the built-in tools, the tools folder, the MCP servers of
``nex.yaml``; ``Registry.watch(path)`` needs a folder source. Those live above the core
(``nexus_jupyter.app`` and ``nexus_jupyter.sources``), so the core asks an installed
:class:`Wiring` for them. The package root installs the application's wiring when
``nexus_jupyter`` is imported, which happens before any core module runs; a program that
embeds the core with other sources installs its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigError

if TYPE_CHECKING:
    from .registry import Registry
    from .source import ToolSource

__all__ = ["Wiring", "install_wiring", "installed_wiring"]


class Wiring(Protocol):
    """What the core needs from the application that assembles it."""

    def default_registry(self, cls: type[Registry], **options: Any) -> Registry:
        """A configured registry of class ``cls`` (see :meth:`Registry.default`)."""
        ...

    def folder_source(self, path: str | Path, **options: Any) -> ToolSource:
        """A source that loads and hot-reloads the tool files of ``path``."""
        ...


_wiring: Wiring | None = None


def install_wiring(wiring: Wiring) -> None:
    """Make ``wiring`` the one :meth:`Registry.default` and :meth:`Registry.watch` use."""
    global _wiring
    _wiring = wiring


def installed_wiring() -> Wiring:
    if _wiring is None:
        raise ConfigError(
            "No application wiring is installed, so Registry.default() and Registry.watch() "
            "cannot build sources; import nexus_jupyter (it installs the default wiring) or "
            "call nexus_jupyter.core.registry.wiring.install_wiring(...)."
        )
    return _wiring
