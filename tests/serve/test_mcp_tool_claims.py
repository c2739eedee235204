"""What ``tools/list`` and ``tool_search`` tell an agent, read by the SDK's real client
(in memory): safety hints only where they are known, spec-conformant ``_meta`` keys, and
``tool_search`` answers that match the listing."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import mcp
import pytest

from nexus_jupyter import Registry, tool
from nexus_jupyter.sources.builtin import BuiltinSource

pytestmark = pytest.mark.e2e


@tool
def register(name: str) -> str:
    """Register a person for the event."""
    return f"registered {name}"


@tool(permission="read_only")
def lookup(name: str) -> str:
    """Look a person up."""
    return name


@tool(permission="workspace_write")
def note(text: str) -> str:
    """Append a note."""
    return text


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@asynccontextmanager
async def served(tmp_path: Path) -> AsyncIterator[mcp.Client]:
    from nexus_jupyter.serve.mcp_server import RegistryServer

    registry = Registry(search="keyword")
    registry.add_source(BuiltinSource(root=tmp_path, registry=registry))
    for fn in (register, lookup, note, divide, add):
        registry.add(fn)
    server = RegistryServer(registry)
    server.attach()
    try:
        async with mcp.Client(server.server) as client:
            yield client
    finally:
        server.detach()


async def test_hints_are_claimed_only_when_known(tmp_path: Path) -> None:
    async with served(tmp_path) as client:
        listing = {t.name: t for t in (await client.list_tools()).tools}
    hints = {
        n: (t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else {})
        for n, t in listing.items()
    }
    # no permission declared: nothing says it only reads (a client must not auto-approve it)
    assert "readOnlyHint" not in hints["register"]
    assert "destructiveHint" not in hints["register"]
    assert hints["lookup"]["readOnlyHint"] is True
    # workspace_write may replace content: not claimed additive
    assert hints["note"]["readOnlyHint"] is False and "destructiveHint" not in hints["note"]
    assert hints["write"]["destructiveHint"] is True and hints["write"]["idempotentHint"] is True
    assert hints["edit"]["destructiveHint"] is True and hints["edit"]["idempotentHint"] is False
    assert hints["read"]["readOnlyHint"] is True
    assert hints["bash"]["destructiveHint"] is True and hints["bash"]["openWorldHint"] is True


async def test_meta_keys_follow_the_spec_key_format(tmp_path: Path) -> None:
    label = re.compile(
        r"^([A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?/"
    )
    async with served(tmp_path) as client:
        tools = (await client.list_tools()).tools
        failed = await client.call_tool("divide", {"a": 1, "b": 0})
    keys = {k for t in tools for k in (t.meta or {})}
    keys |= {k for b in failed.content for k in (getattr(b, "meta", None) or {})}
    assert "nexus-jupyter/origin" in keys and "nexus-jupyter/traceback" in keys
    assert all(label.match(k) for k in keys), keys


async def test_tool_search_select_shows_the_listed_output_schema(tmp_path: Path) -> None:
    async with served(tmp_path) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}["add"].output_schema
        found = await client.call_tool("tool_search", {"query": "select:add"})
    answer = found.structured_content
    assert answer is not None
    assert answer["tools"][0]["output_schema"] == listed


async def test_tool_search_scores_counts_and_bounds(tmp_path: Path) -> None:
    async with served(tmp_path) as client:
        tools = (await client.list_tools()).tools
        search = next(t for t in tools if t.name == "tool_search")
        found = await client.call_tool("tool_search", {"query": "divide numbers"})
        too_many = await client.call_tool("tool_search", {"query": "x", "max_results": 99})
    bounds = search.input_schema["properties"]["max_results"]
    assert bounds["minimum"] == 1 and bounds["maximum"] == 50
    answer = found.structured_content
    assert answer is not None
    hit = answer["tools"][0]
    assert hit["name"] == "divide" and 0 < hit["score"] <= 1
    assert answer["min_score"] <= hit["score"]
    assert too_many.is_error and "max_results" in too_many.content[0].text
    assert "ValueError" not in too_many.content[0].text


async def test_tool_search_counts_what_the_caller_is_offered(tmp_path: Path) -> None:
    from nexus_jupyter.core.policy.policy import Policy
    from nexus_jupyter.serve.mcp_server import RegistryServer

    registry = Registry(search="keyword", policy=Policy(grant={"mcp": "read_only"}))
    registry.add_source(BuiltinSource(root=tmp_path, registry=registry))
    registry.add(lookup)
    server = RegistryServer(registry, granted_only=True)
    server.attach()
    try:
        async with mcp.Client(server.server) as client:
            listed = (await client.list_tools()).tools
            found = await client.call_tool("tool_search", {"query": "read a file"})
    finally:
        server.detach()
    answer = found.structured_content
    assert answer is not None
    assert answer["total_tools"] == len(listed), json.dumps(answer)


@pytest.mark.parametrize(("a", "b"), [(1e308, 1e-308), (0.0, 0.0)])
async def test_an_infinite_or_nan_result_is_a_tool_error(
    tmp_path: Path, a: float, b: float
) -> None:
    @tool(name="ratio")
    def ratio(a: float, b: float) -> float:
        """a/b, where 0/0 is NaN."""
        return a / b if b else float("nan")

    from nexus_jupyter.serve.mcp_server import RegistryServer

    registry = Registry(search="keyword")
    registry.add(ratio)
    server = RegistryServer(registry)
    server.attach()
    try:
        async with mcp.Client(server.server) as client:  # its output-schema check must pass
            result = await client.call_tool("ratio", {"a": a, "b": b})
    finally:
        server.detach()
    assert result.is_error and result.structured_content is None
    assert "infinity or NaN" in result.content[0].text
