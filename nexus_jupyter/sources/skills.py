"""Agent skills: folders with a ``SKILL.md`` offered as tools of source ``skill``.

A skill folder holds ``SKILL.md`` (YAML front matter, then the instructions) and any files
it needs::

    ---
    name: release-notes
    description: Write release notes from the git log.
    scripts:                                  # optional: each becomes a script tool
      - {name: changes, path: scripts/changes.sh, args: ["{since}"],
         parameters: {type: object, properties: {since: {type: string}}}}
    ---
    1. Run the `release-notes__changes` tool ...

Calling the skill's tool returns its instructions and the list of its files; each declared
script runs as a tool named ``<skill>__<script>``. The folders scanned are
``<NEXUS_HOME>/skills``, ``<project>/skills`` and those listed under ``skills:`` in
``nex.yaml``; they are watched, so adding, editing or removing a skill shows at once.
A skill folder that an entry under ``tools:`` declares is that entry's tool (named by its
``id``, with its settings): the scan leaves it out rather than list it twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml

from ..core.config.manifest import ScriptCommand
from ..core.errors import SourceError
from ..core.registry.publisher import SourcePublisher
from ..core.tools.spec import SourceKind
from ..core.tools.tool import Tool

__all__ = ["SkillsSource", "load_skill", "read_skill_file"]

log = logging.getLogger(__name__)
SKILL_FILE = "SKILL.md"
_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_NO_ARGUMENTS = {"type": "object", "properties": {}, "additionalProperties": False}


def read_skill_file(path: Path) -> tuple[dict[str, Any], str]:
    """The front matter and the instructions of ``SKILL.md`` at ``path``."""
    text = path.read_text(encoding="utf-8")
    found = _FRONT.match(text)
    if found is None:
        raise SourceError(
            f"{path}: a SKILL.md starts with YAML front matter between '---' lines "
            "holding at least `name` and `description`."
        )
    try:
        meta = yaml.safe_load(found.group(1)) or {}
    except yaml.YAMLError as exc:
        raise SourceError(f"{path}: invalid YAML front matter ({exc}).") from None
    if not isinstance(meta, dict) or not meta.get("name") or not meta.get("description"):
        raise SourceError(f"{path}: the front matter needs `name` and `description`.")
    return meta, text[found.end() :].strip()


def _files_of(folder: Path) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def load_skill(folder: Path, **overrides: Any) -> list[Tool]:
    """The skill in ``folder``: its own tool first, then one per declared script.
    ``overrides`` are spec fields (``name``, ``description``, ``categories``, ...)."""
    from .declared import script_tool

    folder = folder.resolve()
    meta, instructions = read_skill_file(folder / SKILL_FILE)
    name = overrides.pop("name", None) or _UNSAFE.sub("_", str(meta["name"]))

    def use(_arguments: dict[str, Any]) -> dict[str, Any]:
        current, text = read_skill_file(folder / SKILL_FILE)
        return {
            "name": current["name"],
            "description": current["description"],
            "instructions": text,
            "files": _files_of(folder),
            "path": str(folder),
        }

    fields: dict[str, Any] = {
        "description": str(meta["description"]),
        "categories": ("skill",),
        "origin": str(folder / SKILL_FILE),
        "code_hash": hashlib.sha256(instructions.encode()).hexdigest()[:16],
        **{k: v for k, v in overrides.items() if v},
    }
    tools = [Tool.from_schema(name, fields.pop("description"), _NO_ARGUMENTS, use, **fields)]
    for entry in meta.get("scripts") or []:
        if not isinstance(entry, dict) or not entry.get("name") or not entry.get("path"):
            raise SourceError(
                f"{folder / SKILL_FILE}: each entry of `scripts` needs `name` and `path`."
            )
        command = ScriptCommand.model_validate(
            {
                "type": "script",
                **{k: v for k, v in entry.items() if k in ScriptCommand.model_fields},
            }
        )
        tools.append(
            script_tool(
                f"{name}__{entry['name']}",
                command,
                folder,
                description=str(entry.get("description") or f"Script {entry['path']} of {name}."),
                parameters=entry.get("parameters"),
                categories=("skill",),
            )
        )
    return tools


class _WatchedFolder:
    """What :class:`~.watcher.FolderWatcher` needs of a source, for one skills folder."""

    recursive = True

    def __init__(self, owner: SkillsSource, root: Path) -> None:
        self.owner = owner
        self.root = root
        self.name = owner.name

    @property
    def _publisher(self) -> SourcePublisher | None:
        return self.owner._publisher

    def rescan(self) -> None:
        return None  # publish() below rescans every folder

    def publish(self) -> None:
        self.owner.publish()

    def apply_changes(self, paths: Iterable[Any], defer: set[Any] | None = None) -> None:
        self.owner.publish()


class SkillsSource:
    """Source ``skill``: every skill in ``folders`` (missing folders are watched for),
    except the skill folders in ``declared`` (``tools:`` entries own them)."""

    kind: SourceKind = "config"

    def __init__(
        self,
        folders: Sequence[str | Path],
        *,
        watch: bool = True,
        declared: Iterable[str | Path] = (),
    ) -> None:
        self.name = "skill"
        self.namespace: str | None = None
        self.folders = [Path(f).expanduser().resolve() for f in dict.fromkeys(map(str, folders))]
        self.declared = {Path(f).expanduser().resolve() for f in declared}
        self.watch = watch
        self.errors: dict[str, str] = {}
        self._publisher: SourcePublisher | None = None
        # Held while publishing and while stopping: once stop() returns, nothing more is
        # published, even by a scan that was running on another thread when it was called.
        self._lock = threading.Lock()
        self._stopped = False
        self._watchers: list[Any] = []
        self.started = threading.Event()  # set once the watchers are started (or stopped)
        self._last_good: dict[Path, list[Tool]] = {}

    def scan(self) -> list[Tool]:
        """Every skill now; a broken skill is skipped and its error kept in ``errors``."""
        tools: list[Tool] = []
        errors: dict[str, str] = {}
        seen: set[str] = set()
        for folder in self.folders:
            if not folder.is_dir():
                continue
            for skill_md in sorted(folder.glob(f"*/{SKILL_FILE}")):
                if skill_md.parent.resolve() in self.declared:
                    continue  # the declared tool of the same folder is this skill
                try:
                    found = load_skill(skill_md.parent)
                    self._last_good[skill_md] = found
                except Exception as exc:
                    # a broken or half-saved SKILL.md keeps its last good version, with the
                    # error shown, until it loads again (an editor's truncate-then-write)
                    errors[str(skill_md)] = str(exc)
                    log.warning("skill %s did not load: %s", skill_md, exc)
                    found = self._last_good.get(skill_md, [])
                fresh = [t for t in found if t.spec.name not in seen]
                seen.update(t.spec.name for t in fresh)
                tools.extend(fresh)
        self.errors = errors
        for gone in [p for p in self._last_good if not p.is_file()]:
            del self._last_good[gone]
        return tools

    def load(self) -> Iterable[Tool]:
        return self.scan()

    def publish(self) -> None:
        """Scan and publish the complete set; nothing once the source is stopped (a scan
        that was running when :meth:`stop` was called ends quietly)."""
        if self._publisher is None:
            return
        tools = self.scan()
        error = "; ".join(f"{k}: {v}" for k, v in self.errors.items()) or None
        with self._lock:
            if self._publisher is None:
                return
            self._publisher.replace(
                tools, error=error, details={"folders": [str(f) for f in self.folders]}
            )

    def attach(self, publisher: SourcePublisher) -> None:
        with self._lock:
            if not self._stopped:
                self._publisher = publisher

    async def start(self, publisher: SourcePublisher) -> None:
        from .directory import DEFAULT_DEBOUNCE_MS, DEFAULT_STEP_MS
        from .watcher import FolderWatcher

        self.attach(publisher)
        await asyncio.to_thread(self.publish)
        if self.watch and not self._stopped:  # not when stop() came while it scanned
            for folder in self.folders:
                watcher = FolderWatcher(  # the same timing as a watched tools folder
                    _WatchedFolder(self, folder),
                    step_ms=DEFAULT_STEP_MS,
                    debounce_ms=DEFAULT_DEBOUNCE_MS,
                )
                watcher.start()
                self._watchers.append(watcher)
        self.started.set()

    async def stop(self) -> None:
        with self._lock:
            self._stopped = True
            self._publisher = None
        watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            await watcher.stop()
        self.started.set()  # no one waits for watchers that will not come

    def __repr__(self) -> str:
        return f"SkillsSource({[str(f) for f in self.folders]!r})"
