"""The built-in tools: files, grep, bash, tool_search (and create_dynamic_tool).

=====================  ======================  =========================================
tool                   permission              what
=====================  ======================  =========================================
read, ls, glob, grep   read_only               look at files of the workspace
tool_search            read_only               find tools, load deferred schemas
write, edit            workspace_write         change files of the workspace
create_dynamic_tool    workspace_write         write a tool file into the tools folder
bash                   danger_full_access      run a shell command (asks first)
web_fetch, web_search  read_only               fetch a page as markdown, search the web
=====================  ======================  =========================================

Every path is confined to the workspace root (see :mod:`.paths`). The tools come in the
toolsets ``files``, ``shell``, ``web`` and ``meta``, which ``toolsets:`` in nex.yaml can
turn off, give approval maps or a permission ceiling (see :mod:`nexus_jupyter.core.toolsets`).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...core.errors import SourceError
from ...core.registry.publisher import SourcePublisher
from ...core.registry.state import RegistryChanged
from ...core.tools.spec import SourceKind
from ...core.tools.tool import Tool
from ...core.toolsets.settings import BUILTIN_TOOLSETS, ToolsetSettings
from ...core.toolsets.shape import shape_toolset
from .files import file_tools
from .grep import grep_tool
from .paths import Workspace
from .shell import bash_tool
from .tool_search import tool_search_tool
from .web import web_tools, web_unavailable

__all__ = ["BuiltinSource", "Workspace", "builtin_tools", "builtin_unavailable"]

_DYNAMIC = "nexus_jupyter.sources.builtin.dynamic"


#: The MCP hints of each built-in, as it behaves (``readOnlyHint`` comes from its declared
#: permission): ``write`` replaces a file (the same call twice leaves the same file), ``edit``
#: replaces text (a second call finds the old text gone), ``create_dynamic_tool`` may
#: overwrite a tool file, and the web tools and ``bash`` reach the world outside.
_HINTS: dict[str, dict[str, bool]] = {
    **{n: {"openWorldHint": False} for n in ("read", "ls", "glob", "grep", "tool_search")},
    "write": {"destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    "edit": {"destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
    "create_dynamic_tool": {"destructiveHint": True, "idempotentHint": False},
    "bash": {"destructiveHint": True, "idempotentHint": False, "openWorldHint": True},
    "web_fetch": {"openWorldHint": True},
    "web_search": {"openWorldHint": True},
}


def builtin_tools(root: str | Path, registry: Any) -> list[Tool]:
    """Every built-in tool for workspace ``root`` (``registry`` serves ``tool_search``)."""
    ws = Workspace(root)
    tools = [*file_tools(ws, registry), grep_tool(ws), bash_tool(ws), tool_search_tool(registry)]
    tools += web_tools(_toolset_settings(registry).get("web", ToolsetSettings()).options)
    # written by a sibling module that may not be installed in every build
    if importlib.util.find_spec(_DYNAMIC) is not None:
        module = importlib.import_module(_DYNAMIC)
        tools.append(module.create_dynamic_tool_tool(root, registry))
    return [
        t.with_spec(annotations={**_HINTS[t.name], **t.spec.annotations}) if t.name in _HINTS else t
        for t in tools
    ]


def builtin_unavailable(registry: Any) -> dict[str, str]:
    """The built-ins that cannot run as nex.yaml configures them (their names before a
    toolset's prefix), each with the reason: ``web_search`` without a search provider."""
    return web_unavailable(_toolset_settings(registry).get("web", ToolsetSettings()).options)


class BuiltinSource:
    """Source ``builtin`` (kind ``builtin``, the lowest precedence): the built-in tools,
    published with the ones that cannot run marked unavailable (:func:`builtin_unavailable`),
    so that listings, ``check`` and a call say why before anything runs."""

    kind: SourceKind = "builtin"

    def __init__(self, root: str | Path | None = None, registry: Any = None) -> None:
        self.name = "builtin"
        self.namespace: str | None = None
        self.root = Path(root) if root is not None else Path.cwd()
        self.registry = registry
        self._tools: list[Tool] | None = None
        self._publisher: SourcePublisher | None = None

    def load(self) -> Iterable[Tool]:
        if self._tools is None:
            self._tools = _as_toolsets(
                builtin_tools(self.root, self.registry), _toolset_settings(self.registry)
            )
        return list(self._tools)

    def attach(self, publisher: SourcePublisher) -> None:
        self._publisher = publisher

    def refresh(self) -> RegistryChanged:
        """Publish the set with the unavailable built-ins and their reasons (the registry
        calls this instead of :meth:`load` once :meth:`attach` gave a publisher)."""
        publisher = self._publisher
        if publisher is None:
            raise SourceError("BuiltinSource.refresh() needs the publisher that attach() gives.")
        try:
            tools = list(self.load())
        except Exception as exc:  # as the registry does for load(): keep the last good set
            publisher.set_status(error=f"{type(exc).__name__}: {exc}")
            return RegistryChanged(sources=(self.name,))
        settings = _toolset_settings(self.registry)
        prefixed = {
            name: settings.get(toolset, ToolsetSettings()).prefix + name
            for toolset, names in BUILTIN_TOOLSETS.items()
            for name in names
        }
        present = {t.spec.name for t in tools}
        unavailable = {
            prefixed.get(name, name): reason
            for name, reason in builtin_unavailable(self.registry).items()
            if prefixed.get(name, name) in present
        }
        return publisher.replace(tools, unavailable=unavailable)

    def __repr__(self) -> str:
        return f"BuiltinSource(root={str(self.root)!r})"


def _toolset_settings(registry: Any) -> dict[str, ToolsetSettings]:
    settings = getattr(registry, "settings", None)
    return dict(getattr(settings, "toolsets", None) or {})


def _as_toolsets(tools: list[Tool], settings: dict[str, ToolsetSettings]) -> list[Tool]:
    """The built-ins grouped into their toolsets and shaped by nex.yaml's ``toolsets:``."""
    by_name = {t.spec.name: t for t in tools}
    out: list[Tool] = []
    for toolset, names in BUILTIN_TOOLSETS.items():
        members = [by_name.pop(n) for n in names if n in by_name]
        out += shape_toolset(
            members, toolset, settings.get(toolset, ToolsetSettings()), external=False
        )
    return out + list(by_name.values())
