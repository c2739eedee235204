"""Command-line programs from ``nex.yaml`` (``cli_tools``) offered as tools.

Each entry becomes a tool taking ``args`` (appended to its ``command``) and optional
``stdin``. Availability is checked off the caller's thread when the source starts
(``shutil.which`` on the program, then the ``check`` command must exit 0); a tool that is
not available is listed as ``unavailable`` with the reason and the install hint.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core.config.model import CliToolSettings
from ..core.registry.publisher import SourcePublisher
from ..core.registry.reasons import Reason
from ..core.tools.spec import SourceKind
from ..core.tools.tool import Tool

__all__ = ["CHECK_TIMEOUT", "CliToolsSource", "check_cli_tool"]

CHECK_TIMEOUT = 10.0
_SCHEMA = {
    "type": "object",
    "properties": {
        "args": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "Arguments appended to the command.",
        },
        "stdin": {"type": "string", "description": "Text sent to the program's standard input."},
    },
    "additionalProperties": False,
}


def _argv(command: str, root: Path) -> list[str]:
    """``command`` split into words; a relative program path (``./scripts/build.sh``) is taken
    from the project root, not from the working directory (so ``--root`` works)."""
    words = shlex.split(command)
    if words and "/" in words[0] and not Path(words[0]).is_absolute():
        words[0] = str((root / words[0]).resolve())
    return words


def check_cli_tool(settings: CliToolSettings, root: str | Path = ".") -> str | None:
    """Why the tool cannot run here, or ``None`` when it can. The fix is for the person
    running nexus; an agent is told to ask them (see :func:`.install.only_the_operator`)."""
    from .install import check_command_reason, only_the_operator

    entry = f"of {settings.name!r} under cli_tools: in nex.yaml"
    hint = f" Install: {settings.install_hint}" if settings.install_hint else ""
    try:
        program = _argv(settings.command, Path(root))[0]
    except (ValueError, IndexError):
        missing = f"invalid command {settings.command!r}"
        return Reason(f"{missing}; correct the command {entry}", only_the_operator(missing))
    if shutil.which(program) is None:
        missing = f"{program!r} is not installed (not on PATH)"
        fix = hint or f" Install it, or correct the command {entry}."
        return Reason(f"{missing}.{fix}".rstrip("."), only_the_operator(missing))
    if not settings.check:
        return None
    reason = check_command_reason(settings.check, None, shell=False)
    return Reason(f"{reason}{hint}".rstrip("."), only_the_operator(reason)) if reason else None


def _make_tool(settings: CliToolSettings, root: Path) -> Tool:
    base = _argv(settings.command, root)

    async def run(arguments: dict[str, Any]) -> dict[str, Any]:
        args = [str(a) for a in arguments.get("args") or []]
        stdin = arguments.get("stdin")
        proc = await asyncio.create_subprocess_exec(
            *base,
            *args,
            cwd=root,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        )
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(stdin.encode() if stdin is not None else None), settings.timeout
            )
        except (TimeoutError, asyncio.CancelledError):
            proc.kill()
            await proc.wait()
            raise
        return {
            "exit_code": proc.returncode,
            "stdout": out.decode(errors="replace"),
            "stderr": err.decode(errors="replace"),
        }

    description = settings.description or f"Run `{settings.command}` with the given arguments."
    return Tool.from_schema(
        settings.name,
        description,
        _SCHEMA,
        run,
        permission=settings.permission,
        categories=tuple(settings.categories),
        capabilities=tuple(settings.capabilities),
        origin=settings.command,
    )


class CliToolsSource:
    """Source ``config:cli_tools`` (kind ``config``)."""

    kind: SourceKind = "config"

    def __init__(self, tools: Sequence[CliToolSettings], root: str | Path) -> None:
        self.name = "config:cli_tools"
        self.namespace: str | None = None
        self.settings = list(tools)
        self.root = Path(root)
        self._tools = [_make_tool(s, self.root) for s in self.settings]
        self.last_check: dict[str, str | None] = {}

    def load(self) -> Iterable[Tool]:
        return list(self._tools)

    def check(self) -> dict[str, str | None]:
        """Run every availability check now: ``{name: reason or None}``."""
        self.last_check = {s.name: check_cli_tool(s, self.root) for s in self.settings}
        return dict(self.last_check)

    def publish_availability(self, publisher: SourcePublisher) -> None:
        """Check availability and publish the set with the unavailable ones marked (also in
        the details: they ``cannot_run`` until the person running nexus acts)."""
        results = self.check()
        unavailable = {n: r for n, r in results.items() if r is not None}
        details = {"checks": results, "cannot_run": unavailable}
        publisher.replace(self._tools, unavailable=unavailable, details=details)

    async def start(self, publisher: SourcePublisher) -> None:
        await asyncio.to_thread(self.publish_availability, publisher)

    async def stop(self) -> None:
        return None

    def __repr__(self) -> str:
        return f"CliToolsSource({[s.name for s in self.settings]!r})"
