"""Aggregation of a real upstream MCP server (``@modelcontextprotocol/server-everything``, npm,
as a real process) served again by nexus: its resources, templates and prompts, the
``resource_link``s its tools return, and its elicitation and sampling requests relayed to
the client that made the call (the real SDK client)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from serving import serve_http  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry
from nexus_jupyter.serve.mcp_server import McpServerHandle
from nexus_jupyter.sources.mcp import McpSource

TESTS = Path(__file__).resolve().parents[1]
EVERYTHING = TESTS / "mcp_peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE22 = TESTS / "conformance/node_modules/.bin/node"
NODE = str(NODE22) if NODE22.exists() else shutil.which("node")

pytestmark = pytest.mark.skipif(
    not EVERYTHING.exists() or NODE is None,
    reason="server-everything is not installed: run `make npm-deps` (npm ci in tests/mcp_peers)",
)

PREFIX = "mcp__everything__"


@pytest.fixture
async def served() -> AsyncIterator[str]:
    reg = Registry()
    reg.add_source(McpSource("everything", command=str(NODE), args=[str(EVERYTHING), "stdio"]))
    handle = McpServerHandle.start(reg, port=0)
    try:
        for _ in range(300):  # it connects in the background
            if reg.find(f"{PREFIX}echo") is not None:
                break
            await asyncio.sleep(0.1)
        assert reg.find(f"{PREFIX}echo") is not None, reg.sources()
        yield handle.url
    finally:
        handle.stop()
        reg.close()


class User:
    def __init__(self) -> None:
        self.elicited: list[Any] = []
        self.sampled: list[Any] = []

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.elicited.append(params)
        return types.ElicitResult(action="decline")

    async def sample(self, context: Any, params: Any) -> types.CreateMessageResult:
        self.sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="a sampled answer"),
            model="fake-model",
        )


def text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


async def test_upstream_resources_templates_and_prompts_are_served(served: str) -> None:
    async with mcp.Client(served, mode="legacy") as client:
        resources = (await client.list_resources()).resources
        assert resources and all(r.name.startswith(PREFIX) for r in resources)
        first = resources[0]
        read = await client.read_resource(str(first.uri))
        assert read.contents and str(read.contents[0].uri) == str(first.uri)
        templates = {
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        }
        assert "demo://resource/dynamic/text/{resourceId}" in templates
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert f"{PREFIX}simple-prompt" in prompts
        got = await client.get_prompt(f"{PREFIX}simple-prompt")
        assert got.messages and got.messages[0].role == "user"

        # A resource_link an upstream tool returns can be read through nexus.
        linked = await client.call_tool(f"{PREFIX}get-resource-links", {"count": 2})
        links = [b for b in linked.content if b.type == "resource_link"]
        assert len(links) == 2
        for link in links:
            contents = (await client.read_resource(str(link.uri))).contents
            assert str(contents[0].uri) == str(link.uri)


async def test_upstream_questions_are_relayed_to_the_calling_client(served: str) -> None:
    user = User()
    async with mcp.Client(
        served, mode="legacy", elicitation_callback=user.elicit, sampling_callback=user.sample
    ) as client:
        listing = {t.name: t for t in (await client.list_tools()).tools}
        names = set(listing)
        # title and annotations pass through as the upstream declared them
        elicit_tool = listing[f"{PREFIX}trigger-elicitation-request"]
        assert elicit_tool.title == "Trigger Elicitation Request Tool"
        assert elicit_tool.annotations is not None
        assert elicit_tool.annotations.open_world_hint is False
        assert elicit_tool.annotations.destructive_hint is False
        sampled = await client.call_tool(f"{PREFIX}trigger-sampling-request", {"prompt": "hi"})
        assert not sampled.is_error, text(sampled)
        assert "a sampled answer" in text(sampled)
        assert user.sampled and user.sampled[0].messages[0].content.text.endswith("hi")
        # listed only to clients that can be asked: nexus declares elicitation upstream
        assert f"{PREFIX}trigger-elicitation-request" in names
        asked = await client.call_tool(f"{PREFIX}trigger-elicitation-request", {})
        assert not asked.is_error, text(asked)
        assert user.elicited and "name" in user.elicited[0].requested_schema["properties"]
        assert "decline" in text(asked)


async def test_through_nexus_tools_serve_at_both_revisions(tmp_path: Path) -> None:
    """The real command (its own serving loop, the upstream on the registry's loop), with a
    2026-07-28 client too: the upstream question becomes nexus's input-required result, and
    the upstream call runs again with the answer."""
    (tmp_path / "nex.yaml").write_text(
        f"mcp:\n  servers:\n    - {{name: everything, command: {NODE}, "
        f"args: [{EVERYTHING}, stdio]}}\n"
    )
    extra = ("--root", str(tmp_path), "--config", str(tmp_path / "nex.yaml"))
    with serve_http(tmp_path, *extra, clean_stop=True) as served:
        url = served.url
        for mode in ("legacy", "auto"):
            user = User()
            async with mcp.Client(
                url, mode=mode, elicitation_callback=user.elicit, sampling_callback=user.sample
            ) as client:  # type: ignore[arg-type]
                for _ in range(300):  # the upstream connects in the background
                    listing = await client.list_tools(cache_mode="refresh")
                    if any(t.name == f"{PREFIX}trigger-sampling-request" for t in listing.tools):
                        break
                    await asyncio.sleep(0.1)
                sampled = await client.call_tool(
                    f"{PREFIX}trigger-sampling-request", {"prompt": "hi"}
                )
                assert not sampled.is_error, text(sampled)
                assert "a sampled answer" in text(sampled)
                assert len(user.sampled) == 1  # asked once, whatever the rounds
