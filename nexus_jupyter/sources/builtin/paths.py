"""Confinement: every path a built-in tool touches must stay inside the workspace root.

>>> ws = Workspace("/tmp")
>>> ws.resolve("a/../b.txt") == Path("/tmp").resolve() / "b.txt"
True

A path is resolved to its real location first (``..`` collapsed, every symlink followed,
including a dangling one), then checked against the real root, so ``..``, absolute paths,
symlinks pointing out and their combinations cannot escape. NUL bytes, ``~`` (never
expanded) and non-strings are refused. Unicode look-alikes (fullwidth dots U+FF0E, the division slash U+2215) are ordinary
characters to the file system: they name files inside the root, so they cannot escape
either. Files are opened with ``O_NOFOLLOW`` so a symlink swapped in after the check is
not followed.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...core.errors import PermissionDenied

__all__ = ["SKIP_DIRS", "Workspace"]

# Folders no search should wander into: version control, caches, environments and Jupyter's
# autosaved copies (.ipynb_checkpoints), which would list every notebook twice.
SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "node_modules",
    "__pycache__",
    ".venv",
    ".mypy_cache",
    ".ipynb_checkpoints",
}


class Workspace:
    """The folder built-in tools may read and write (real path of ``root``)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(os.path.realpath(Path(root).expanduser()))

    def resolve(self, path: str | os.PathLike[str], *, what: str = "path") -> Path:
        """The real absolute path of ``path`` (relative to the root), or
        :class:`PermissionDenied` when it is outside the root."""
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):
            raise PermissionDenied(f"The {what} must be a string, got {path!r}.")
        if "\x00" in path:
            raise PermissionDenied(f"The {what} {path!r} contains a NUL byte; remove it.")
        if path.startswith("~"):
            raise PermissionDenied(
                f"The {what} {path!r} starts with '~', which is not expanded here; use a path "
                f"relative to the workspace {str(self.root)!r}."
            )
        raw = Path(path) if path else Path(".")
        candidate = raw if raw.is_absolute() else self.root / raw
        real = Path(os.path.realpath(candidate))
        if not self.contains(real):
            raise PermissionDenied(
                f"The {what} {path!r} resolves to {str(real)!r}, outside the workspace "
                f"{str(self.root)!r}; tools may only touch files under it."
            )
        return real

    def contains(self, real: Path) -> bool:
        """Whether the already-resolved ``real`` is the root or under it."""
        return real == self.root or self.root in real.parents

    def relative(self, real: Path) -> str:
        """``real`` relative to the root, for answers (``"."`` for the root)."""
        rel = os.path.relpath(real, self.root)
        return "." if rel == "." else rel

    def inside(self, path: Path) -> bool:
        """Whether ``path`` (maybe a symlink) really lies inside the root."""
        return self.contains(Path(os.path.realpath(path)))

    # -- safe file access -----------------------------------------------------------------

    def read_bytes(self, real: Path) -> bytes:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            return fh.read()

    def write_bytes(self, real: Path, data: bytes) -> None:
        real.parent.mkdir(parents=True, exist_ok=True)
        # the parent chain may have changed while creating it: check it again
        if not self.inside(real.parent):
            raise PermissionDenied(f"The folder of {str(real)!r} moved outside the workspace.")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(real, flags, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"
