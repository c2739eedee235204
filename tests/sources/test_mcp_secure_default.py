"""MCP tools without annotations ask for approval unless configured otherwise, and their
annotations are passed on to this server's own MCP clients exactly as declared."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_until  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import ApprovalRequired
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.serve.mcp_bridge import mcp_tool
from nexus_jupyter.sources.mcp import McpSource

pytestmark = pytest.mark.e2e

VENV_BIN = Path(sys.executable).parent
PEER_SERVER = Path(__file__).resolve().parents[1] / "mcp_peers" / "peer_server.py"


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(policy=Policy())
    peer = registry.add_source(McpSource("peer", command=sys.executable, args=[str(PEER_SERVER)]))
    time = registry.add_source(McpSource("time", command=str(VENV_BIN / "mcp-server-time")))
    wait_until(registry, lambda: peer.state == "ready" and time.state == "ready")
    yield registry
    registry.close()


def test_unannotated_mcp_tool_asks_and_annotated_read_only_runs(reg: Registry) -> None:
    echo = reg.get("mcp__peer__echo").spec
    assert echo.annotations == {} and echo.permission == "workspace_write"
    with pytest.raises(ApprovalRequired, match="mcp__peer__echo"):
        reg.call_sync("mcp__peer__echo", {"text": "hi"})
    assert reg.call_sync("mcp__peer__echo", {"text": "hi"}, approved=True).text == "hi"
    result = reg.call_sync("mcp__time__get_current_time", {"timezone": "UTC"})
    assert result.ok, result.error


def test_configuration_can_pre_approve_an_unannotated_tool(reg: Registry) -> None:
    reg.policy = Policy(rules=[{"tool": "mcp__peer__*", "action": "pre_approved"}])
    assert reg.call_sync("mcp__peer__echo", {"text": "ok"}).text == "ok"


async def test_a_client_of_this_server_sees_the_annotations_as_declared(reg: Registry) -> None:
    import mcp

    from nexus_jupyter.serve.mcp_server import RegistryServer

    served = RegistryServer(reg)
    served.attach()
    try:
        async with mcp.Client(served.server) as client:  # a real client, in memory
            listed = {t.name: t for t in (await client.list_tools()).tools}
    finally:
        served.detach()
    assert listed["mcp__peer__echo"].annotations is None  # absent stays absent
    declared = reg.get("mcp__time__get_current_time").spec.annotations
    assert declared  # mcp-server-time declares readOnlyHint
    time_hints = listed["mcp__time__get_current_time"].annotations
    assert time_hints.model_dump(by_alias=True, exclude_none=True) == declared


def test_annotations_are_passed_on_as_declared(reg: Registry) -> None:
    served_echo = mcp_tool(reg.get("mcp__peer__echo").spec)
    assert served_echo.annotations is None  # absent stays absent: no destructiveHint: false
    declared = reg.get("mcp__time__get_current_time").spec.annotations
    served_time = mcp_tool(reg.get("mcp__time__get_current_time").spec)
    assert served_time.annotations.model_dump(by_alias=True, exclude_none=True) == declared
    own = mcp_tool(reg.get("mcp__time__get_current_time").spec.evolve(source_kind="notebook"))
    assert own.annotations is not None  # our own tools still get hints from the permission
