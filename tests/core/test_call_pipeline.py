"""One call pipeline for every entry point, decided from the caller's description.

The async path (``call``) and the sync fast path (``call_sync`` of a sync tool) must give the
same answers: these tests run each behaviour through both.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pytest

from nexus_jupyter import (
    ApprovalRequired,
    CancellationToken,
    PermissionDenied,
    Registry,
    RequestInfo,
    ToolContext,
    ToolResult,
    ToolValidationError,
    tool,
)
from nexus_jupyter.core.policy.audit import AuditLog
from nexus_jupyter.core.policy.policy import Decision, Policy
from nexus_jupyter.core.tools.context import (
    CLI_CALLER,
    LOCAL_CALLER,
    MCP_CALLER,
    NOTEBOOK_CALLER,
    REST_CALLER,
    Caller,
)
from nexus_jupyter.core.tools.spec import ToolSpec

runs: list[str] = []


@tool
def record(text: str, *, ctx: ToolContext) -> str:
    runs.append(text)
    return f"{text} from {ctx.request.request_id}"


@tool
def plain(text: str) -> str:
    runs.append(text)
    return text


@tool(permission="danger_full_access")
def wipe() -> str:
    return "wiped"


@tool
def where() -> str:
    return threading.current_thread().name


@pytest.fixture
def reg() -> Any:
    runs.clear()
    registry = Registry(search="keyword")
    registry.add(record)
    registry.add(plain)
    yield registry
    registry.close()


@pytest.fixture(params=["call", "call_sync"])
def call(request: pytest.FixtureRequest, reg: Registry) -> Any:
    """The registry's async path (on its loop) or its sync path, with the same signature."""
    if request.param == "call":
        return lambda name, arguments=None, **options: reg.loop.run(
            reg.call(name, arguments, **options)
        )
    return reg.call_sync


def test_the_request_id_comes_back_on_both_paths(call: Any) -> None:
    request = RequestInfo(request_id="r-42", caller=NOTEBOOK_CALLER)
    result = call("plain", {"text": "a"}, request=request)
    assert result.request_id == "r-42"
    assert call("record", {"text": "b"}, request=request).value == "b from r-42"
    assert call("plain", {"text": "c"}).request_id is None  # a local call names no request


def test_a_call_cancelled_before_it_starts_never_runs_on_both_paths(call: Any) -> None:
    token = CancellationToken()
    token.cancel()
    for name in ("plain", "record"):
        result = call(name, {"text": "x"}, cancellation=token)
        assert result.error_type == "CancelledError", result
    assert runs == []


def test_the_audit_line_is_the_same_on_both_paths(call: Any, reg: Registry, tmp_path: Any) -> None:
    audit = AuditLog(tmp_path / "audit.jsonl")
    reg.audit = audit
    call("plain", {"text": "x"}, request=RequestInfo(request_id="r-1", caller=CLI_CALLER))
    (line,) = audit.read()
    assert (line["tool"], line["request_id"], line["client"], line["decision"]) == (
        "plain",
        "r-1",
        "cli",
        "allow",
    )


def test_an_approver_answers_on_both_paths(call: Any, reg: Registry) -> None:
    reg.policy = Policy()
    reg.add(wipe)
    asked: list[str] = []

    def approver(tool: Any, arguments: Any, request: RequestInfo) -> Any:
        asked.append(request.caller.face)
        return "always"

    reg.approver = approver
    assert call("wipe", request=RequestInfo(caller=NOTEBOOK_CALLER)).value == "wiped"
    assert call("wipe").value == "wiped"  # remembered for the session: not asked again
    assert asked == ["notebook"]


@pytest.mark.parametrize(
    ("caller", "advice"),
    [
        (CLI_CALLER, "Pass --yes"),
        (MCP_CALLER, "only the person running this server"),
        (REST_CALLER, "sidebar"),
        (NOTEBOOK_CALLER, "%tool try wipe"),
        (LOCAL_CALLER, "approved=True"),
    ],
)
def test_approval_advice_is_worded_for_the_face(
    call: Any, reg: Registry, caller: Caller, advice: str
) -> None:
    reg.policy = Policy(grant="danger_full_access")  # every face may, after approval
    reg.add(wipe)
    with pytest.raises(ApprovalRequired, match=advice) as raised:
        call("wipe", request=RequestInfo(caller=caller))
    # only an agent is not told which nex.yaml line would raise its own rights
    assert ("pre_approved" in str(raised.value)) == (caller is not MCP_CALLER)


def test_decisions_follow_the_callers_fields_not_its_name(call: Any, reg: Registry) -> None:
    """A face nobody documented, described by its fields: remote, no approvals, its own grant."""
    reg.policy = Policy(grant={"default": "danger_full_access", "rest": "read_only"})
    reg.add(wipe)
    reg.approver = lambda tool, arguments, request: True
    kiosk = Caller("python", remote=True, grant="rest", can_approve=False, inline="never")
    request = RequestInfo(caller=kiosk)
    assert request.client == "python" and request.principal_name == "unknown"
    with pytest.raises(PermissionDenied, match="read_only"):
        call("wipe", request=request)  # the grant its fields name
    trusted = Caller("python", remote=True, grant="default", can_approve=False)
    with pytest.raises(ApprovalRequired):
        call("wipe", request=RequestInfo(caller=trusted))  # an approver exists, but not here
    assert call("wipe", request=RequestInfo(caller=Caller(remote=True))).value == "wiped"


async def test_the_inline_rule_comes_from_the_caller(reg: Registry) -> None:
    reg.add(where)
    for _ in range(40):  # prove the tool fast for every rule that allows inline runs
        await reg.call("where")
    here = threading.current_thread().name
    never = Caller("python", inline="never")
    assert (await reg.call("where")).value == here
    assert (await reg.call("where", request=RequestInfo(caller=never))).value != here
    assert (await reg.call("where", request=RequestInfo(caller=MCP_CALLER))).value == here


def test_a_hand_built_request_gets_the_caller_of_its_client() -> None:
    assert RequestInfo().caller is LOCAL_CALLER and RequestInfo().client == "python"
    assert RequestInfo(client="mcp").caller is MCP_CALLER
    assert RequestInfo(client="rest").caller is REST_CALLER
    assert RequestInfo(client="cli").caller is CLI_CALLER
    assert RequestInfo(caller=REST_CALLER).client == "rest"
    stranger = RequestInfo(client="my-daemon")  # unknown: remote and unnamed, cannot approve
    assert stranger.caller.remote and stranger.principal_name == "unknown"
    assert RequestInfo(principal="alice", client="mcp").principal_name == "alice"


class DenyRemote:
    """A policy of someone else's: only the :class:`CallPolicy` methods."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bool]] = []

    def check(self, spec: ToolSpec, arguments: Mapping[str, Any], request: RequestInfo) -> Decision:
        self.seen.append((spec.name, request.caller.remote))
        if request.caller.remote:
            return Decision("deny", "remote callers may not call anything here")
        return Decision("allow", "local")

    def remember(self, spec: ToolSpec, request: RequestInfo | None = None) -> None:
        raise AssertionError("never asked")


def test_a_registry_takes_any_policy_with_the_protocols_methods(call: Any, reg: Registry) -> None:
    policy = DenyRemote()
    reg.policy = policy
    assert isinstance(call("plain", {"text": "ok"}), ToolResult)
    with pytest.raises(PermissionDenied, match="remote callers"):
        call("plain", {"text": "no"}, request=RequestInfo(caller=MCP_CALLER))
    assert policy.seen == [("plain", False), ("plain", True)]
    assert runs == ["ok"]


@tool(permission="danger_full_access")
def erase(path: str, depth: int = 1) -> str:
    runs.append(path)
    return f"erased {path} to depth {depth}"


def test_only_a_call_that_could_run_is_put_to_the_approver(call: Any, reg: Registry) -> None:
    """Bad arguments are refused before anyone is asked (a user would approve a call that
    cannot run, again at each retry); a good call is asked about with the arguments the
    tool gets (converted, defaults filled in)."""
    reg.policy = Policy(grant="danger_full_access")
    reg.add(erase)
    shown: list[Any] = []

    def approver(tool: Any, arguments: Any, request: RequestInfo) -> bool:
        shown.append(arguments)
        return True

    reg.approver = approver
    notebook = RequestInfo(caller=NOTEBOOK_CALLER)
    for wrong in ({"path": 5}, {}, {"path": "/x", "depth": "deep", "extra": 1}):
        with pytest.raises(ToolValidationError):
            call("erase", wrong, request=notebook)
    assert shown == [] and runs == []
    assert call("erase", {"path": "/x", "depth": "2"}, request=notebook).value == (
        "erased /x to depth 2"
    )
    assert call("erase", {"path": "/y"}, request=notebook).value == "erased /y to depth 1"
    assert shown == [{"path": "/x", "depth": 2}, {"path": "/y", "depth": 1}]
    # a face with no one to ask: the arguments first too, then the refusal that says how
    with pytest.raises(ToolValidationError):
        call("erase", {"path": 5}, request=RequestInfo(caller=MCP_CALLER))
    with pytest.raises(ApprovalRequired) as refused:
        call("erase", {"path": "/z", "depth": "3"}, request=RequestInfo(caller=MCP_CALLER))
    assert refused.value.arguments == {"path": "/z", "depth": 3}


def test_a_blocked_tool_is_refused_before_its_arguments_are_read(call: Any, reg: Registry) -> None:
    """A denial comes first: the refusal does not tell the blocked tool's parameters."""
    reg.policy = Policy(grant="read_only")
    reg.add(erase)
    with pytest.raises(PermissionDenied):
        call("erase", {"path": 5}, request=RequestInfo(caller=NOTEBOOK_CALLER))
