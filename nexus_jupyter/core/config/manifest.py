"""The ``tools:`` section of ``nex.yaml``: tools declared with their metadata.

::

    version: 1                          # the schema version of this file
    settings: {auto_install: false}     # true: install a missing tool on its first call
    skills: [~/team-skills]             # more folders of SKILL.md skills
    tools:
      - id: build
        title: Build the project
        description: Run the project's build script for one target.
        source: {type: script, path: scripts/build.sh, args: ["--target", "{target}", "{verbose}"]}
        parameters:                     # JSON Schema of the arguments (cli and script tools)
          type: object
          properties: {target: {type: string}, verbose: {type: boolean}}
          required: [target]
        categories: [build]
        capabilities: [compile]
        availability: installed         # always | installed | conditional
        install: {check: "make --version", command: "apt-get install -y make", docs: "https://..."}
      - {id: now, source: {type: mcp, server: time, tool: get_current_time}, capabilities: [clock]}
      - {id: helper, source: {type: python, module: "mypkg.tools:helper"}}
      - {id: review, source: {type: skill, path: skills/review}}

Entries merge across levels by ``id`` (runtime > project > user). Each file entry remembers
the file that declared it (``declared_in``), so relative paths resolve against that
project's folder whatever the working directory is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..tools.spec import Permission

__all__ = [
    "SCHEMA_VERSION",
    "CliCommand",
    "InstallSpec",
    "ManifestSettings",
    "McpReference",
    "PythonReference",
    "ScriptCommand",
    "SkillReference",
    "ToolDeclaration",
]

#: The newest ``version:`` of nex.yaml this package understands.
SCHEMA_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Process(_Strict):
    """How arguments reach a process: ``args`` is an argv template (``"{name}"`` is replaced
    by the argument; a list expands to several words; a boolean ``"{flag}"`` becomes
    ``--flag`` or nothing; an option followed by a missing argument is dropped with it);
    ``stdin: json`` sends the arguments as one JSON object on standard input instead."""

    args: list[str] = Field(default_factory=list)
    stdin: Literal["none", "json"] = "none"
    env: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(default=60.0, gt=0)


class CliCommand(_Process):
    """A program: ``command`` is split like a shell would (``"git log --oneline"``); a
    relative path (``./scripts/x.sh``) is taken from the declaring project's folder."""

    type: Literal["cli"]
    command: str


class ScriptCommand(_Process):
    """A script file (path relative to the declaring project's folder). ``.py`` files run
    with this Python; an executable file that starts with ``#!`` runs as it says; another
    ``.sh`` runs with ``bash``; anything else must be executable. ``interpreter`` overrides."""

    type: Literal["script"]
    path: str
    interpreter: str | None = None


class PythonReference(_Strict):
    """``module: "pkg.mod:attr"``: a plain function, a ``@tool`` function or a Tool."""

    type: Literal["python"]
    module: str

    @field_validator("module")
    @classmethod
    def _module_and_attribute(cls, value: str) -> str:
        if value.count(":") != 1 or not all(value.split(":")):
            raise ValueError(f"module must look like 'package.module:attribute', got {value!r}")
        return value


class McpReference(_Strict):
    """A tool of a configured MCP server (``mcp.servers``), declared with more metadata."""

    type: Literal["mcp"]
    server: str
    tool: str


class SkillReference(_Strict):
    """One skill folder (with a ``SKILL.md``)."""

    type: Literal["skill"]
    path: str


ToolSourceSpec = Annotated[
    CliCommand | ScriptCommand | PythonReference | McpReference | SkillReference,
    Field(discriminator="type"),
]


class InstallSpec(_Strict):
    """``check`` exits 0 when the tool is installed; ``command`` installs it; ``docs`` is
    where a person reads how to do it by hand. Both commands run in the project folder."""

    check: str | None = None
    command: str | None = None
    docs: str | None = None


class ToolDeclaration(_Strict):
    """One entry of ``tools:`` (see the module docs)."""

    id: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
    source: ToolSourceSpec
    title: str | None = None
    description: str = ""
    categories: list[str] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)
    availability: Literal["always", "installed", "conditional"] = "installed"
    install: InstallSpec = Field(default_factory=InstallSpec)
    project_specific: bool = False
    parameters: dict[str, Any] | None = None
    permission: Permission | None = None
    requires_credentials: list[str] = Field(default_factory=list)
    # the nex.yaml that declared the entry (filled in by the loader; None: runtime settings)
    declared_in: str | None = None

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and value.get("type", "object") != "object":
            raise ValueError(
                f"parameters must be a JSON Schema of type 'object', got type {value['type']!r}"
            )
        return value

    def root(self, default: Path) -> Path:
        """The folder relative paths of this entry resolve against."""
        return Path(self.declared_in).parent if self.declared_in else default


class ManifestSettings(_Strict):
    """``settings:`` — how declared tools behave."""

    # install a missing tool on its first call (asking first where someone can answer)
    auto_install: bool = False


def check_version(value: int) -> int:
    """Refuse a ``version:`` newer than this package understands."""
    if value > SCHEMA_VERSION:
        raise ValueError(
            f"this nex.yaml is schema version {value}, but this nexus_jupyter understands "
            f"versions up to {SCHEMA_VERSION}; upgrade nexus_jupyter"
        )
    if value < 1:
        raise ValueError(f"version must be 1 or more, got {value}")
    return value
