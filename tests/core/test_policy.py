"""Policy: grants, approvals, ACLs, session approvals -- through real registry calls."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter import (
    ApprovalRequired,
    PermissionDenied,
    Registry,
    RequestInfo,
    Tool,
    ToolSpec,
)
from nexus_jupyter.core.errors import ApprovalDenied
from nexus_jupyter.core.policy.audit import AuditLog
from nexus_jupyter.core.policy.policy import Decision, Policy, effective_principal
from nexus_jupyter.core.tools.context import (
    MCP_CALLER,
    NOTEBOOK_CALLER,
    REST_CALLER,
    REST_OWNER_CALLER,
)
from nexus_jupyter.core.tools.spec import PERMISSIONS, permission_rank

APPROVALS = (None, "pre_approved", "ask", "blocked")
CLIENTS = ("python", "notebook", "rest", "mcp", "cli")


def _tool(name: str, permission: str) -> Tool:
    return Tool.from_schema(
        name,
        f"A {permission} tool.",
        {"type": "object", "properties": {"command": {"type": "string"}}},
        lambda args: f"ran {name}",
        permission=permission,
        validate=False,
    )


@pytest.fixture
def audit(tmp_path: Path) -> AuditLog:
    return AuditLog(tmp_path / "audit.jsonl")


@pytest.fixture
def reg(audit: AuditLog) -> Any:
    registry = Registry(search="keyword", policy=Policy(), audit=audit)
    for tier in PERMISSIONS:
        registry.add(_tool(f"t_{tier}", tier))
    yield registry
    registry.close()


def _expected(tier: str, grant: str, approval: str | None) -> str:
    if permission_rank(tier) > permission_rank(grant):
        return "deny"
    if approval == "blocked":
        return "deny"
    if approval == "pre_approved":
        return "allow"
    if approval == "ask" or tier == "danger_full_access":
        return "ask"
    return "allow"


def test_permission_matrix_every_call_above_grant_is_denied_and_audited(
    reg: Any, audit: AuditLog
) -> None:
    counter = itertools.count()
    outcomes: dict[str, tuple[str, str, str]] = {}  # request id -> (expected, got, tier/grant)
    above = 0
    for grant, approval, tier, client in itertools.product(
        PERMISSIONS, APPROVALS, PERMISSIONS, CLIENTS
    ):
        rules = [{"tool": f"t_{tier}", "action": approval}] if approval else []
        reg.policy = Policy(grant=grant, rules=rules)
        request = RequestInfo(request_id=f"m{next(counter)}", client=client)
        expected = _expected(tier, grant, approval)
        above += permission_rank(tier) > permission_rank(grant)
        try:
            result = reg.call_sync(f"t_{tier}", {}, request=request)
            got = "allow" if result.structured == f"ran t_{tier}" else "broken"
        except PermissionDenied:
            got = "deny"
        except ApprovalRequired:
            got = "ask"
        outcomes[request.request_id] = (expected, got, f"{tier}>{grant}")
    wrong = {k: v for k, v in outcomes.items() if v[0] != v[1]}
    assert not wrong, wrong
    lines = {line["request_id"]: line for line in audit.read()}
    denied_above = [rid for rid, (_, got, _) in outcomes.items() if got == "deny"]
    missing_audit = [rid for rid in denied_above if lines.get(rid, {}).get("decision") != "deny"]
    n_above = sum(
        1
        for e, _, tg in outcomes.values()
        if permission_rank(tg.split(">")[0]) > permission_rank(tg.split(">")[1])
    )
    assert (
        n_above == above == 3 * 4 * len(CLIENTS)
    )  # 3 (tier, grant) pairs above, times approvals, times clients
    assert missing_audit == []
    every_call_audited = all(rid in lines for rid in outcomes)
    assert every_call_audited
    print(f"\nmatrix: {len(outcomes)} calls, {above} above the grant, {above} denied and audited")


def test_denial_reason_names_the_levels_and_the_fix() -> None:
    policy = Policy(grant="read_only")
    decision = policy.check(ToolSpec("w", permission="workspace_write"), {}, RequestInfo())
    assert decision == Decision("deny", decision.reason, "grant")
    assert "'workspace_write'" in decision.reason and "'read_only'" in decision.reason
    assert "`grant: {default: workspace_write}`" in decision.reason


def test_above_the_grant_is_worded_for_the_sidebar_of_the_servers_own_user() -> None:
    """The JupyterLab sidebar's user who may edit the server's files is told the level the
    tool needs, the sidebar's own, and the nex.yaml line; another remote user, an agent,
    only who decides."""
    policy = Policy()
    purge = ToolSpec("purge_cache", permission="danger_full_access")
    owner = policy.check(purge, {}, RequestInfo(principal="me", caller=REST_OWNER_CALLER))
    assert owner.action == "deny"
    assert owner.reason == (
        "Tool 'purge_cache' needs permission 'danger_full_access', and the JupyterLab sidebar "
        "(and the REST API) is granted 'workspace_write'. To allow it, set "
        "`grant: {rest: danger_full_access}` in nex.yaml and restart the Jupyter server, or "
        "run it from a notebook (`%tool try purge_cache`), granted danger_full_access."
    )
    assert "rest callers" not in owner.reason
    guest = policy.check(purge, {}, RequestInfo(principal="guest", caller=REST_CALLER))
    agent = policy.check(purge, {}, RequestInfo(caller=MCP_CALLER))
    for other in (guest, agent):
        assert "nex.yaml" not in other.reason and "person running this server" in other.reason
    assert "MCP clients are granted 'workspace_write'" in agent.reason


def test_a_grant_lowered_by_a_policy_or_a_token_names_what_lowered_it() -> None:
    policy = Policy(policies=[{"principal": "bob", "grant": "read_only"}])
    write = ToolSpec("w", permission="workspace_write")
    by_acl = policy.check(write, {}, RequestInfo(principal="bob", caller=REST_OWNER_CALLER))
    assert "principal 'bob', by policies[0] in nex.yaml, is granted 'read_only'" in by_acl.reason
    assert "raise the grant of policies[0] to workspace_write" in by_acl.reason
    token = RequestInfo(principal="ann", caller=NOTEBOOK_CALLER, ceiling="read_only")
    by_token = policy.check(write, {}, token)
    assert "by its token" in by_token.reason and "scopes reach workspace_write" in by_token.reason


def test_default_grant_is_full_locally_and_workspace_write_for_remote_clients() -> None:
    policy = Policy()
    bash = ToolSpec("bash", permission="danger_full_access")
    assert policy.check(bash, {}, RequestInfo(client="notebook")).action == "ask"
    assert policy.check(bash, {}, RequestInfo(client="rest")).action == "deny"
    assert policy.check(bash, {}, RequestInfo(client="mcp")).action == "deny"
    write = ToolSpec("write", permission="workspace_write")
    assert policy.check(write, {}, RequestInfo(client="mcp")).action == "allow"


def test_argument_rule_pre_approves_git_commands_but_not_chained_ones() -> None:
    policy = Policy(
        rules=[
            {"tool": "bash", "arguments": {"command": {"prefix": "git "}}, "action": "pre_approved"}
        ]
    )
    bash = ToolSpec("bash", permission="danger_full_access")
    req = RequestInfo()
    assert policy.check(bash, {"command": "git status"}, req).action == "allow"
    assert policy.check(bash, {"command": "ls"}, req).action == "ask"
    assert policy.check(bash, {"command": "git status; rm -rf ~"}, req).action == "ask"
    assert policy.check(bash, {"command": "git log $(whoami)"}, req).action == "ask"
    assert policy.check(bash, {"command": "git log | sh"}, req).action == "ask"


def test_blocked_wins_over_a_more_specific_pre_approval() -> None:
    policy = Policy(
        rules=[
            {"tool": "bash", "arguments": {"command": "git *"}, "action": "pre_approved"},
            {"tool": "ba*", "action": "blocked"},
        ]
    )
    decision = policy.check(
        ToolSpec("bash", permission="danger_full_access"), {"command": "git status"}, RequestInfo()
    )
    assert decision.action == "deny"
    assert decision.rule == "approvals.ba*" and "blocked" in decision.reason


def test_specific_rule_beats_glob_rule() -> None:
    policy = Policy(
        rules=[
            {"tool": "mcp__*", "action": "ask"},
            {"tool": "mcp__time__now", "action": "pre_approved"},
        ]
    )
    assert policy.check(ToolSpec("mcp__time__now"), {}, RequestInfo()).action == "allow"
    assert policy.check(ToolSpec("mcp__time__tz"), {}, RequestInfo()).action == "ask"


def test_acl_denies_tools_for_unknown_principals_only() -> None:
    policy = Policy(
        policies=[
            {"principal": "unknown", "deny": ["bash", "web_*"]},
            {"principal": "intern*", "grant": "read_only"},
        ]
    )
    fetch = ToolSpec("web_fetch")
    assert effective_principal(RequestInfo(client="rest")) == "unknown"
    assert effective_principal(RequestInfo(client="notebook")) == "local"
    denied = policy.check(fetch, {}, RequestInfo(client="rest"))
    assert denied.action == "deny" and "'unknown'" in denied.reason and denied.rule == "policies[0]"
    assert policy.check(fetch, {}, RequestInfo(client="rest", principal="alice")).action == "allow"
    assert policy.check(fetch, {}, RequestInfo(client="notebook")).action == "allow"
    write = ToolSpec("write", permission="workspace_write")
    capped = policy.check(write, {}, RequestInfo(principal="intern-bob"))
    assert capped.action == "deny" and "policies[1]" in capped.reason


def test_acl_allow_list_refuses_everything_else() -> None:
    policy = Policy(policies=[{"principal": "bot", "allow": ["read", "grep"]}])
    assert policy.check(ToolSpec("read"), {}, RequestInfo(principal="bot")).action == "allow"
    assert policy.check(ToolSpec("ls"), {}, RequestInfo(principal="bot")).action == "deny"


async def test_approver_once_always_and_denied(reg: Any, audit: AuditLog) -> None:
    answers: list[Any] = []
    reg.approver = lambda tool, arguments, request: answers.pop(0)
    answers.append(True)
    assert (await reg.call("t_danger_full_access", {})).structured == "ran t_danger_full_access"
    answers.append(False)
    with pytest.raises(ApprovalDenied, match="denied"):  # a PermissionDenied, of its own kind
        await reg.call("t_danger_full_access", {})
    assert audit.read()[-1]["decision"] == "ask-denied"
    answers.append("always")
    await reg.call("t_danger_full_access", {})
    await reg.call("t_danger_full_access", {})  # remembered: the approver is not asked
    assert answers == []


async def test_changed_definition_needs_approval_again(reg: Any) -> None:
    asked: list[str] = []

    async def approver(tool: Tool, arguments: Any, request: RequestInfo) -> Any:
        asked.append(tool.spec.description)
        return "always"

    reg.approver = approver
    await reg.call("t_danger_full_access", {})
    await reg.call("t_danger_full_access", {})
    assert len(asked) == 1
    changed = _tool("t_danger_full_access", "danger_full_access").with_spec(description="New text.")
    reg.add(changed)
    await reg.call("t_danger_full_access", {})
    assert asked == ["A danger_full_access tool.", "New text."]


async def test_remote_clients_cannot_be_asked_even_with_an_approver(reg: Any) -> None:
    reg.approver = lambda *a: True
    reg.policy = Policy(grant="danger_full_access")
    # an agent is not told which nex.yaml line would let it in
    with pytest.raises(ApprovalRequired, match="person running this server") as info:
        await reg.call("t_danger_full_access", {}, request=RequestInfo(client="mcp"))
    assert "nex.yaml" not in str(info.value)
    # the sidebar's user is the Jupyter server's own (authenticated) user: told both ways
    with pytest.raises(ApprovalRequired, match="sidebar"):
        await reg.call("t_danger_full_access", {}, request=RequestInfo(client="rest"))
    with pytest.raises(ApprovalRequired, match="pre_approved"):  # a person at the CLI is
        await reg.call("t_danger_full_access", {}, request=RequestInfo(client="cli"))


async def test_the_time_of_an_approved_call_is_the_tools_own(reg: Any) -> None:
    """A call that waited for a person's answer reports how long the tool ran, not how long
    the person took: the time since the answer bounds it."""
    import asyncio
    import time

    answered: list[float] = []

    async def slow_person(tool: Tool, arguments: Any, request: RequestInfo) -> Any:
        await asyncio.sleep(0.5)
        answered.append(time.perf_counter())
        return True

    reg.approver = slow_person
    result = await reg.call("t_danger_full_access", {})
    since_answer = time.perf_counter() - answered[0]
    assert result.duration <= since_answer
    sync = reg.call_sync("t_danger_full_access", {})  # the sync path as well
    assert sync.duration <= time.perf_counter() - answered[1]
