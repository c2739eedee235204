"""The shape of ``nex.yaml``: pydantic models, validated strictly (unknown keys are errors).

A full example (every key optional)::

    tools_dir: tools/dynamic
    grant: workspace_write              # or per client: {default: ..., rest: ..., mcp: ...}
    audit: ~/.nexus/audit.jsonl         # false to turn the audit log off
    search:
      mode: auto                        # keyword | hybrid | auto
      signals: {intent: false}          # off: spelling, abbreviations, slots, intent, services
      services: [Acmeboard]             # more product names for the named-services signal
      abbreviations: {kb: knowledge base}
      model_path: ~/models/all-MiniLM-L6-v2   # where the sentence model's files are
      precision: smooth8                # the sentence model's graph: smooth8 | block8 | fp32 | int8
    history: {keep: 100, max_age_days: 90}   # versions kept per tool file
    isolation: auto                     # process in servers, thread in kernels; or say which
    allow_overrides: []                 # built-in names a tool file may replace
    approvals:                          # shorthand: tool-name glob -> mode
      read: pre_approved
      "mcp__github__*": ask
    approval_rules:                     # rules that also look at the arguments
      - tool: bash
        arguments: {command: {prefix: "git "}}
        action: pre_approved
    policies:                           # ACLs by principal ("unknown" = remote, unnamed)
      - principal: unknown
        deny: [bash, web_fetch]
    mcp:
      servers:
        - {name: time, command: uvx, args: [mcp-server-time]}
        - name: github
          url: https://api.example.com/mcp
          headers: {Authorization: "Bearer ${credentials:github/token}"}
    cli_tools:
      - {name: gh, command: gh, check: "gh --version", install_hint: "apt install gh"}
    mode: default                       # prompt | allow (see core/toolsets/settings.py)
    toolsets: {shell: {approval: {bash: pre_approved}}}   # see core/toolsets/settings.py
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from ..tools.spec import Permission
from ..toolsets.settings import Action, SessionMode, ToolsetSettings
from .manifest import ManifestSettings, ToolDeclaration, check_version
from .mcp_auth import McpAuthSettings

if TYPE_CHECKING:
    from ..tools.context import Caller

__all__ = [
    "ApprovalMode",
    "ApprovalRule",
    "ArgumentMatcher",
    "CliToolSettings",
    "GrantSettings",
    "HistorySettings",
    "McpServerSettings",
    "McpSettings",
    "PrincipalPolicy",
    "SearchSettings",
    "Settings",
]

ApprovalMode = Action  # pre_approved | ask | blocked (preApproved is read as pre_approved)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ArgumentMatcher(_Strict):
    """How one argument must look for a rule to match (every given test must pass).

    A plain string in YAML means ``glob``: ``{command: "git *"}``.
    """

    equals: Any = None
    prefix: str | None = None
    glob: str | None = None
    regex: str | None = None


class ApprovalRule(_Strict):
    """``tool`` is a name glob; ``arguments`` maps argument names to matchers."""

    tool: str
    action: ApprovalMode
    arguments: dict[str, ArgumentMatcher] = Field(default_factory=dict)
    name: str | None = None  # shown as Decision.rule; defaults to a description of the rule

    @field_validator("arguments", mode="before")
    @classmethod
    def _plain_strings_are_globs(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: {"glob": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        if not self.arguments:
            return f"approvals.{self.tool}"
        parts = ", ".join(
            f"{k}~{m.model_dump(exclude_none=True)}" for k, m in self.arguments.items()
        )
        return f"approval_rules[{self.tool}: {parts}]"


class PrincipalPolicy(_Strict):
    """An ACL for principals matching ``principal`` (a glob; ``unknown`` = remote and
    unnamed, ``local`` = this machine's user, ``*`` = everyone).

    ``deny``: tool-name globs refused; ``allow``: when given, only these are allowed;
    ``grant``: a ceiling for these principals."""

    principal: str
    deny: list[str] = Field(default_factory=list)
    allow: list[str] | None = None
    grant: Permission | None = None


class GrantSettings(_Strict):
    """The granted level per kind of face. A plain string in YAML sets every face.

    Defaults: a person at the keyboard (notebook, Python, CLI) may run everything (the
    dangerous tools still ask); remote clients (REST, MCP) get ``workspace_write``.
    """

    default: Permission = "danger_full_access"
    rest: Permission | None = "workspace_write"
    mcp: Permission | None = "workspace_write"
    notebook: Permission | None = None
    cli: Permission | None = None

    def for_caller(self, caller: Caller) -> Permission:
        """The level for ``caller``: its own entry (:attr:`Caller.grant`), else ``default``."""
        level: Permission | None = getattr(self, caller.grant)
        return level or self.default


class McpServerSettings(_Strict):
    """One MCP server: ``command`` (+ ``args``, ``env``, ``cwd``) for stdio, or ``url``
    (+ ``headers``) for streamable HTTP. Strings may use ``${env:VAR}`` and
    ``${credentials:service/key}``; they are filled in when the server starts."""

    name: str
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    auth: McpAuthSettings | None = None  # OAuth sign-in for a url server (see mcp_auth.py)
    enabled: bool = True
    timeout: float | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerSettings:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                f"MCP server {self.name!r} needs exactly one of `command` (stdio) or `url` (HTTP)"
            )
        return self

    @model_validator(mode="after")
    def _auth_needs_url(self) -> McpServerSettings:
        if self.auth is not None and self.url is None:
            raise ValueError(f"MCP server {self.name!r}: `auth` works with `url` servers only")
        return self

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"


class McpSettings(_Strict):
    servers: list[McpServerSettings] = Field(default_factory=list)

    @field_validator("servers")
    @classmethod
    def _unique_names(cls, servers: list[McpServerSettings]) -> list[McpServerSettings]:
        seen: set[str] = set()
        for server in servers:
            if server.name in seen:
                raise ValueError(f"two MCP servers are named {server.name!r}; names must be unique")
            seen.add(server.name)
        return servers


class CliToolSettings(_Strict):
    """A command-line program offered as a tool (``args`` are appended to ``command``).

    ``check`` is a command that must exit 0 for the tool to be available (besides the
    program being on ``PATH``); ``install_hint`` is shown when it is not."""

    name: str
    command: str
    check: str | None = None
    install_hint: str = ""
    description: str = ""
    permission: Permission = "danger_full_access"
    timeout: float = 60.0
    categories: list[str] = Field(default_factory=lambda: ["cli"])
    capabilities: list[str] = Field(default_factory=list)


class SearchSignals(_Strict):
    """The optional stages of search, each on by default (see ``core/search/options.py``)."""

    abbreviations: bool = True
    slots: bool = True
    intent: bool = True
    services: bool = True
    spelling: bool = True


class SearchSettings(_Strict):
    mode: Literal["auto", "keyword", "hybrid"] = "auto"
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)  # a confidence: [0, 1]
    signals: SearchSignals = Field(default_factory=SearchSignals)
    services: list[str] = Field(default_factory=list)  # added to the shipped service names
    abbreviations: dict[str, str] = Field(default_factory=dict)  # short form -> long form
    model_path: str | None = None  # a folder with the sentence model's files
    quantized: bool = False  # plain int8: 1.0-1.2x the default cold, 2 points of dev recall@1
    # the sentence model's graph (hybrid): smooth8 (None: the default), block8, fp32 or int8
    precision: Literal["smooth8", "block8", "fp32", "int8"] | None = None


class HistorySettings(_Strict):
    """How many versions of each tool file are kept, and for how long."""

    keep: int = Field(default=100, ge=1)
    max_age_days: float = Field(default=90.0, gt=0)


class Settings(_Strict):
    """The merged configuration (user < project < runtime). See the module docs."""

    tools_dir: str = "tools/dynamic"
    grant: GrantSettings = Field(default_factory=GrantSettings)
    audit: str | bool = True  # True: <NEXUS_HOME>/audit.jsonl; a path; False: off
    search: SearchSettings = Field(default_factory=SearchSettings)
    history: HistorySettings = Field(default_factory=HistorySettings)
    # where the tools folder's files load and run: "thread" (this process) or "process"
    # (worker processes: a crash, os._exit or a hang costs one worker, which is replaced);
    # "auto": "process" in the servers (`nexus-tools serve`, the Jupyter server), "thread"
    # elsewhere (a kernel, a script), where the user's own state lives
    isolation: Literal["auto", "thread", "process"] = "auto"
    # names (globs) of built-in tools another source may replace (see Registry precedence)
    allow_overrides: list[str] = Field(default_factory=list)
    approvals: dict[str, ApprovalMode] = Field(default_factory=dict)
    approval_rules: list[ApprovalRule] = Field(default_factory=list)
    policies: list[PrincipalPolicy] = Field(default_factory=list)
    mcp: McpSettings = Field(default_factory=McpSettings)
    cli_tools: list[CliToolSettings] = Field(default_factory=list)
    # the tool manifest (see .manifest): schema version, declared tools, skill folders
    version: int = 1
    tools: list[ToolDeclaration] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    settings: ManifestSettings = Field(default_factory=ManifestSettings)
    serve: dict[str, Any] = Field(default_factory=dict)  # owned by `nexus-tools serve`
    toolsets: dict[str, ToolsetSettings] = Field(default_factory=dict)  # core/toolsets
    mode: SessionMode = "default"  # prompt: ask above read-only; allow: never ask
    cluster: str | None = None  # redis://HOST:PORT/N: serve as one replica (nexus_jupyter.cluster)
    files: tuple[str, ...] = ()  # the files merged, lowest level first (filled by the loader)

    @field_validator("grant", mode="before")
    @classmethod
    def _grant_shorthand(cls, value: Any) -> Any:
        if isinstance(value, str):
            # checked here, once, at the key the user wrote: spread out first, a misspelt
            # level would be three errors at grant.default, grant.rest and grant.mcp
            levels = typing.get_args(Permission)
            if value not in levels:
                raise PydanticCustomError(
                    "literal_error",
                    "Input should be {expected}",
                    {"expected": ", ".join(map(repr, levels[:-1])) + f" or {levels[-1]!r}"},
                )
            return {"default": value, "rest": value, "mcp": value}
        return value

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        return check_version(value)

    def rules(self) -> list[ApprovalRule]:
        """Every approval rule: the ``approvals`` shorthand first, then ``approval_rules``."""
        short = [ApprovalRule(tool=k, action=v) for k, v in self.approvals.items()]
        return short + list(self.approval_rules)
