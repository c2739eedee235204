"""The tool's description: one frozen :class:`ToolSpec`, the same for every kind of tool.

A spec is what gets listed, searched, shown in forms and sent to MCP clients. It is immutable
and hashable in spirit: ``version`` is a content hash over everything a caller can see, so two
specs with the same version describe the same tool.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..errors import ToolDefinitionError

__all__ = [
    "PERMISSIONS",
    "SOURCE_KINDS",
    "TASK_SUPPORT",
    "WRAP_MARK",
    "Permission",
    "SourceKind",
    "TaskSupport",
    "ToolSpec",
    "permission_rank",
    "validate_permission",
    "validate_tool_name",
]

Permission = Literal["read_only", "workspace_write", "danger_full_access"]
PERMISSIONS: tuple[Permission, ...] = ("read_only", "workspace_write", "danger_full_access")

#: Whether a call may run as a task (MCP ``execution.taskSupport``): never, when the client
#: supports tasks, or only as a task.
TaskSupport = Literal["forbidden", "optional", "required"]
TASK_SUPPORT: tuple[TaskSupport, ...] = ("forbidden", "optional", "required")

#: Marks an output schema wrapped as ``{"result": ...}`` (see ``ToolSpec.wire_output_schema``).
WRAP_MARK = "x-nexus-wrapped"

SourceKind = Literal["notebook", "kernel", "directory", "mcp", "builtin", "config"]
#: Precedence on a name clash, strongest first: the winner is listed, the rest are shadowed.
SOURCE_KINDS: tuple[SourceKind, ...] = (
    "notebook",
    "kernel",
    "directory",
    "mcp",
    "config",
    "builtin",
)

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,127}")


def permission_rank(permission: str) -> int:
    """``read_only`` < ``workspace_write`` < ``danger_full_access`` as 0, 1, 2."""
    return PERMISSIONS.index(validate_permission(permission))


def validate_permission(permission: str) -> Permission:
    if permission not in PERMISSIONS:
        raise ToolDefinitionError(
            f"Unknown permission {permission!r}; use one of {', '.join(PERMISSIONS)}."
        )
    return permission  # type: ignore[return-value,unused-ignore]


def validate_tool_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise ToolDefinitionError(
            f"Invalid tool name {name!r}: use letters, digits, '_', '-' or '.', start with a "
            "letter or '_', at most 128 characters."
        )
    return name


def _freeze_str_tuple(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    out = tuple(value)
    for item in out:
        if not isinstance(item, str):
            raise ToolDefinitionError(f"{what} must be strings, got {item!r}.")
    return out


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """Everything a caller can see of a tool.

    ``input_schema`` is a JSON Schema object (``{"type": "object", ...}``) with ``$ref``s
    resolved; ``output_schema`` describes the return value (any JSON type) or is ``None``.
    ``source`` names the source that provides the tool (``"notebook"``,
    ``"directory:tools/dynamic"``, ``"mcp:time"``, ``"builtin"``); ``origin`` says where
    its code lives (a file path, a cell id, an MCP server) for people to read.
    """

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    output_schema: Mapping[str, Any] | None = None
    permission: Permission = "read_only"
    #: Whether the tool's author (or its source) declared ``permission``; a default
    #: ``read_only`` is what the policy assumes, not a claim that the tool only reads.
    permission_declared: bool = False
    requires_credentials: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    source: str = ""
    source_kind: SourceKind = "notebook"
    origin: str = ""
    eager: bool = False
    timeout: float | None = None
    annotations: Mapping[str, Any] = field(default_factory=dict)
    code_hash: str = ""
    version: str = ""
    #: How the tool is shown, as its MCP server declared it (``title``, ``icons``).
    display: Mapping[str, Any] = field(default_factory=dict)
    #: ``"process"`` when calls run in a worker process that a timeout or cancel kills
    #: (``isolation: process``); empty when they run in the registry's process.
    isolation: str = ""
    #: The toolset the tool belongs to (``files``, ``shell``, ``web``, ``meta``, a nex.yaml
    #: or entry-point toolset), or ``""``.
    toolset: str = ""
    #: Its toolset's approval map for this tool (see :mod:`nexus_jupyter.core.toolsets`).
    approval: Mapping[str, Any] | None = None
    #: The tool itself says a person must approve each call (a library's ``needs_approval``
    #: or ``requires_approval``): nothing configured makes it laxer.
    needs_approval: bool = False
    #: Why each call needs approval when another registry decided it and this one only
    #: follows (a notebook's session that asks: ``%tool mode prompt``, an ``ask`` rule);
    #: empty when the tool's own flag says so. Policy words its question with it.
    approval_why: str = ""
    task_support: TaskSupport = "forbidden"

    def __post_init__(self) -> None:
        validate_tool_name(self.name)
        validate_permission(self.permission)
        if not isinstance(self.input_schema, Mapping) or self.input_schema.get("type") != "object":
            raise ToolDefinitionError(
                f"Tool {self.name!r}: input_schema must be a JSON Schema with "
                f'"type": "object", got {dict(self.input_schema) if isinstance(self.input_schema, Mapping) else self.input_schema!r}.'
            )
        for attr in ("requires_credentials", "categories", "capabilities"):
            object.__setattr__(self, attr, _freeze_str_tuple(getattr(self, attr), attr))
        if self.timeout is not None and not (self.timeout > 0):
            raise ToolDefinitionError(
                f"Tool {self.name!r}: timeout must be a positive number of seconds, "
                f"got {self.timeout!r}."
            )
        if self.task_support not in TASK_SUPPORT:
            raise ToolDefinitionError(
                f"Tool {self.name!r}: task support must be one of {', '.join(TASK_SUPPORT)}, "
                f"got {self.task_support!r}."
            )
        if not self.version:
            object.__setattr__(self, "version", self.compute_version())

    def compute_version(self) -> str:
        """A short content hash over what a caller sees plus the code hash."""
        payload = {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "permission": self.permission,
            "requires_credentials": self.requires_credentials,
            "categories": self.categories,
            "capabilities": self.capabilities,
            "annotations": self.annotations,
            "display": self.display,
            "timeout": self.timeout,
            "eager": self.eager,
            "code": self.code_hash,
        }
        if self.task_support != "forbidden":  # only then: other tools keep their versions
            payload["task_support"] = self.task_support
        blob = json.dumps(payload, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:12]

    @property
    def definition_hash(self) -> str:
        """Hash of what an approval is given for: name, description and schemas (not code)."""
        blob = json.dumps(
            [self.name, self.description, self.input_schema, self.output_schema, self.permission],
            sort_keys=True,
            default=str,
        ).encode()
        return hashlib.sha256(blob).hexdigest()[:12]

    @property
    def summary(self) -> str:
        """The description's first paragraph on one line, for lists."""
        return " ".join(self.description.strip().split("\n\n", 1)[0].split())

    @property
    def wire_output_schema(self) -> dict[str, Any] | None:
        """The output schema as MCP (through 2025-11-25) advertises it, which must be an
        object: the tool's own when it is one, otherwise wrapped as ``{"result": ...}``
        (results are then sent as ``{"result": value}``); ``None`` when it declares none."""
        schema = self.output_schema
        if not schema:
            return None
        if schema.get("type") == "object":
            return dict(schema)
        return {
            "type": "object",
            "properties": {"result": dict(schema)},
            "required": ["result"],
            WRAP_MARK: True,
        }

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.input_schema.get("properties", {}))

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.input_schema.get("required", ()))

    def evolve(self, **changes: Any) -> ToolSpec:
        """A copy with ``changes`` applied and the version recomputed (a permission given
        here is a declared one)."""
        changes.setdefault("version", "")
        if "permission" in changes:
            changes.setdefault("permission_declared", True)
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (REST answers, the catalog, the CLI)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "permission": self.permission,
            "requires_credentials": list(self.requires_credentials),
            "categories": list(self.categories),
            "capabilities": list(self.capabilities),
            "source": self.source,
            "source_kind": self.source_kind,
            "origin": self.origin,
            "eager": self.eager,
            "timeout": self.timeout,
            "annotations": dict(self.annotations),
            "display": dict(self.display),
            "isolation": self.isolation,
            "task_support": self.task_support,
            "version": self.version,
            "toolset": self.toolset,
            "needs_approval": self.needs_approval,
        }
