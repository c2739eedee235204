"""The application's wiring: the one module that knows every source.

``Registry.default()`` comes here (through :mod:`nexus_jupyter.core.registry.wiring`) to
assemble a configured registry.

From the merged settings (see :mod:`.config`): the policy, the credential store, the audit
log, the built-in tools, the watched tools folder, the CLI tools and the MCP servers.
A server whose settings cannot be used (a missing credential in ``${credentials:...}``)
is listed as a source with an error status; it never stops the registry from starting.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .core.config.loading import load_settings, nexus_home
from .core.config.model import Settings
from .core.tools.spec import SourceKind
from .core.tools.tool import Tool

if TYPE_CHECKING:
    from .core.policy.protocols import AuditSink, CallPolicy, Credentials

__all__ = ["AppWiring", "configure_registry", "resolve_settings"]

log = logging.getLogger(__name__)


def resolve_settings(base: Path, config: Any) -> Settings:
    """``config`` may be ``None`` (nex.yaml levels of ``base``), a :class:`Settings`, a
    mapping (runtime settings over the files) or a path (used as the project file)."""
    if isinstance(config, Settings):
        return config
    if isinstance(config, Mapping):
        return load_settings(base, runtime=config)
    if isinstance(config, str | Path):
        return load_settings(base, project_file=Path(config))
    if config is None:
        return load_settings(base)
    raise TypeError(f"config must be a Settings, a dict or a path, got {config!r}.")


def _audit_log(settings: Settings, store: Credentials | None) -> AuditSink | None:
    if settings.audit is False:
        return None
    from .core.policy.audit import AuditLog

    path = nexus_home() / "audit.jsonl" if settings.audit is True else Path(str(settings.audit))
    return AuditLog(path.expanduser(), masker=store.mask if store is not None else None)


class _FailedSource:
    """Stands in for a source that could not be built, so its error shows as a status."""

    def __init__(self, name: str, kind: SourceKind, error: Exception) -> None:
        self.name = name
        self.kind: SourceKind = kind
        self.namespace: str | None = None
        self.error = error

    def load(self) -> Iterable[Tool]:
        raise self.error


def configure_registry(
    cls: Any,
    *,
    root: str | Path | None,
    config: Any,
    watch: bool,
    builtins: bool,
    mcp: bool,
    isolation: str = "thread",
    **kwargs: Any,
) -> Any:
    """Build ``cls(...)`` from the settings. Explicit ``policy=``, ``credentials=``,
    ``audit=`` or ``search=`` keyword arguments win over the settings (``None`` turns a
    part off). ``isolation`` is where tool files run when nex.yaml says ``auto``: the
    servers pass ``"process"``."""
    from .core.config.paths import resolve_tools_dir

    base = Path(root) if root is not None else Path.cwd()
    settings = resolve_settings(base, config)
    if "credentials" not in kwargs:
        from .core.policy.credentials import CredentialStore

        credentials: Credentials = CredentialStore()
        kwargs["credentials"] = credentials
    store = kwargs["credentials"]
    if "policy" not in kwargs:
        from .core.policy.policy import Policy

        policy: CallPolicy = Policy.from_settings(settings)
        kwargs["policy"] = policy
    if "audit" not in kwargs:
        kwargs["audit"] = _audit_log(settings, store)
    search = kwargs.get("search")
    if search is None or isinstance(search, str):  # a mode name keeps the nex.yaml signals
        kwargs["search"] = {**settings.search.model_dump(), "mode": search or settings.search.mode}
    kwargs.setdefault("search_threshold", settings.search.threshold)
    reg = cls(**kwargs)
    reg.settings = settings
    reg.root = base
    _add_observability(reg, resolve_tools_dir(base, settings.tools_dir))
    if builtins:
        from .sources.builtin import BuiltinSource

        reg.add_source(BuiltinSource(root=base, registry=reg))
    if watch:
        reg.watch(
            resolve_tools_dir(base, settings.tools_dir),
            history=settings.history,
            isolation=isolation if settings.isolation == "auto" else settings.isolation,
        )
    if builtins:  # the package's own toolsets come with the built-in ones
        from .sources.toolsets import advertised_toolsets, configured_toolsets

        reg.advertised_toolsets = frozenset(advertised_toolsets())
        for toolset in configured_toolsets(settings.toolsets, base.resolve()):
            reg.add_source(toolset)
    if settings.cli_tools:
        from .sources.cli_tools import CliToolsSource

        reg.add_source(CliToolsSource(settings.cli_tools, base))
    if mcp and settings.mcp.servers:
        _add_mcp_servers(reg, settings, store)
    _add_manifest_sources(reg, settings, base, watch=watch)
    return reg


def _add_observability(reg: Any, tools_dir: Path) -> None:
    """Tool tests of tools that no file or notebook owns go in the tools folder; calls are
    traced when the OTEL_* environment sets OpenTelemetry up."""
    from .core.telemetry.tracing import configure_from_environment
    from .sources.tool_tests import ProjectCases

    reg.tests.add_store(ProjectCases(tools_dir))
    configure_from_environment()


def _add_manifest_sources(reg: Any, settings: Settings, base: Path, *, watch: bool) -> None:
    """The declared ``tools:`` and the skills folders (user, project, ``skills:``)."""
    if settings.tools:
        from .sources.declared import DeclaredToolsSource

        reg.add_source(DeclaredToolsSource(settings.tools, base, registry=reg))
        if settings.settings.auto_install:
            from .sources.maintenance import auto_installer

            reg.auto_installer = auto_installer(reg)
    folders = [nexus_home() / "skills", base / "skills"]
    folders += [base / Path(f).expanduser() for f in settings.skills]
    if settings.skills or any(f.is_dir() for f in folders):
        from .sources.declared import declared_skill_folders
        from .sources.skills import SkillsSource

        declared = declared_skill_folders(settings.tools, base)
        reg.add_source(SkillsSource(folders, watch=watch, declared=declared))


def _add_mcp_servers(reg: Any, settings: Settings, store: Any) -> None:
    from .sources.mcp import McpSource

    for server in settings.mcp.servers:
        if not server.enabled:
            continue
        source: Any
        try:
            source = McpSource.from_config(server, credentials=store)
        except Exception as exc:
            log.error("MCP server %s cannot be configured: %s", server.name, exc)
            source = _FailedSource(f"mcp:{server.name}", "mcp", exc)
        reg.add_source(source)


class AppWiring:
    """The :class:`~nexus_jupyter.core.registry.wiring.Wiring` the package installs."""

    def default_registry(
        self,
        cls: Any,
        *,
        root: str | Path | None = None,
        config: Any = None,
        watch: bool = True,
        builtins: bool = True,
        mcp: bool = True,
        **kwargs: Any,
    ) -> Any:
        return configure_registry(
            cls, root=root, config=config, watch=watch, builtins=builtins, mcp=mcp, **kwargs
        )

    def folder_source(self, path: str | Path, **options: Any) -> Any:
        from .sources.directory import DirectorySource

        return DirectorySource(path, **options)
