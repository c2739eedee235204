"""Availability checks and install commands of declared tools.

``availability`` of a :class:`~nexus_jupyter.core.config.manifest.ToolDeclaration`:

- ``always``: never checked.
- ``installed`` (the default): the program or script must exist (on ``PATH``, or the path
  relative to the project), the module import, the MCP server run and offer the tool, the
  skill folder hold a ``SKILL.md``; then ``install.check`` (when given) must exit 0.
- ``conditional``: only ``install.check`` decides.

Missing credentials are the registry's concern (``requires_credentials``), checked live.
A reason says the fix for the person running nexus (a program that is not there: install
it, or correct the command in nex.yaml); an agent is told to ask them
(:class:`~nexus_jupyter.core.registry.reasons.Reason`).
:func:`install_tool` shows the install command, asks (unless ``assume_yes``), runs it in the
project folder, then runs the check again and says whether the tool is now available.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.config.manifest import (
    CliCommand,
    McpReference,
    ScriptCommand,
    SkillReference,
    ToolDeclaration,
)
from ..core.errors import NexusError
from ..core.registry.reasons import Reason

__all__ = [
    "CHECK_TIMEOUT",
    "INSTALL_TIMEOUT",
    "InstallOutcome",
    "check_command_reason",
    "install_tool",
    "run_check",
    "unavailable_reason",
]

CHECK_TIMEOUT = 10.0
INSTALL_TIMEOUT = 600.0


def _hint(decl: ToolDeclaration) -> str:
    parts = []
    if decl.install.command:
        parts.append(f"install it with `nexus-tools install {decl.id}`")
    if decl.install.docs:
        parts.append(f"see {decl.install.docs}")
    if not parts:
        return ""
    text = "; ".join(parts)
    return f" {text[0].upper()}{text[1:]}."


def _shell(
    command: str, root: Path | None, timeout: float, *, shell: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in ``root``: a shell line (install and check commands are written by
    the project), or with ``shell=False`` split into words and run without a shell."""
    return subprocess.run(
        command if shell else shlex.split(command),
        shell=shell,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def check_command_reason(check: str, root: Path | None, *, shell: bool = True) -> str | None:
    """Why the check command ``check`` says no (it could not run, timed out or exited
    non-zero, with the first line it printed), or ``None`` when it exits 0. ``shell=False``
    runs it split into words, without a shell."""
    try:
        done = _shell(check, root, CHECK_TIMEOUT, shell=shell)
    except (OSError, ValueError) as exc:
        return f"check {check!r} could not run ({type(exc).__name__}: {exc})."
    except subprocess.TimeoutExpired:
        return f"check {check!r} did not finish in {CHECK_TIMEOUT:g} s."
    if done.returncode != 0:
        first = (done.stderr or done.stdout).strip().splitlines()[:1]
        said = f": {first[0][:200]}" if first else ""
        return f"check {check!r} failed (exit {done.returncode}){said}."
    return None


def run_check(decl: ToolDeclaration, root: Path) -> str | None:
    """Why ``install.check`` says the tool is not there, or ``None`` (also when none)."""
    return check_command_reason(decl.install.check, root) if decl.install.check else None


def _program_missing(command: CliCommand | ScriptCommand, root: Path) -> str | None:
    from .declared import base_argv

    try:
        argv = base_argv(command, root)
    except ValueError as exc:
        return f"invalid command ({exc})."
    if isinstance(command, ScriptCommand):
        script = Path(argv[-1])
        if not script.is_file():
            return f"script {command.path!r} not found in {root}."
    program = argv[0]
    if "/" in program:
        if not Path(program).is_file():
            return f"{program!r} not found (relative paths are taken from {root})."
        if not os.access(program, os.X_OK):
            return f"{program!r} is not executable; run `chmod +x {program}`."
        return None
    if shutil.which(program) is None:
        return f"{program!r} is not installed (not on PATH)."
    return None


def _mcp_missing(ref: McpReference, registry: Any) -> str | None:
    if registry is None:
        return None
    state = next((s for s in registry.sources() if s.name == f"mcp:{ref.server}"), None)
    if state is None:
        return f"MCP server {ref.server!r} is not configured (add it under mcp.servers)."
    if state.error:
        return f"MCP server {ref.server!r} is down: {state.error}"
    if registry.find(f"mcp__{ref.server}__{ref.tool}") is None:
        phase = state.details.get("state") if isinstance(state.details, dict) else None
        if phase in (None, "connecting", "starting"):
            return f"MCP server {ref.server!r} is not connected yet."
        return f"MCP server {ref.server!r} offers no tool {ref.tool!r}."
    return None


def unavailable_reason(decl: ToolDeclaration, root: Path, registry: Any = None) -> str | None:
    """Why the declared tool cannot run here now (with what to do), or ``None``."""
    reason = _missing(decl, root, registry)
    if not reason:
        return None
    if isinstance(decl.source, McpReference):  # the server's state: a fact, said to all
        return (reason + _hint(decl)).rstrip(".")
    fix = _hint(decl) or _program_fix(decl, root)
    # no final period: the faces put the reason inside their own sentence
    return Reason((reason + fix).rstrip("."), agent=only_the_operator(reason))


def only_the_operator(reason: str) -> str:
    """``reason`` (what is missing, without the fix) for an agent: only the person running
    the server can fix it."""
    return (
        f"{reason.rstrip('.')} where this server runs, and only the person running the server "
        "can fix that: ask the user to set up this tool"
    )


def _program_fix(decl: ToolDeclaration, root: Path) -> str:
    """How to fix a cli or script tool whose program or script is missing (without an
    install hint of its own): install it, or point the entry at the right one."""
    source = decl.source
    if not isinstance(source, CliCommand | ScriptCommand) or decl.availability != "installed":
        return ""
    missing = _program_missing(source, root)
    if missing is None or "chmod" in missing:
        return ""  # the program is there (its check failed, which says why), or said already
    entry = f"of tool {decl.id!r} under tools: in nex.yaml"
    if decl.declared_in:
        entry += f" ({decl.declared_in})"
    if missing.startswith("invalid command"):
        return f" Correct the command {entry}."
    if isinstance(source, ScriptCommand):
        return f" Create the script, or correct the path {entry}."
    return f" Install it, or correct the command {entry}."


def _missing(decl: ToolDeclaration, root: Path, registry: Any) -> str | None:
    """Why the declared tool cannot run here now (without how to install it), or ``None``."""
    if decl.availability == "always":
        return None
    reason: str | None = None
    if decl.availability == "installed":
        source = decl.source
        if isinstance(source, CliCommand | ScriptCommand):
            reason = _program_missing(source, root)
        elif isinstance(source, McpReference):
            reason = _mcp_missing(source, registry)
        elif isinstance(source, SkillReference):
            folder = root / Path(source.path).expanduser()
            if not (folder / "SKILL.md").is_file():
                reason = f"skill folder {str(folder)!r} has no SKILL.md."
    if reason is None:
        reason = run_check(decl, root)
    return reason


@dataclass(frozen=True)
class InstallOutcome:
    """What :func:`install_tool` did: ``status`` is ``installed``, ``already``, ``declined``,
    ``failed`` or ``no-command``; ``detail`` says why, for people."""

    name: str
    status: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status in ("installed", "already")

    @property
    def line(self) -> str:
        """The outcome for people, one line: ``build: installed -- ran `make`; ...``."""
        if self.status == "already":  # its detail is the whole sentence
            return f"{self.name}: {self.detail}"
        return f"{self.name}: {self.status} -- {self.detail}"


def install_tool(
    decl: ToolDeclaration,
    root: Path,
    *,
    confirm: Callable[[str], bool] | None,
    registry: Any = None,
    force: bool = False,
) -> InstallOutcome:
    """Install ``decl`` by running its ``install.command`` in ``root``.

    ``confirm(command)`` is asked first; ``None`` means there is no one to ask and no
    ``--yes``: the command is not run. Afterwards the availability check runs again; the
    outcome says whether the tool is now available."""
    if not force and unavailable_reason(decl, root, registry) is None:
        return InstallOutcome(
            decl.id, "already", "already installed (it is available here); nothing to do."
        )
    command = decl.install.command
    if not command:
        docs = f" See {decl.install.docs}." if decl.install.docs else ""
        return InstallOutcome(
            decl.id, "no-command", f"{decl.id!r} declares no install.command.{docs}"
        )
    if confirm is None:
        raise NexusError(
            f"Installing {decl.id!r} runs `{command}`; no one can confirm it here. Run "
            f"`nexus-tools install {decl.id} --yes` or `%tool install {decl.id} --yes`."
        )
    if not confirm(command):
        return InstallOutcome(decl.id, "declined", f"`{command}` was not run.")
    try:
        done = _shell(command, root, INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        return InstallOutcome(decl.id, "failed", f"`{command}` took over {INSTALL_TIMEOUT:g} s.")
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:]
        said = f": {last[0][:300]}" if last else ""
        return InstallOutcome(decl.id, "failed", f"`{command}` exited {done.returncode}{said}")
    still = _missing(decl, root, registry)
    if still is not None:  # the install command is not the way out: it just ran
        return InstallOutcome(
            decl.id,
            "failed",
            f"`{command}` ran without error, but {decl.id!r} is still not available: "
            f"{still.rstrip('.')}. Check that the command installs what the tool needs where "
            "this process looks for it (PATH, the project folder), or correct install.command "
            "or install.check in nex.yaml.",
        )
    return InstallOutcome(decl.id, "installed", f"ran `{command}`; the check now passes.")
