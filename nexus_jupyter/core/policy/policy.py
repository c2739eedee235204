"""Who may call what: granted levels, approval rules and ACLs by principal.

>>> policy = Policy(grant="workspace_write")
>>> policy.check(ToolSpec("bash", permission="danger_full_access"), {}, RequestInfo()).action
'deny'
>>> policy.check(ToolSpec("read"), {}, RequestInfo()).action
'allow'

:meth:`Policy.check` decides, in this order:

1. **ACLs** (``policies`` in nex.yaml): a principal's ``deny`` globs, or its ``allow`` list
   when it has one, refuse the call.
2. **Grant**: a tool above the level nex.yaml grants the caller's face
   (:attr:`Caller.grant <nexus_jupyter.core.tools.context.Caller.grant>`; lowered by every
   matching ACL's ``grant`` and by the request's ``ceiling``, its token's scopes) is refused.
3. **Approval rules** (``approvals`` / ``approval_rules``): ``blocked`` refuses,
   ``pre_approved`` allows, ``ask`` asks.
   Then the tool's toolset approval map (``toolsets:``; blocked anywhere wins).
4. **Default**: ``danger_full_access`` tools ask (secure by default); the rest are allowed.
   A tool that itself requires approval (``needs_approval``) always asks. The session
   ``mode`` turns the rest: ``prompt`` asks for every call above read-only, ``allow`` runs
   every granted call without asking.

An "ask" for a tool approved "always" in this session becomes "allow" -- until the tool's
definition (name, description, schemas, permission) changes, which needs approval again.

Principals: ``request.principal`` when given; otherwise ``local`` for a person at this
machine and ``unknown`` for a remote caller (``Caller.remote``: MCP, REST) that did not say
who it is.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from ..config.model import ApprovalRule, GrantSettings, PrincipalPolicy
from ..tools.context import NOTEBOOK_CALLER as _NOTEBOOK
from ..tools.context import RequestInfo
from ..tools.spec import PERMISSIONS, Permission, ToolSpec, permission_rank
from ..toolsets.names import SessionMode
from .approvals import pick_rule
from .protocols import Decision
from .toolset_approval import toolset_verdict

__all__ = ["Decision", "Policy", "effective_principal", "how_to_allow"]


def effective_principal(request: RequestInfo) -> str:
    """``request.principal``, else ``local`` or ``unknown`` (whether its caller is remote)."""
    return request.principal_name


def how_to_allow(request: RequestInfo | None, fix: str) -> str:
    """``fix`` (how to change nex.yaml to allow a call) for a person at this machine or one
    who may edit the server's nex.yaml anyway (:attr:`Caller.configures`: the JupyterLab
    sidebar of the server's user); for another remote caller, only that the person running
    the server decides. A remote caller that is told which line to add is being told how to
    raise its own rights."""
    if request is None or not request.caller.remote or request.caller.configures:
        return fix
    return "Only the person running this server can allow it."


#: Who a face's grant covers, in a refusal's words.
_FACE_WORDS = {
    "rest": "the JupyterLab sidebar (and the REST API)",
    "mcp": "MCP clients",
    "notebook": "the notebook",
    "cli": "the command line",
    "python": "Python code",
}


class Policy:
    """Decides every call (see the module docs). Thread-safe."""

    def __init__(
        self,
        grant: GrantSettings | Permission | Mapping[str, Any] | None = None,
        rules: Iterable[ApprovalRule | Mapping[str, Any]] = (),
        policies: Iterable[PrincipalPolicy | Mapping[str, Any]] = (),
        mode: SessionMode = "default",
    ) -> None:
        if grant is None:
            grant = GrantSettings()
        elif isinstance(grant, str):
            grant = GrantSettings(default=grant, rest=grant, mcp=grant)
        elif not isinstance(grant, GrantSettings):
            grant = GrantSettings.model_validate(grant)
        self.grant: GrantSettings = grant
        self.rules = [
            r if isinstance(r, ApprovalRule) else ApprovalRule.model_validate(r) for r in rules
        ]
        self.policies = [
            p if isinstance(p, PrincipalPolicy) else PrincipalPolicy.model_validate(p)
            for p in policies
        ]
        #: the session mode (nex.yaml ``mode:``, ``%tool mode``); see :meth:`_settle`
        self.mode: SessionMode = mode
        self._approved: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any) -> Policy:
        """The policy of a :class:`~nexus_jupyter.core.config.model.Settings`."""
        return cls(
            settings.grant,
            settings.rules(),
            settings.policies,
            mode=getattr(settings, "mode", "default"),
        )

    # -- deciding -------------------------------------------------------------------------

    def check(self, spec: ToolSpec, arguments: Mapping[str, Any], request: RequestInfo) -> Decision:
        """Decide a call of ``spec`` with ``arguments`` for ``request``."""
        name = spec.name
        principal = effective_principal(request)
        acls = self._acls(principal)
        denied = self._acl_denial(name, principal, acls, request)
        if denied is not None:
            return denied
        grant, grant_from = self._grant(request, acls)
        if permission_rank(spec.permission) > permission_rank(grant):
            return Decision("deny", self._above_grant(spec, request, grant, grant_from), "grant")
        args = arguments if isinstance(arguments, Mapping) else {}
        rule = pick_rule(self.rules, name, args)
        verdict = toolset_verdict(spec, args)
        picked = [(rule.action, rule.label)] if rule is not None else []
        for action, label in [*picked, *([verdict] if verdict is not None else [])]:
            if action == "blocked":
                return Decision(
                    "deny",
                    f"Tool {name!r} is blocked by {label} in nex.yaml. "
                    + how_to_allow(request, "Change that rule to allow it."),
                    label,
                )
        if rule is not None:
            return self._settle(spec, rule.action, rule.label, grant)
        if verdict is not None:
            return self._settle(spec, verdict[0], verdict[1], grant)
        return self._settle(spec, None, None, grant)

    def _settle(
        self, spec: ToolSpec, action: str | None, label: str | None, grant: Permission
    ) -> Decision:
        """The decision once a rule (or none) was picked: the tool's own "needs approval"
        flag is a floor no setting lowers; the session mode turns the other asks."""
        if spec.needs_approval:
            why = spec.approval_why or "the tool itself requires approval for every call"
            return self._ask(spec, why, label)
        if action == "pre_approved":
            return Decision("allow", f"pre-approved by {label}", label)
        if action is None and self.mode == "prompt" and spec.permission != "read_only":
            action, label = "ask", "mode: prompt"
        if action is None and spec.permission == "danger_full_access":
            action = "ask"
        if action == "ask" and self.mode == "allow":
            return Decision("allow", "mode: allow runs everything granted without asking", label)
        if action == "ask":
            why = (
                f"{label} says ask" if label else "danger_full_access tools ask unless pre-approved"
            )
            return self._ask(spec, why, label)
        return Decision("allow", f"{spec.permission} is within the grant ({grant})", None)

    def _acl_denial(
        self,
        name: str,
        principal: str,
        acls: list[tuple[int, PrincipalPolicy]],
        request: RequestInfo,
    ) -> Decision | None:
        for i, acl in acls:
            label = f"policies[{i}] (principal {acl.principal!r})"
            hit = next((g for g in acl.deny if fnmatch.fnmatchcase(name, g)), None)
            if hit is not None:
                return Decision(
                    "deny",
                    f"Tool {name!r} is denied to principal {principal!r} by "
                    f"{label}: deny {hit!r} in nex.yaml.",
                    f"policies[{i}]",
                )
            if acl.allow is not None and not any(fnmatch.fnmatchcase(name, g) for g in acl.allow):
                return Decision(
                    "deny",
                    f"Tool {name!r} is not in the allow list of {label} for "
                    f"principal {principal!r}. "
                    + how_to_allow(request, "Add it to `allow` in nex.yaml."),
                    f"policies[{i}]",
                )
        return None

    def _above_grant(
        self, spec: ToolSpec, request: RequestInfo, grant: Permission, grant_from: str | None
    ) -> str:
        """Why a tool above the caller's grant is refused: the level it needs, the level the
        caller has and where that comes from, and (for someone who may change it) the
        nex.yaml line that allows it."""
        need, caller = spec.permission, request.caller
        if grant_from is None:  # the face's own entry of `grant:`
            who = _FACE_WORDS.get(caller.face, f"{caller.face} callers")
            fix = f"To allow it, set `grant: {{{caller.grant}: {need}}}` in nex.yaml"
            fix += " and restart the Jupyter server" if caller.face == "rest" else ""
        elif grant_from == "its token":
            who = f"principal {effective_principal(request)!r}, by its token,"
            fix = f"To allow it, use a token whose scopes reach {need}"
        else:
            who = f"principal {effective_principal(request)!r}, by {grant_from},"
            fix = f"To allow it, raise the grant of {grant_from.split()[0]} to {need}"
        notebook = self.grant.for_caller(_NOTEBOOK)
        if caller.face != "notebook" and permission_rank(notebook) >= permission_rank(need):
            fix += f", or run it from a notebook (`%tool try {spec.name}`), granted {notebook}"
        verb = "are" if who.endswith("clients") else "is"
        return (
            f"Tool {spec.name!r} needs permission {need!r}, and {who} {verb} granted {grant!r}. "
            + how_to_allow(request, fix + ".")
        )

    def granted(self, request: RequestInfo) -> Permission:
        """The highest permission ``request`` may use: its face's grant, lowered by the
        policies of its principal and by its token's scopes. A tool above it is refused
        whatever the rules say, so a face need not offer it (``tool_search``, MCP listing)."""
        return self._grant(request, self._acls(effective_principal(request)))[0]

    def _acls(self, principal: str) -> list[tuple[int, PrincipalPolicy]]:
        """The ``policies:`` entries (with their index) whose pattern matches ``principal``."""
        return [
            (i, p)
            for i, p in enumerate(self.policies)
            if fnmatch.fnmatchcase(principal, p.principal)
        ]

    def _grant(
        self, request: RequestInfo, acls: list[tuple[int, PrincipalPolicy]]
    ) -> tuple[Permission, str | None]:
        """The granted level and what lowered it below the face's own (``None``: nothing)."""
        grant = self.grant.for_caller(request.caller)
        origin: str | None = None
        for i, acl in acls:
            if acl.grant is not None and permission_rank(acl.grant) < permission_rank(grant):
                grant, origin = acl.grant, f"policies[{i}] in nex.yaml"
        ceiling = request.ceiling
        if ceiling is not None and permission_rank(ceiling) < permission_rank(grant):
            grant, origin = ceiling, "its token"
        return grant, origin

    def _ask(self, spec: ToolSpec, why: str, rule: str | None) -> Decision:
        if self.is_remembered(spec):
            return Decision("allow", "approved for this session", rule)
        return Decision(
            "ask", f"Tool {spec.name!r} ({spec.permission}) needs approval: {why}.", rule, why
        )

    def asks_for_some_arguments(self, spec: ToolSpec) -> str | None:
        """The label of an ``ask`` rule that names ``spec``'s tool and decides by its
        arguments (``approvals: {delete: {action: ask, arguments: ...}}``), when this session
        would ask for such a call; ``None`` otherwise. A registry that serves the tool to
        another one, which cannot see the rule, has it ask for every call instead."""
        if self.mode == "allow" or self.is_remembered(spec):
            return None
        takes = (spec.input_schema or {}).get("properties") or {}
        for rule in self.rules:
            if (
                rule.action == "ask"
                and rule.arguments
                and all(name in takes for name in rule.arguments)  # it can match a call
                and fnmatch.fnmatchcase(spec.name, rule.tool)
            ):
                return rule.label
        return None

    # -- session approvals ----------------------------------------------------------------

    def remember(self, spec: ToolSpec, request: RequestInfo | None = None) -> None:
        """Approve ``spec`` "always" for this session (until its definition changes)."""
        with self._lock:
            self._approved.add((spec.name, spec.definition_hash))

    def forget(self, name: str | None = None) -> None:
        """Drop session approvals (of ``name``, or all)."""
        with self._lock:
            self._approved = {k for k in self._approved if name is not None and k[0] != name}

    def is_remembered(self, spec: ToolSpec) -> bool:
        return (spec.name, spec.definition_hash) in self._approved

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary (for ``nexus-tools check`` and the catalog)."""
        return {
            "grant": self.grant.model_dump(),
            "mode": self.mode,
            "levels": list(PERMISSIONS),
            "rules": [{"rule": r.label, "action": r.action} for r in self.rules],
            "policies": [p.model_dump() for p in self.policies],
            "approved": sorted(n for n, _ in self._approved),
        }

    def __repr__(self) -> str:
        return (
            f"<Policy grant={self.grant.default} rules={len(self.rules)} acls={len(self.policies)}>"
        )
