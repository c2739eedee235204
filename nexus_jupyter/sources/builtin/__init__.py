"""The built-in tools: files, grep, bash, tool_search (and create_dynamic_tool).

=====================  ======================  =========================================
tool                   permission              what
=====================  ======================  =========================================
read, ls, glob, grep   read_only               look at files of the workspace
tool_search            read_only               find tools, load deferred schemas
write, edit            workspace_write         change files of the workspace
create_dynamic_tool    workspace_write         write a tool file into the tools folder
bash                   danger_full_access      run a shell command (asks first)
=====================  ======================  =========================================

Every path is confined to the workspace root (see :mod:`.paths`).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ...core.tools.spec import SourceKind
from ...core.tools.tool import Tool
from .files import file_tools
from .grep import grep_tool
from .paths import Workspace
from .shell import bash_tool
from .tool_search import tool_search_tool

__all__ = ["BuiltinSource", "Workspace", "builtin_tools"]

_DYNAMIC = "nexus_jupyter.sources.builtin.dynamic"


def builtin_tools(root: str | Path, registry: Any) -> list[Tool]:
    """Every built-in tool for workspace ``root`` (``registry`` serves ``tool_search``)."""
    ws = Workspace(root)
    tools = [*file_tools(ws, registry), grep_tool(ws), bash_tool(ws), tool_search_tool(registry)]
    # written by a sibling module that may not be installed in every build
    if importlib.util.find_spec(_DYNAMIC) is not None:
        module = importlib.import_module(_DYNAMIC)
        tools.append(module.create_dynamic_tool_tool(root, registry))
    return tools


class BuiltinSource:
    """Source ``builtin`` (kind ``builtin``, the lowest precedence): the built-in tools."""

    kind: SourceKind = "builtin"

    def __init__(self, root: str | Path | None = None, registry: Any = None) -> None:
        self.name = "builtin"
        self.namespace: str | None = None
        self.root = Path(root) if root is not None else Path.cwd()
        self.registry = registry
        self._tools: list[Tool] | None = None

    def load(self) -> Iterable[Tool]:
        if self._tools is None:
            self._tools = builtin_tools(self.root, self.registry)
        return list(self._tools)

    def __repr__(self) -> str:
        return f"BuiltinSource(root={str(self.root)!r})"
