"""Where a workspace is, and where its watched tools folder is.

The tools folder is ``NEXUS_TOOLS_DIR``, else ``tools_dir`` of ``nex.yaml``, else
``tools/dynamic``, relative to the workspace root (:func:`resolve_tools_dir`).

The workspace root of a session (a kernel, an IPython shell) is :func:`workspace_root`: the
nearest folder, from the working folder upward, that holds a ``nex.yaml``; without one, the
root of the Jupyter server that started the kernel (it passes ``NEXUS_JUPYTER_SERVER_ROOT``
to its kernels), so a notebook in a subfolder exports where that server watches; without a
server, the working folder itself.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "DEFAULT_TOOLS_DIR",
    "SERVER_ROOT_ENV",
    "SERVER_TOOLS_ENV",
    "find_project_file",
    "resolve_tools_dir",
    "server_root",
    "server_tools_dirs",
    "tools_dir_problem",
    "workspace_root",
]

DEFAULT_TOOLS_DIR = "tools/dynamic"
#: Set by the Jupyter server extension in the kernels it starts: the server's root folder.
SERVER_ROOT_ENV = "NEXUS_JUPYTER_SERVER_ROOT"
#: Set likewise: the tools folders the server watches (``os.pathsep``-separated).
SERVER_TOOLS_ENV = "NEXUS_JUPYTER_SERVER_TOOLS"
_PROJECT_FILE = "nex.yaml"


def resolve_tools_dir(root: str | Path | None = None, configured: str | None = None) -> Path:
    """The tools folder: ``NEXUS_TOOLS_DIR``, else the configured one, else ``tools/dynamic``,
    relative to ``root`` (default: the current directory)."""
    base = Path(root) if root is not None else Path.cwd()
    chosen = os.environ.get("NEXUS_TOOLS_DIR") or configured or DEFAULT_TOOLS_DIR
    path = Path(chosen).expanduser()
    return path if path.is_absolute() else base / path


def tools_dir_problem(
    root: str | Path | None = None, configured: str | None = None
) -> tuple[str, bool, Path] | None:
    """Why no tool files load because the tools folder (:func:`resolve_tools_dir`) does not
    exist: ``(sentence, chosen, folder)``, ``chosen`` when ``NEXUS_TOOLS_DIR`` or nex.yaml's
    ``tools_dir`` names it (a broken setting, which hides the tools meant), else the default
    folder, not made yet. ``None`` when the folder is there."""
    folder = resolve_tools_dir(root, configured)
    if folder.is_dir():
        return None
    if os.environ.get("NEXUS_TOOLS_DIR"):
        said = (
            f"the tools folder {folder} (NEXUS_TOOLS_DIR) does not exist, so no tool files are "
            "loaded from it. Create it, or set NEXUS_TOOLS_DIR to your tools folder."
        )
        return said, True, folder
    if configured and Path(configured) != Path(DEFAULT_TOOLS_DIR):
        said = (
            f"the tools folder {folder} (tools_dir in nex.yaml) does not exist, so no tool "
            "files are loaded from it. Create it, or point tools_dir at your tools folder."
        )
        return said, True, folder
    said = (
        f"no tools folder yet: tool files saved in {folder} load as tools "
        "(`%tool export` in a notebook creates it)."
    )
    return said, False, folder


def find_project_file(start: str | Path, stop: str | Path | None = None) -> Path | None:
    """The nearest ``nex.yaml`` in ``start`` or a folder above it, or ``None``. The search
    ends at ``stop`` (included) when ``start`` is inside it, else at the filesystem root.
    """
    here = Path(start).expanduser().resolve()
    end = Path(stop).expanduser().resolve() if stop is not None else None
    if end is not None and not here.is_relative_to(end):
        end = None  # a start outside ``stop``: look up to the root
    for folder in (here, *here.parents):
        candidate = folder / _PROJECT_FILE
        if candidate.is_file():
            return candidate
        if folder == end:
            break
    return None


def server_root() -> Path | None:
    """The root of the Jupyter server that started this kernel, or ``None`` when no
    nexus-enabled Jupyter server started it."""
    chosen = os.environ.get(SERVER_ROOT_ENV)
    return Path(chosen).expanduser() if chosen else None


def workspace_root(start: str | Path | None = None) -> Path:
    """The root of the workspace a session in ``start`` (default: the current folder) works
    in: the folder of the nearest ``nex.yaml`` from ``start`` upward (not above the Jupyter
    server's root when ``start`` is inside it), else the root of the Jupyter server that
    started this kernel (``NEXUS_JUPYTER_SERVER_ROOT``), else ``start``."""
    here = Path(start) if start is not None else Path.cwd()
    server = server_root()
    found = find_project_file(here, server)
    if found is not None:
        return found.parent
    return server if server is not None else here


def server_tools_dirs() -> list[Path] | None:
    """The tools folders the Jupyter server that started this kernel watches, or ``None``
    when no nexus-enabled Jupyter server started it (a terminal IPython, a script)."""
    chosen = os.environ.get(SERVER_TOOLS_ENV)
    if chosen is None:
        return None
    return [Path(p) for p in chosen.split(os.pathsep) if p]
