"""The seams a :class:`~nexus_jupyter.core.registry.registry.Registry` is composed with.

Each is a :class:`typing.Protocol` holding exactly what the call pipeline and the faces use,
so a deployment can bring its own (a policy service, a vault, a remote audit sink) and mypy
checks every call across the seam. The classes that ship satisfy them:

- :class:`CallPolicy`: :class:`~nexus_jupyter.core.policy.policy.Policy` (nex.yaml's grant,
  approval rules and ACLs);
- :class:`Credentials`: :class:`~nexus_jupyter.core.policy.credentials.CredentialStore`;
- :class:`AuditSink`: :class:`~nexus_jupyter.core.policy.audit.AuditLog` (JSON lines);
- :class:`Approver`: the notebook's ``NotebookApprover`` (a prompt in the form that called).

The protocols have role names rather than the shipped classes' names: ``Policy(grant=...)``,
``CredentialStore()`` and ``AuditLog(path)`` are what users and ``nex.yaml`` wiring build.
"""

from __future__ import annotations

import builtins
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from ..tools.context import CredentialsView, RequestInfo
    from ..tools.spec import ToolSpec
    from ..tools.tool import Tool

__all__ = ["Answer", "Approver", "AuditSink", "CallPolicy", "Credentials", "Decision"]

#: An approver's answer: approve once (``True``), for the session (``"always"``) or deny.
Answer = bool | Literal["always"]


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of :meth:`CallPolicy.check`. ``rule`` names the setting that decided it."""

    action: Literal["allow", "ask", "deny"]
    reason: str
    rule: str | None = None
    #: For an ``ask``: why, without the tool's name ("approvals.greet says ask").
    why: str | None = None


class CallPolicy(Protocol):
    """Decides every call from the tool, its arguments and the request's :class:`Caller`."""

    def check(
        self, spec: ToolSpec, arguments: Mapping[str, Any], request: RequestInfo
    ) -> Decision: ...

    def remember(self, spec: ToolSpec, request: RequestInfo | None = None) -> None:
        """Approve ``spec`` for the rest of the session (an approver answered "always")."""


class Credentials(Protocol):
    """Secrets for tools: checked before a call, handed to tools, masked in every output."""

    def missing(self, spec: ToolSpec) -> builtins.list[str]:
        """The ``requires_credentials`` entries of ``spec`` that are not set."""

    def require(self, spec: ToolSpec) -> None:
        """Raise :class:`~nexus_jupyter.core.errors.MissingCredential` for the first missing one."""

    def lookup(self, service: str, key: str = "api_key") -> str | None: ...

    def view(self) -> CredentialsView:
        """What a tool's ``ctx.credentials`` reads from."""

    def mask(self, text: str) -> str:
        """``text`` with every known secret replaced."""

    def list(self) -> dict[str, builtins.list[str]]:
        """Service -> key names that are set (never values)."""


class AuditSink(Protocol):
    """Where each call's outcome is recorded."""

    def record(
        self,
        *,
        tool: str,
        principal: str | None,
        request_id: str | None,
        client: str | None,
        decision: str,
        duration: float,
        error: str | None,
        summary: str | None = None,
        error_type: str | None = None,
    ) -> None: ...

    def close(self) -> None: ...


class Approver(Protocol):
    """Asks a person whether a call may run; may answer at once or later (awaitable)."""

    def __call__(
        self, tool: Tool, arguments: Any, request: RequestInfo
    ) -> Answer | Awaitable[Answer]: ...
