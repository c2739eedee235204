"""Check, install and sync a registry's tools: what ``nexus-tools check|install|sync`` and
``%tool check|install`` call.

>>> rows = check_tools(reg, ["build"])        # doctest: +SKIP
>>> rows[0]["available"], rows[0]["reason"]   # doctest: +SKIP
(False, "script 'scripts/build.sh' not found in /proj. Install it with ...")

:func:`sync` re-discovers every source (folders rescanned, declared checks re-run, skills
rescanned, MCP tool lists as the servers now answer) and compares the registry with the
state the last sync saved for this project (``<NEXUS_HOME>/sync/<hash>.json``).
"""

from __future__ import annotations

import concurrent.futures
import difflib
import hashlib
import json
import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..core.config.loading import nexus_home
from ..core.errors import NexusError, ToolNotFound
from ..core.registry.publisher import SourcePublisher
from .declared import DeclaredToolsSource
from .install import InstallOutcome, install_tool
from .skills import SkillsSource

__all__ = [
    "auto_installer",
    "check_tools",
    "declared_source",
    "install_tools",
    "registry_state",
    "sync",
]

Confirm = Callable[[str], bool]
log = logging.getLogger(__name__)


def declared_source(reg: Any) -> DeclaredToolsSource | None:
    """The registry's ``manifest`` source, if ``nex.yaml`` declares tools."""
    for state in reg.sources():
        if isinstance(state.source, DeclaredToolsSource):
            return state.source
    return None


def _republish(reg: Any, source: DeclaredToolsSource) -> None:
    source.publish_availability(SourcePublisher(reg, source.name))


def check_tools(reg: Any, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Re-run the availability checks and report ``{name, available, reason, source}`` for
    ``names`` (every tool when ``None``). Raises :class:`ToolNotFound` for an unknown name."""
    declared = declared_source(reg)
    if declared is not None:
        _republish(reg, declared)
    wanted = list(names) if names is not None else [e.name for e in reg.entries()]
    rows = []
    for name in wanted:
        entry = reg.entry(name)  # raises ToolNotFound with close names
        rows.append(
            {
                "name": name,
                "available": entry.available,
                "reason": entry.reason,
                "source": entry.spec.source,
            }
        )
    return rows


def install_tools(
    reg: Any,
    names: Iterable[str] = (),
    *,
    all_missing: bool = False,
    confirm: Confirm | None,
    report: Callable[[str], None] = print,
) -> list[InstallOutcome]:
    """Install declared tools (``names``, or every unavailable one with ``all_missing``),
    asking ``confirm(command)`` before each command; then publish the new availability."""
    declared = declared_source(reg)
    if declared is None:
        raise NexusError("No tools are declared under `tools:` in nex.yaml; nothing to install.")
    if all_missing:
        checks = declared.check()
        names = [n for n, reason in checks.items() if reason is not None]
        if not names:
            report("Every declared tool is available; nothing to install.")
    outcomes = []
    for name in names:
        decl = declared.declaration(name)
        if decl is None:
            close = difflib.get_close_matches(name, sorted(declared.declarations), cutoff=0.6)
            raise ToolNotFound(name, close)
        outcome = install_tool(
            decl, declared.root_of(decl), confirm=_saying(name, confirm, report), registry=reg
        )
        report(outcome.line)
        outcomes.append(outcome)
    _republish(reg, declared)
    return outcomes


def _saying(name: str, confirm: Confirm | None, report: Callable[[str], None]) -> Confirm | None:
    """``confirm`` that first says the command it is asked about: only a command that is
    about to run is named (a tool already available runs none)."""
    if confirm is None:
        return None  # install_tool refuses, naming the command

    def say_then_confirm(command: str) -> bool:
        report(f"{name}: install command: {command}")
        return confirm(command)

    return say_then_confirm


def terminal_confirm(command: str) -> bool:
    """Ask on the terminal (only called where stdin is one)."""
    answer = input(f"Run `{command}`? [y/N] ").strip().lower()
    return answer in ("y", "yes")


def auto_installer(reg: Any) -> Callable[[Any, Any, bool], bool]:
    """The hook ``settings: {auto_install: true}`` installs on the registry: called with an
    unavailable entry before a call; installs it when someone confirms (the call was
    approved, or the command line has a terminal), never silently. Returns whether it ran."""

    def install_on_first_call(entry: Any, request: Any, approved: bool) -> bool:
        declared = declared_source(reg)
        decl = declared.declaration(entry.name) if declared is not None else None
        if declared is None or decl is None or not decl.install.command:
            return False
        if approved:
            confirm: Confirm | None = lambda _command: True  # noqa: E731
        elif request.caller.face == "cli" and sys.stdin.isatty():
            confirm = terminal_confirm
        else:
            return False  # no one can answer here: the refusal names `nexus-tools install`
        outcome = install_tool(decl, declared.root_of(decl), confirm=confirm, registry=reg)
        _republish(reg, declared)
        return outcome.ok

    return install_on_first_call


# -- sync ---------------------------------------------------------------------------------


def registry_state(reg: Any) -> dict[str, dict[str, Any]]:
    """``{name: {version, source, status, reason}}`` for every tool."""
    return {
        e.name: {
            "version": e.spec.version,
            "source": e.spec.source,
            "status": e.status,
            "reason": e.reason,
        }
        for e in reg.entries()
    }


def _state_file(root: Path) -> Path:
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return nexus_home() / "sync" / f"{digest}.json"


def _diff(
    before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
) -> dict[str, list[Any]]:
    changed = []
    for name in sorted(set(before) & set(after)):
        old, new = before[name], after[name]
        what = [k for k in ("version", "source", "status") if old.get(k) != new.get(k)]
        if what:
            changed.append({"name": name, "changed": what, "before": old, "after": new})
    return {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": changed,
    }


def _relist_servers(reg: Any, wait: float) -> None:
    """Every connected MCP server lists its tools again (a server may change them without
    saying so); waits up to ``wait`` seconds in all."""
    pending = [
        s.source.relist() for s in reg.sources() if callable(getattr(s.source, "relist", None))
    ]
    done, late = concurrent.futures.wait(pending, timeout=wait)
    for future in done:
        if future.exception() is not None:
            log.warning("sync: an MCP server did not list its tools: %s", future.exception())
    for future in late:
        future.cancel()


def sync(reg: Any, root: Path, *, wait: float = 15.0) -> dict[str, Any]:
    """Re-discover every source, then compare with the last sync of ``root``:
    ``{"added": [...], "removed": [...], "changed": [...], "first": bool}``. MCP servers
    are asked for their tools again (up to ``wait`` seconds)."""
    _relist_servers(reg, wait)
    for state in reg.sources():
        source = state.source
        rescan = getattr(source, "rescan", None)
        if callable(rescan) and not isinstance(source, DeclaredToolsSource):
            rescan(registry=reg)  # a tools folder
        elif hasattr(source, "publish_availability"):
            source.publish_availability(SourcePublisher(reg, state.name))  # declared, CLI
        elif isinstance(source, SkillsSource):
            source.publish()  # the registry attached its publisher when it was added
    path = _state_file(root)
    first = not path.is_file()
    before = {} if first else json.loads(path.read_text(encoding="utf-8")).get("tools", {})
    after = registry_state(reg)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"root": str(root), "tools": after}, indent=1), encoding="utf-8")
    return {**_diff(before, after), "first": first}
