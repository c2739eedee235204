"""Each face says what kind of caller it is; the registry decides from that description.

The MCP handler is driven in process (the protocol itself is covered by test_mcp_server.py);
the notebook's ``call_tool`` through its public function.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest

from nexus_jupyter import Registry, RequestInfo, ToolContext, tool
from nexus_jupyter.core.policy.audit import AuditLog
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.notebook.api import call_tool
from nexus_jupyter.serve.mcp_server import RegistryServer


@tool
def who(*, ctx: ToolContext) -> dict[str, Any]:
    """Who is calling, as the registry sees it."""
    caller = ctx.request.caller
    return {"face": caller.face, "principal": ctx.request.principal_name}


@tool(permission="danger_full_access")
def wipe() -> str:
    """Needs approval."""
    return "wiped"


@pytest.fixture
def reg(tmp_path: Path) -> Any:
    registry = Registry(
        search="keyword",
        policy=Policy(grant="danger_full_access"),
        audit=AuditLog(tmp_path / "audit.jsonl"),
    )
    registry.add(who)
    registry.add(wipe)
    registry.approver = lambda tool, arguments, request: True  # someone, where they can answer
    yield registry
    registry.close()


async def mcp_call(reg: Registry, name: str) -> Any:
    params = types.CallToolRequestParams(name=name, arguments={})
    # a client that declared no capabilities (so it cannot be asked to approve)
    session = SimpleNamespace(check_client_capability=lambda wanted: False)
    ctx = SimpleNamespace(
        request_id=7, params=params, session=session, protocol_version="2025-11-25"
    )
    return await RegistryServer(reg)._call_tool(ctx, params)


async def test_the_mcp_face_calls_as_a_remote_agent(reg: Registry) -> None:
    result = await mcp_call(reg, "who")
    assert result.structured_content == {"face": "mcp", "principal": "unknown"}
    refused = await mcp_call(reg, "wipe")  # an approver exists, but no one answers over MCP
    assert refused.is_error
    assert "only the person running this server can allow it" in refused.content[0].text
    assert "nex.yaml" not in refused.content[0].text  # an agent is not told how to raise its rights
    assert isinstance(reg.audit, AuditLog)
    lines = reg.audit.read()
    assert [(line["client"], line["decision"]) for line in lines] == [
        ("mcp", "allow"),
        ("mcp", "ask-denied"),
    ]
    assert lines[0]["request_id"] == "mcp-7"


def test_the_notebook_face_calls_as_a_person_who_can_approve(reg: Registry) -> None:
    assert call_tool("who", registry=reg).structured == {"face": "notebook", "principal": "local"}
    assert call_tool("wipe", registry=reg).value == "wiped"  # the approver answered
    hand_built = call_tool("who", registry=reg, request=RequestInfo(client="rest"))
    assert hand_built.structured == {"face": "rest", "principal": "unknown"}
