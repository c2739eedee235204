"""Approval at the MCP client: a call whose policy asks is put to the client's user through
elicitation, bound to that exact call (a real server on the registry loop, the SDK client)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import mcp
import mcp_types as types
import pytest

from nexus_jupyter import Registry, tool
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.serve.mcp_approval import APPROVAL_KEY, APPROVE, DENY
from nexus_jupyter.serve.mcp_bridge import FIELD_ERRORS_META_KEY
from nexus_jupyter.serve.mcp_server import McpServerHandle


@pytest.fixture
def served() -> Iterator[tuple[str, list[str]]]:
    ran: list[str] = []

    @tool(permission="danger_full_access")
    def wipe(path: str, depth: int = 1) -> str:
        """Delete a folder (asks first)."""
        ran.append(path)
        return f"wiped {path}"

    reg = Registry()
    reg.add(wipe)
    reg.policy = Policy(grant="danger_full_access")  # within the grant, but it asks
    handle = McpServerHandle.start(reg, port=0)
    try:
        yield handle.url, ran
    finally:
        handle.stop()
        reg.close()


class User:
    def __init__(self, decision: str) -> None:
        self.decision = decision
        self.asked: list[Any] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        return types.ElicitResult(action="accept", content={"decision": self.decision})


def text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_user_at_the_client_approves_once(
    served: tuple[str, list[str]], mode: str
) -> None:
    url, ran = served
    user = User(APPROVE)
    async with mcp.Client(url, mode=mode, elicitation_callback=user) as client:  # type: ignore[arg-type]
        result = await client.call_tool("wipe", {"path": "/tmp/x"})
    assert not result.is_error and text(result) == "wiped /tmp/x"
    assert ran == ["/tmp/x"]
    (question,) = user.asked
    assert "'wipe'" in question.message and "danger_full_access" in question.message
    assert '"path": "/tmp/x"' in question.message  # the exact arguments are shown
    assert question.requested_schema["properties"]["decision"]["enum"] == [APPROVE, DENY]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_denial_at_the_client_stops_the_call(
    served: tuple[str, list[str]], mode: str
) -> None:
    url, ran = served
    async with mcp.Client(url, mode=mode, elicitation_callback=User(DENY)) as client:  # type: ignore[arg-type]
        result = await client.call_tool("wipe", {"path": "/tmp/x"})
    assert result.is_error and "not approved" in text(result)
    assert ran == []


async def test_without_elicitation_the_refusal_says_who_can_allow(
    served: tuple[str, list[str]],
) -> None:
    url, ran = served
    async with mcp.Client(url, mode="legacy") as client:
        result = await client.call_tool("wipe", {"path": "/tmp/x"})
    assert result.is_error and "only the person running this server" in text(result)
    assert "nex.yaml" not in text(result)  # an agent is not told how to raise its rights
    assert ran == []


async def test_an_approval_cannot_be_replayed_or_moved_to_other_arguments(
    served: tuple[str, list[str]],
) -> None:
    url, ran = served
    yes = {APPROVAL_KEY: types.ElicitResult(action="accept", content={"decision": APPROVE})}
    async with mcp.Client(url, mode="auto", elicitation_callback=User(APPROVE)) as client:
        session = client.session
        unasked = await session.call_tool(
            "wipe", {"path": "/a"}, input_responses=yes, allow_input_required=True
        )
        assert isinstance(unasked, types.InputRequiredResult)  # an unasked answer is ignored
        first = await session.call_tool("wipe", {"path": "/a"}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests) == [APPROVAL_KEY]
        state = first.request_state
        with pytest.raises(mcp.MCPError, match="another call"):
            await session.call_tool(
                "wipe", {"path": "/etc"}, input_responses=yes, request_state=state
            )
        done = await session.call_tool(
            "wipe", {"path": "/a"}, input_responses=yes, request_state=state
        )
        assert not done.is_error and ran == ["/a"]  # type: ignore[union-attr]
        with pytest.raises(mcp.MCPError, match="already used"):
            await session.call_tool(
                "wipe", {"path": "/a"}, input_responses=yes, request_state=state
            )
    assert ran == ["/a"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_bad_arguments_are_refused_before_the_user_is_asked(
    served: tuple[str, list[str]], mode: str
) -> None:
    """A call that cannot run is not put to the user (who would approve it for nothing, and
    again at each retry of the agent); a good one is, with the arguments the tool gets."""
    url, ran = served
    user = User(APPROVE)
    async with mcp.Client(url, mode=mode, elicitation_callback=user) as client:  # type: ignore[arg-type]
        for wrong in ({"path": 5}, {}, {"path": "/a", "depth": "deep"}):
            result = await client.call_tool("wipe", wrong)
            assert result.is_error and "Invalid arguments for tool 'wipe'" in text(result)
            assert result.meta and result.meta[FIELD_ERRORS_META_KEY]
        assert user.asked == [] and ran == []
        result = await client.call_tool("wipe", {"path": "/a", "depth": "2"})
    assert not result.is_error and ran == ["/a"]
    (question,) = user.asked
    assert '"depth": 2' in question.message  # converted, as the tool gets it
