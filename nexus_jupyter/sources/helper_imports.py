"""Shared helper modules beside tool files.

A tool file may import a module that sits beside it in its folder: a sibling ``helpers.py``
(``import helpers``), a package ``_shared/`` (``from _shared import text``, with or without
an ``__init__.py``). While a tool file's body runs, :func:`helper_scope` lets the import
system find those names in the file's folder; each load gets fresh helper modules (they are
taken out of ``sys.modules`` afterwards, as the tool file's own module is), so an edited
helper is picked up by the next load, and the scope records which helper files were read so
the directory source can reload every tool file that imports an edited helper.

Only imports made while the file loads (module level) are served; a name already imported
elsewhere in the process (``json``) is never shadowed by a file in the folder.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["HelperScope", "helper_scope"]


class HelperScope:
    """The helper imports of one tool file's load."""

    def __init__(self, folder: Path, tool_file: Path) -> None:
        self.folder = folder
        self.tool_file = tool_file
        self.roots: set[str] = set()  # top-level helper names imported
        self.files: set[Path] = set()  # helper files read


class _HelperFinder(importlib.abc.MetaPathFinder):
    """Finds top-level helper modules in the folder of the tool file loading on this thread."""

    def __init__(self) -> None:
        self.scopes: dict[int, HelperScope] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        scope = self.scopes.get(threading.get_ident())
        if scope is None or path is not None or "." in fullname:
            return None  # submodules of a helper package are found through its __path__
        module_file = scope.folder / f"{fullname}.py"
        package = scope.folder / fullname
        spec: importlib.machinery.ModuleSpec | None = None
        if module_file.is_file() and module_file != scope.tool_file:
            spec = importlib.util.spec_from_file_location(fullname, module_file)
        elif (package / "__init__.py").is_file():
            spec = importlib.util.spec_from_file_location(
                fullname, package / "__init__.py", submodule_search_locations=[str(package)]
            )
        elif package.is_dir() and not package.name.startswith((".", "__")):
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [str(package)]
        if spec is not None:
            scope.roots.add(fullname)
        return spec


_FINDER = _HelperFinder()
_install_lock = threading.Lock()


def _ensure_installed() -> None:
    with _install_lock:
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)


@contextlib.contextmanager
def helper_scope(tool_file: Path) -> Iterator[HelperScope]:
    """Serve helper imports from ``tool_file``'s folder on this thread while the block runs;
    afterwards the helpers leave ``sys.modules`` and ``scope.files`` names the files read."""
    scope = HelperScope(tool_file.parent, tool_file)
    if not scope.folder.is_dir():
        yield scope
        return
    _ensure_installed()
    ident = threading.get_ident()
    _FINDER.scopes[ident] = scope
    try:
        yield scope
    finally:
        _FINDER.scopes.pop(ident, None)
        for name in [n for n in list(sys.modules) if n.split(".", 1)[0] in scope.roots]:
            module: Any = sys.modules.pop(name, None)
            origin = getattr(getattr(module, "__spec__", None), "origin", None)
            if origin and origin not in ("namespace", "built-in"):
                scope.files.add(Path(origin))
