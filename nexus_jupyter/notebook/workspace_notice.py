"""A notebook upgraded past the workspace change is told, once, that its old tools folder is
no longer loaded.

A kernel's workspace used to be its own folder (``notebooks/``); it is now the folder of the
nearest ``nex.yaml`` from there upward, else the root of the Jupyter server that started it
(:func:`~nexus_jupyter.core.config.paths.workspace_root`). So a ``notebooks/tools/dynamic``
full of tool files silently stopped loading in that kernel. :func:`warn_of_old_tools_folder`
says so, with the two ways to keep it, the first time a session registry is made in a kernel
whose folder has such files that the registry does not watch.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

__all__ = ["old_tools_folder_notice", "warn_of_old_tools_folder"]

_told = False  # once per kernel: a replaced session registry does not say it again


def warn_of_old_tools_folder(registry: Any) -> None:
    """Print :func:`old_tools_folder_notice` to the cell's stderr, once per kernel (the
    session hook ``%load_ext`` installs)."""
    global _told
    if _told:
        return
    notice = old_tools_folder_notice(registry)
    if notice is not None:
        _told = True
        print(notice, file=sys.stderr)


def old_tools_folder_notice(registry: Any, here: Path | None = None) -> str | None:
    """What to tell when ``<here>/tools/dynamic`` (``here``: the kernel's folder) holds tool
    files that ``registry`` (a session registry, built for its workspace) does not load;
    ``None`` when there are none, or they load, or ``here`` is the workspace itself (its
    ``nex.yaml`` chose another ``tools_dir:``; the old folder's workspace was the same)."""
    root = getattr(registry, "root", None)
    if root is None:
        return None  # not a workspace's registry: it never loaded a folder on its own
    folder = here if here is not None else Path.cwd()
    old = folder / "tools" / "dynamic"
    try:
        if folder.resolve() == Path(root).resolve():
            return None  # its folder is its workspace: nothing moved, tools_dir: is a choice
        files = sorted(p.name for p in old.glob("*.py")) if old.is_dir() else []
        if not files or old.resolve() in _watched(registry):
            return None
    except OSError:
        return None  # an unreadable folder: nothing to say about it
    from ..core.config.paths import resolve_tools_dir

    root = Path(root)
    current = resolve_tools_dir(root, getattr(registry.settings, "tools_dir", None))
    try:
        setting = old.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        setting = str(old.resolve())
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return (
        f"nexus_jupyter: the tool files in {old} ({shown}) are not loaded in this kernel. "
        "A kernel no longer works in its notebook's folder but in its workspace: the folder "
        "of the nearest nex.yaml from there upward, else the Jupyter server's root; here "
        f"{root}. So its tools folder is {current}, %tool export writes there, and built-in "
        f"file tools read relative paths from {root}.\n"
        f"To keep the old folder, put `tools_dir: {setting}` in {root / 'nex.yaml'} and "
        f"restart the kernel (and the Jupyter server, to serve them too), or move the files "
        f"into {current}."
    )


def _watched(registry: Any) -> set[Path]:
    from ..serve.kernel_workspace import watched_folders

    return {p.expanduser().resolve() for p in watched_folders(registry)}
