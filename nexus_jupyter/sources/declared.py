"""Tools declared under ``tools:`` in ``nex.yaml`` (source ``manifest``).

Each :class:`~nexus_jupyter.core.config.manifest.ToolDeclaration` becomes one tool named by
its ``id``: a command line or a script (arguments through the argv template or JSON on
stdin; the result is ``{exit_code, stdout, stderr}``), a Python function, a tool of a
configured MCP server seen under another name with more metadata, or a skill folder.
Relative paths resolve against the folder of the ``nex.yaml`` that declared the entry.

Availability is checked off the caller's thread when the source starts and again on
``nexus-tools check`` / ``sync``; an unavailable tool stays listed with its reason (see
:mod:`.install` for the checks and the install commands).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..core.config.manifest import (
    CliCommand,
    McpReference,
    PythonReference,
    ScriptCommand,
    SkillReference,
    ToolDeclaration,
)
from ..core.errors import ToolUnavailable
from ..core.registry.publisher import SourcePublisher
from ..core.tools.spec import SourceKind
from ..core.tools.tool import Tool

__all__ = [
    "DeclaredToolsSource",
    "base_argv",
    "build_declared_tools",
    "declared_skill_folders",
    "script_tool",
]

_ANY_OBJECT = {"type": "object", "additionalProperties": True}


def base_argv(command: CliCommand | ScriptCommand, root: Path) -> list[str]:
    """The program and its fixed words, with a relative program path taken from ``root``."""
    if isinstance(command, CliCommand):
        words = shlex.split(command.command)
        program = words[0]
        if "/" in program and not Path(program).is_absolute():
            words[0] = str((root / program).resolve())
        return words
    path = (root / Path(command.path).expanduser()).resolve()
    if command.interpreter:
        return [*shlex.split(command.interpreter), str(path)]
    if path.suffix == ".py":
        return [sys.executable, str(path)]
    if path.suffix == ".sh" and not _runs_itself(path):
        return ["bash", str(path)]
    return [str(path)]


def _runs_itself(path: Path) -> bool:
    """Whether ``path`` is an executable file that names its interpreter (``#!/bin/sh``):
    then it runs as its author wrote it, not under ``bash``."""
    try:
        with path.open("rb") as head:
            return head.read(2) == b"#!" and os.access(path, os.X_OK)
    except OSError:
        return False


def script_tool(
    name: str,
    command: CliCommand | ScriptCommand,
    root: Path,
    *,
    description: str = "",
    parameters: dict[str, Any] | None = None,
    **spec_fields: Any,
) -> Tool:
    """A tool that runs ``command`` in ``root`` with its arguments mapped by the template."""
    from .processes import expand_argv, run_process

    program = base_argv(command, root)
    schema = dict(parameters or {"type": "object", "properties": {}})
    schema.setdefault("type", "object")

    async def run(arguments: dict[str, Any]) -> dict[str, Any]:
        argv = [*program, *expand_argv(command.args, arguments)]
        stdin = json.dumps(arguments) if command.stdin == "json" else None
        return await run_process(
            argv, cwd=root, stdin=stdin, env=command.env, timeout=command.timeout
        )

    shown = " ".join(shlex.quote(w) for w in [*program, *command.args])
    spec_fields.setdefault("permission", "danger_full_access")
    return Tool.from_schema(
        name,
        description or f"Run `{shown}`.",
        schema,
        run,
        origin=shown,
        **spec_fields,
    )


def _mcp_forwarder(name: str, ref: McpReference, registry: Any, **spec_fields: Any) -> Tool:
    target = f"mcp__{ref.server}__{ref.tool}"
    known = registry.find(target) if registry is not None else None
    schema = dict(known.spec.input_schema) if known is not None else _ANY_OBJECT

    async def forward(arguments: dict[str, Any], ctx: Any) -> Any:
        if registry is None or registry.find(target) is None:
            raise ToolUnavailable(
                f"Tool {name!r} calls {target!r}, which is not loaded: is MCP server "
                f"{ref.server!r} configured under mcp.servers and running? "
                "See `nexus-tools check`."
            )
        return await registry.call(target, arguments, request=ctx.request)

    fields = {**spec_fields}
    if known is not None:
        fields.setdefault("permission", known.spec.permission)
        fields["description"] = fields.get("description") or known.spec.description
    description = (
        fields.pop("description", "") or f"Tool {ref.tool!r} of MCP server {ref.server!r}."
    )
    # Checked here too, so a bad call is refused in this tool's name (not as a failure of the
    # MCP tool it forwards to), as that tool reads its schema; without the server's schema
    # yet, there is nothing to check.
    return Tool.from_schema(
        name,
        description,
        schema,
        forward,
        validate=known is not None,
        from_python=known is not None and known.schema_from_python,
        origin=target,
        **fields,
    )


def build_declared_tools(
    decl: ToolDeclaration, default_root: Path, registry: Any = None
) -> list[Tool]:
    """The tools ``decl`` describes: one, or for a skill its own tool then one per script it
    declares (``<id>__<script>``). Raises when they cannot be built (a module that does not
    import, a skill folder without ``SKILL.md``)."""
    root = decl.root(default_root)
    fields: dict[str, Any] = {
        "description": decl.description,
        "categories": tuple(decl.categories),
        "capabilities": tuple(decl.capabilities),
        "requires_credentials": tuple(decl.requires_credentials),
    }
    if decl.title:
        fields["display"] = {"title": decl.title}
    if decl.permission:
        fields["permission"] = decl.permission
    source = decl.source
    if isinstance(source, CliCommand | ScriptCommand):
        return [script_tool(decl.id, source, root, parameters=decl.parameters, **fields)]
    if isinstance(source, PythonReference):
        from .python_ref import load_python_tool

        return [load_python_tool(source.module, search_path=root, name=decl.id, **fields)]
    if isinstance(source, McpReference):
        return [_mcp_forwarder(decl.id, source, registry, **fields)]
    assert isinstance(source, SkillReference)
    from .skills import load_skill

    return load_skill(root / Path(source.path).expanduser(), **fields, name=decl.id)


def declared_skill_folders(
    declarations: Iterable[ToolDeclaration], default_root: Path
) -> set[Path]:
    """The skill folders that ``tools:`` entries declare, resolved: the skills folders leave
    them to their declaration (one skill, with the declared settings, and no conflict)."""
    return {
        (d.root(default_root) / Path(d.source.path).expanduser()).resolve()
        for d in declarations
        if isinstance(d.source, SkillReference)
    }


def _placeholder(decl: ToolDeclaration, reason: str) -> Tool:
    """Stands in for a declared tool that cannot be built, so it is listed (unavailable,
    with the reason) instead of vanishing."""

    def fail(_arguments: dict[str, Any]) -> Any:
        raise ToolUnavailable(f"Tool {decl.id!r} {reason}")

    return Tool.from_schema(
        decl.id,
        decl.description or f"Declared tool {decl.id!r} (could not be loaded).",
        _ANY_OBJECT,
        fail,
        validate=False,
        categories=tuple(decl.categories),
        capabilities=tuple(decl.capabilities),
    )


class DeclaredToolsSource:
    """Source ``manifest`` (kind ``config``): the ``tools:`` entries of the merged settings."""

    kind: SourceKind = "config"

    def __init__(
        self, declarations: Sequence[ToolDeclaration], root: str | Path, registry: Any = None
    ) -> None:
        self.name = "manifest"
        self.namespace: str | None = None
        self.declarations = {d.id: d for d in declarations}
        self.root = Path(root).resolve()
        self.registry = registry
        self.build_errors: dict[str, str] = {}
        self.last_check: dict[str, str | None] = {}
        self._unsubscribe: Any = None
        self._lock = threading.Lock()

    def declaration(self, name: str) -> ToolDeclaration | None:
        return self.declarations.get(name)

    def root_of(self, decl: ToolDeclaration) -> Path:
        return decl.root(self.root)

    def build(self) -> list[Tool]:
        """Every declared tool that can be built; the others are kept in ``build_errors``."""
        tools, errors = [], {}
        for decl in self.declarations.values():
            try:
                tools.extend(build_declared_tools(decl, self.root, self.registry))
            except Exception as exc:
                errors[decl.id] = f"cannot be loaded: {type(exc).__name__}: {exc}"
                tools.append(_placeholder(decl, errors[decl.id]))
        self.build_errors = errors
        return tools

    def load(self) -> Iterable[Tool]:
        return self.build()

    def check(self, names: Iterable[str] | None = None) -> dict[str, str | None]:
        """Run the availability checks now: ``{id: reason or None}``."""
        from .install import unavailable_reason

        wanted = list(names) if names is not None else list(self.declarations)
        results = {
            n: self.build_errors.get(n)
            or unavailable_reason(
                self.declarations[n], self.root_of(self.declarations[n]), self.registry
            )
            for n in wanted
            if n in self.declarations
        }
        self.last_check.update(results)
        return results

    def publish_availability(self, publisher: SourcePublisher) -> None:
        """Rebuild, check, and publish the set with the unavailable ones marked. The details
        name the tools that ``cannot_run`` until the person running nexus acts (a program
        to install, a path to correct): not those waiting on an MCP server, which is a
        source of its own, reported as such."""
        with self._lock:  # checks and publishes in one piece: the last one run saw the latest
            tools = self.build()
            results = self.check()
            unavailable = {n: r for n, r in results.items() if r is not None}
            cannot_run = {
                n: r
                for n, r in unavailable.items()
                if not isinstance(self.declarations[n].source, McpReference)
            }
            details = {"checks": results, "cannot_run": cannot_run}
            publisher.replace(tools, unavailable=unavailable, details=details)

    def _servers(self) -> dict[str, list[ToolDeclaration]]:
        """``{"mcp:<server>": [declarations referring to its tools]}``."""
        out: dict[str, list[ToolDeclaration]] = {}
        for decl in self.declarations.values():
            if isinstance(decl.source, McpReference):
                out.setdefault(f"mcp:{decl.source.server}", []).append(decl)
        return out

    def _on_change(self, change: Any, publisher: SourcePublisher) -> None:
        """An MCP server connected, changed its tools or went down: rebuild and re-check
        the declarations that refer to it (its schema is copied once it is known)."""
        servers = self._servers()
        self.refresh_references(publisher, [n for n in change.sources if n in servers])

    def refresh_references(
        self, publisher: SourcePublisher, servers: Iterable[str] | None = None
    ) -> None:
        """Rebuild and re-check the declarations that refer to tools of MCP ``servers``
        (``"mcp:<name>"``; every server when ``None``) now, on this thread. The command
        line calls it once its servers answered, rather than racing the change event."""
        from .install import unavailable_reason

        refs = self._servers()
        touched = [d for name in (refs if servers is None else servers) for d in refs[name]]
        if not touched:
            return
        with self._lock:
            upserts = [
                t for d in touched for t in build_declared_tools(d, self.root, self.registry)
            ]
            reasons = {d.id: unavailable_reason(d, self.root_of(d), self.registry) for d in touched}
            self.last_check.update(reasons)
            publisher.update(upserts=upserts, unavailable=reasons)

    async def start(self, publisher: SourcePublisher) -> None:
        # subscribed first: a server that gets ready while the checks run is not missed
        if self.registry is not None and self._servers():
            self._unsubscribe = self.registry.subscribe(
                lambda change: self._on_change(change, publisher)
            )
        await asyncio.to_thread(self.publish_availability, publisher)

    async def stop(self) -> None:
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    def __repr__(self) -> str:
        return f"DeclaredToolsSource({list(self.declarations)!r})"
