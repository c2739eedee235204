"""Writing tool files: name checks, the export stamp, atomic writes, hand-over to the folder.

Export (``%tool export``), ``create_dynamic_tool`` and rollback all write through
:func:`write_tool_file`, so the same rules hold everywhere:

- the name is letters, digits, ``_`` and ``-`` (first a letter or ``_``), at most 64
  characters, so the file always lands directly in the tools folder;
- the write is atomic (a hidden ``.tmp`` file in the same folder, then ``os.replace``): a
  watcher sees the old file or the new one, never half of it;
- a file that nexus did not write, or that was edited since, is only overwritten with
  ``force=True``. Files nexus writes start with a stamp line
  ``# nexus-export: sha256=<hash of the rest>``, which tells both apart;
- every written version is kept in the version store (:mod:`.versions`).
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.errors import ExportError
from .loader import content_hash

__all__ = [
    "STAMP",
    "atomic_write",
    "default_tools_dir",
    "directory_source_for",
    "exported_from",
    "hand_over",
    "new_file_mode",
    "stamp_state",
    "stamp_text",
    "validate_file_name",
    "write_tool_file",
]

log = logging.getLogger(__name__)
STAMP = "# nexus-export:"
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def new_file_mode() -> int:
    """The mode an ordinary new file gets here (``0o666`` less the umask): what the tool
    files, and the case files beside them, are created with."""
    return 0o666 & ~_current_umask()


def _current_umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux): setting it to
    read it would, for a moment, affect files other threads of a kernel create."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    previous = os.umask(0o022)
    os.umask(previous)
    return previous


_STAMP_RE = re.compile(r"^# nexus-export: sha256=([0-9a-f]{16})\s*$")


def validate_file_name(name: str) -> str:
    """Check a tool file name (without ``.py``); raises :class:`ExportError`."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ExportError(
            f"Invalid tool file name {name!r}: use letters, digits, '_' and '-', start with a "
            "letter or '_', at most 64 characters (it becomes <tools dir>/<name>.py)."
        )
    return name


# The first header line `%tool export` writes (see nexus_jupyter.notebook.export).
_EXPORTED_RE = re.compile(r"^# Tool .+, exported by nexus_jupyter from notebook (['\"])(.+?)\1 on ")


def exported_from(text: str | None) -> str | None:
    """The notebook a tool file was exported from (its name, as the export header gives
    it), or ``None`` for a file nobody exported.

    >>> exported_from("# Tool 'add', exported by nexus_jupyter from notebook 'demo.ipynb' on x")
    'demo.ipynb'
    """
    if not text:
        return None
    match = _EXPORTED_RE.match(text[:400])
    return match.group(2) if match else None


def stamp_text(body: str, *, header: str) -> str:
    """``header`` lines (each made a comment) + the stamp line + ``body``."""
    lines = [f"# {line}".rstrip() for line in header.strip().splitlines()]
    digest = content_hash(body)[:16]
    return "\n".join([*lines, f"{STAMP} sha256={digest}", body.lstrip("\n")])


def stamp_state(text: str) -> str:
    """``"ours"`` (written by nexus, unchanged since), ``"edited"`` (written by nexus, edited
    since) or ``"foreign"`` (no stamp)."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines[:12]):
        match = _STAMP_RE.match(line)
        if match:
            body = "".join(lines[i + 1 :])
            return "ours" if content_hash(body.lstrip("\n"))[:16] == match.group(1) else "edited"
    return "foreign"


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a hidden temporary file and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, new_file_mode())  # mkstemp makes 0600; a tool file is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def target_path(tools_dir: str | Path, name: str) -> Path:
    """``<tools_dir>/<name>.py`` after checking that it stays inside ``tools_dir``."""
    validate_file_name(name)
    folder = Path(tools_dir).expanduser().resolve()
    path = folder / f"{name}.py"
    if path.parent != folder:  # the name check makes this impossible; keep the guarantee local
        raise ExportError(f"Refusing to write {path} outside the tools folder {folder}.")
    return path


def write_tool_file(
    tools_dir: str | Path, name: str, text: str, *, force: bool = False, event: str = "export"
) -> Path:
    """Write ``text`` as ``<tools_dir>/<name>.py`` atomically and record the version.

    Raises :class:`ExportError` when the file exists and was not written by nexus (or was
    edited since) and ``force`` is false.
    """
    path = target_path(tools_dir, name)
    if path.exists() and not force:
        try:
            state = stamp_state(path.read_text(encoding="utf-8", errors="replace"))
        except OSError as exc:
            raise ExportError(f"Cannot read the existing {path}: {exc}.") from None
        if state == "foreign":
            raise ExportError(
                f"{path} exists and was not written by export; overwrite it with --force "
                "(force=True) or choose another name."
            )
        if state == "edited":
            raise ExportError(
                f"{path} was edited since it was exported; overwrite the edits with --force "
                f"(force=True), or keep them (`%tool versions {name}` lists every version)."
            )
    from .versions import VersionStore

    # Recorded before the write, so the history says "export" even when a watcher reloads
    # the new file (and records it as a "load") before this function returns.
    try:
        VersionStore(path.parent).record(path, text, event=event)
    except OSError as exc:  # history is a convenience: never fail a write over it
        log.warning("could not record a version of %s: %s", path, exc)
    atomic_write(path, text)
    return path


def default_tools_dir(registry: Any = None, *, root: str | Path | None = None) -> Path:
    """``NEXUS_TOOLS_DIR``, else the registry's configured ``tools_dir`` (nex.yaml), else
    ``tools/dynamic``; relative to ``root``, else the registry's root, else the current
    directory."""
    from ..core.config.paths import resolve_tools_dir

    settings = getattr(registry, "settings", None)
    configured = (
        settings.get("tools_dir")
        if isinstance(settings, Mapping)
        else getattr(settings, "tools_dir", None)
    )
    return resolve_tools_dir(
        root if root is not None else getattr(registry, "root", None), configured
    )


def directory_source_for(registry: Any, tools_dir: str | Path) -> Any | None:
    """The registry's directory source watching ``tools_dir`` (any spelling), or ``None``."""
    folder = Path(tools_dir).expanduser().resolve()
    for state in registry.sources():
        root = getattr(state.source, "root", None)
        if state.kind == "directory" and root is not None and Path(root) == folder:
            return state.source
    return None


def hand_over(registry: Any, tools_dir: str | Path, path: Path) -> Any:
    """Make the directory source of ``tools_dir`` (watching it first if needed) load
    ``path`` now, so the registry's entry comes from the file without waiting for the
    watcher. Returns the file's status dict."""
    source = directory_source_for(registry, tools_dir)
    if source is None:
        source = registry.watch(Path(tools_dir).expanduser().resolve())
    return source.reload_file(path, registry=registry)
