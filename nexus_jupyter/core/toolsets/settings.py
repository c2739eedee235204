"""The ``toolsets:`` key of ``nex.yaml``: one entry per toolset, by name.

::

    toolsets:
      files: {}                                  # a built-in toolset, as it ships
      shell:
        approval:
          bash: {rules: [{prefix: "git ", action: pre_approved}]}
      web: {options: {allow_private: false, search: {provider: searxng, url: "http://..."}}}
      research:
        module: "my_pkg.tools:research_tools"    # functions, Tools or an ecosystem toolset
        prefix: research_
        approval: {default: ask, web_summary: pre_approved}
        permission: workspace_write              # a ceiling: tools above it are blocked

Built-in toolsets (``files``, ``shell``, ``web``, ``meta``) and toolsets advertised by
installed packages (entry-point group ``nexus_jupyter.toolsets``) are on unless
``enabled: false``; a toolset named here with a ``module`` is loaded from that module.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from ..tools.spec import Permission
from .names import BUILTIN_TOOLSETS, SessionMode

__all__ = [
    "BUILTIN_TOOLSETS",
    "Action",
    "SessionMode",
    "ToolApproval",
    "ToolsetRule",
    "ToolsetSettings",
]


def _spelled_our_way(value: Any) -> Any:
    """``preApproved`` and ``pre-approved`` (how other tools spell it) mean ``pre_approved``."""
    if isinstance(value, str) and value.replace("-", "_").lower() in (
        "preapproved",
        "pre_approved",
    ):
        return "pre_approved"
    return value


#: an approval action; ``preApproved`` / ``pre-approved`` are read as ``pre_approved``
Action = Annotated[Literal["pre_approved", "ask", "blocked"], BeforeValidator(_spelled_our_way)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolsetRule(_Strict):
    """An argument rule of a toolset's approval map. ``argument`` defaults to the tool's
    first required string parameter (``command`` for ``bash``)."""

    action: Action
    argument: str | None = None
    equals: Any = None
    prefix: str | None = None
    glob: str | None = None
    regex: str | None = None


class ToolApproval(_Strict):
    """How calls of one tool are approved: ``action`` (``pre_approved | ask | blocked``)
    and argument ``rules`` tried before it (the most specific match wins, blocked first)."""

    action: Action | None = None
    rules: list[ToolsetRule] = Field(default_factory=list)


class ToolsetSettings(_Strict):
    """One toolset in ``nex.yaml`` (see the module docs)."""

    enabled: bool = True
    module: str | None = None  # "package.module:attribute" (or a module of functions)
    prefix: str = ""
    approval: dict[str, ToolApproval] = Field(default_factory=dict)  # tool name | "default"
    permission: Permission | None = None  # the ceiling for the toolset's tools
    tools: list[str] | None = None  # only these tools of the toolset (names before prefix)
    options: dict[str, Any] = Field(default_factory=dict)  # toolset-specific (web: ...)

    @field_validator("approval", mode="before")
    @classmethod
    def _plain_actions(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: {"action": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    def approval_key(self, tool: str) -> str | None:
        """The key of ``tool``'s own entry in the approval map: its name before the prefix
        or with it (``web_summary`` or ``research_web_summary``), else ``None``."""
        return next((k for k in (tool, self.prefix + tool) if k in self.approval), None)

    def approval_for(self, tool: str) -> ToolApproval | None:
        """The approval entry of ``tool`` (named before or after the prefix), else the
        default."""
        key = self.approval_key(tool)
        return self.approval[key] if key is not None else self.approval.get("default")
