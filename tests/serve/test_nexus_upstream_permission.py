"""A nexus registry serving another one's tools (a kernel's in the Jupyter server, `serve
--jupyter`) runs each at the level the upstream's policy runs it at, and keeps a tool's own
"ask every time": what the upstream's listing says in ``_meta``, round-tripped here through
the real listing entry and the real upstream source."""

from __future__ import annotations

from typing import Any

import mcp_types

from nexus_jupyter import Tool, tool
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.core.tools.context import RequestInfo
from nexus_jupyter.serve.mcp_bridge import mcp_tool
from nexus_jupyter.serve.nexus_upstream import NexusUpstream
from nexus_jupyter.sources.mcp import McpSource


@tool
def tally(n: int) -> int:
    """Count to n (no permission declared: the policy runs it as read_only)."""
    return n


@tool(permission="workspace_write")
def wipe(path: str) -> str:
    """Wipe a folder; a person approves every call (as an adapter's tool may say)."""
    return path


def _seen_by(source: Any, spec: Any) -> Any:
    listed = mcp_tool(spec).model_dump(by_alias=True, mode="json", exclude_none=True)
    return source._tool(mcp_types.Tool.model_validate(listed)).spec


def test_a_nexus_upstream_keeps_the_upstreams_level_and_its_ask() -> None:
    upstream = NexusUpstream("kernel", url="http://127.0.0.1:9/mcp")
    quiet = _seen_by(upstream, Tool.from_function(tally).spec)
    assert (quiet.permission, quiet.approval, quiet.needs_approval) == ("read_only", None, False)
    assert quiet.permission_declared is False  # re-served, it claims no readOnlyHint either
    asking = _seen_by(upstream, Tool.from_function(wipe).spec.evolve(needs_approval=True))
    assert (asking.permission, asking.needs_approval) == ("workspace_write", True)
    assert asking.approval_why == ""  # the tool's own flag: the policy says so itself
    reason = Policy().check(asking, {"path": "x"}, RequestInfo()).reason
    assert reason.endswith("needs approval: the tool itself requires approval for every call.")


def test_why_the_upstream_asks_travels_with_its_ask() -> None:
    """A kernel that asks because of its notebook's session (``%tool mode prompt``) says so,
    and the server's question says that, not that the tool itself always asks."""
    upstream = NexusUpstream("kernel", url="http://127.0.0.1:9/mcp")
    why = "its notebook asks first (mode: prompt says ask)"
    spec = Tool.from_function(wipe).spec.evolve(needs_approval=True, approval_why=why)
    seen = _seen_by(upstream, spec)
    assert (seen.needs_approval, seen.approval_why) == (True, why)
    decision = Policy().check(seen, {"path": "x"}, RequestInfo())
    assert decision.action == "ask" and decision.why == why
    assert decision.reason == f"Tool 'wipe' (workspace_write) needs approval: {why}."
    # served on once more (serve --jupyter), the why is kept
    assert (
        _seen_by(NexusUpstream("jupyter", url="http://127.0.0.1:9/mcp"), seen).approval_why == why
    )


def test_a_plain_mcp_server_cannot_lower_a_tools_level_through_meta() -> None:
    plain = McpSource("other", url="http://127.0.0.1:9/mcp")
    seen = _seen_by(
        plain, Tool.from_function(tally).spec
    )  # the same _meta, from a server that is no nexus
    assert seen.permission == "workspace_write"
    assert seen.approval is not None and seen.approval["action"] == "ask"
