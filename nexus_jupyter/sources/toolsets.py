"""Toolsets from Python modules and installed packages (kind ``config``).

A toolset named in ``nex.yaml`` with ``module: "package.module:attribute"`` loads that
attribute (a list or dict of functions, Tools or ecosystem tools, one ecosystem toolset, or
a function returning any of these); ``module: "package.module"`` takes the module's tools.
Installed packages advertise toolsets in the entry-point group ``nexus_jupyter.toolsets``
(the entry point's name is the toolset's name, its value ``module:attribute``)::

    [project.entry-points."nexus_jupyter.toolsets"]
    research = "my_pkg.tools:research_tools"

Both are external: their tools ask for approval unless the toolset's approval map says
otherwise (see :mod:`nexus_jupyter.core.toolsets.shape`). A toolset that fails to import
shows its error as the source's status; the registry keeps going.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
from collections.abc import Iterable, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ..core.errors import SourceError
from ..core.tools.spec import SourceKind
from ..core.tools.tool import Tool
from ..core.toolsets.settings import BUILTIN_TOOLSETS, ToolsetSettings
from ..core.toolsets.shape import shape_toolset

__all__ = ["ENTRY_POINT_GROUP", "ToolsetSource", "configured_toolsets", "load_object"]

ENTRY_POINT_GROUP = "nexus_jupyter.toolsets"


def load_object(reference: str, search_path: Path | None = None) -> Any:
    """The object ``"package.module:attribute"`` (or the module ``"package.module"``)
    names; a function taking no arguments is called to get its tools. ``search_path`` (the
    project's folder) comes first on ``sys.path``, so a project's own module imports."""
    from .python_ref import make_importable

    make_importable(search_path)
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise SourceError(
            f"Cannot import {module_name!r} for toolset module {reference!r}: {exc}. "
            "Install the package or fix `module:` in nex.yaml."
        ) from exc
    if not attribute:
        return module
    obj: Any = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise SourceError(
                f"Module {module_name!r} has no {attribute!r} (toolset module {reference!r})."
            )
        obj = getattr(obj, part)
    if inspect.isfunction(obj) and not _is_tool_function(obj) and _takes_no_arguments(obj):
        obj = obj()
    return obj


def _is_tool_function(fn: Any) -> bool:
    from ..core.tools.decorator import get_tool_meta

    return get_tool_meta(fn) is not None


def _takes_no_arguments(fn: Any) -> bool:
    try:
        return not inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class ToolsetSource:
    """Source ``toolset:<name>``: the tools of one external toolset, shaped by its settings."""

    kind: SourceKind = "config"

    def __init__(
        self,
        name: str,
        reference: str,
        settings: ToolsetSettings | None = None,
        *,
        root: Path | None = None,
    ):
        self.name = f"toolset:{name}"
        self.toolset = name
        self.reference = reference
        self.settings = settings or ToolsetSettings()
        self.root = root  # the project folder: its own modules import
        self.namespace: str | None = None

    def load(self) -> Iterable[Tool]:
        from .adapters import tools_from

        tools = tools_from(load_object(self.reference, self.root), origin=self.reference)
        stamped = [t.with_spec(source=self.name, source_kind="config") for t in tools]
        return shape_toolset(stamped, self.toolset, self.settings, external=True)

    def __repr__(self) -> str:
        return f"ToolsetSource({self.toolset!r}, {self.reference!r})"


def advertised_toolsets() -> dict[str, str]:
    """Toolsets installed packages advertise: name -> ``module:attribute``."""
    return dict(_scan_entry_points(tuple(sys.path)))


@functools.lru_cache(maxsize=4)
def _scan_entry_points(search_path: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    # reading every installed distribution's metadata costs ~30 ms: once per import path
    return tuple((ep.name, ep.value) for ep in entry_points(group=ENTRY_POINT_GROUP))


def configured_toolsets(
    settings: Mapping[str, ToolsetSettings], root: Path | None = None
) -> list[ToolsetSource]:
    """A source per external toolset: those nex.yaml names with a ``module`` and those
    installed packages advertise (nex.yaml's entry of the same name configures them).
    ``root`` is the project's folder: a ``module:`` of the project imports from there."""
    sources: dict[str, ToolsetSource] = {}
    for name, reference in advertised_toolsets().items():
        if name not in BUILTIN_TOOLSETS:
            sources[name] = ToolsetSource(name, reference, settings.get(name))
    for name, entry in settings.items():
        if entry.module:
            sources[name] = ToolsetSource(name, entry.module, entry, root=root)
    return [s for s in sources.values() if s.settings.enabled]
