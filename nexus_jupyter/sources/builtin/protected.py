"""Files that steer the registry, which no built-in tool may change.

A tool that could write ``nex.yaml`` could raise its own grant, pre-approve ``bash`` or add
an MCP server whose ``command`` runs at the next start; one that could write the credential
store or the version store could plant secrets or code for a later ``rollback``. So the
write paths of the built-ins (``write``, ``edit``, ``create_dynamic_tool``), whatever face
calls them, refuse:

- every file named ``nex.yaml`` / ``nex.yml`` (any folder, any case): each is a config level;
- the config files the registry loaded (``settings.files``, e.g. a ``--config`` path);
- everything under the nexus home (user ``nex.yaml``, credentials, keyring index, audit log,
  versions) and the credential store's own folder;
- the version stores of the watched tools folders (and ``$NEXUS_VERSIONS_DIR``), and the
  old in-workspace ``.nexus-versions`` folders;
- the audit log when it is configured elsewhere.

The refusal says what the file is and that it is changed by a person, not how a caller
could raise its own rights.

>>> protected_reason(Path("/w/sub/NEX.yaml"), None) is not None
True
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.errors import PermissionDenied

__all__ = ["CONFIG_NAMES", "protected_reason", "refuse_protected"]

CONFIG_NAMES = frozenset({"nex.yaml", "nex.yml"})
_LEGACY_VERSIONS = ".nexus-versions"


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(Path(path).expanduser()))


def _under(real: Path, folder: Path) -> bool:
    return real == folder or folder in real.parents


def _protected_folders(registry: Any) -> Iterator[tuple[Path, str]]:
    from ...core.config.loading import nexus_home

    yield _real(nexus_home()), "the nexus home (user settings, credentials, audit, versions)"
    env = os.environ.get("NEXUS_VERSIONS_DIR")
    if env:
        yield _real(env), "the version store"
    if registry is None:
        return
    home = getattr(getattr(registry, "credentials", None), "home", None)
    if home is not None:
        yield _real(home), "the credential store"
    for state in registry.sources():
        store = getattr(getattr(state.source, "_store", None), "root", None)
        if isinstance(store, Path):
            yield _real(store), "the version store"


def _protected_files(registry: Any) -> Iterator[tuple[Path, str]]:
    settings = getattr(registry, "settings", None)
    if settings is None:
        return
    for name in getattr(settings, "files", ()) or ():
        yield _real(name), "a configuration file of the registry"
    audit = getattr(settings, "audit", None)
    if isinstance(audit, str):
        yield _real(audit), "the audit log"


def protected_reason(real: Path, registry: Any) -> str | None:
    """Why the resolved path ``real`` must not be written by a tool, or ``None``."""
    if real.name.lower() in CONFIG_NAMES:
        return "a nex.yaml configuration file"
    if _LEGACY_VERSIONS in real.parts:
        return "a version store"
    for file, what in _protected_files(registry):
        if real == file:
            return what
    for folder, what in _protected_folders(registry):
        if _under(real, folder):
            return what
    return None


def refuse_protected(real: Path, registry: Any, shown: str) -> None:
    """Raise :class:`PermissionDenied` when ``real`` (shown to the caller as ``shown``) is a
    file that steers the registry."""
    what = protected_reason(real, registry)
    if what is not None:
        raise PermissionDenied(
            f"{shown!r} is {what}, which decides what tools may do; tools cannot change it. "
            "Only a person editing it directly can."
        )
