"""The registry served over MCP, checked with the SDK's real client over stdio (a real
``python -m nexus_jupyter.serve.cli_serve`` process) and over streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from mcp.client.stdio import StdioServerParameters
from serving import serve_http  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry, ToolContext, tool
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.serve.mcp_bridge import FIELD_ERRORS_META_KEY
from nexus_jupyter.serve.mcp_server import McpServerHandle

pytestmark = pytest.mark.e2e

ADD_TOOL = '''from nexus_jupyter import tool


@tool(eager=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''

MUL_TOOL = '''from nexus_jupyter import tool


@tool
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "tools" / "dynamic"
    folder.mkdir(parents=True)
    (folder / "add.py").write_text(ADD_TOOL)
    return tmp_path


def text(result: types.CallToolResult) -> str:
    """The first content block's text (asserting it is text)."""
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


class Inbox:
    """Collects the server notifications a client receives."""

    def __init__(self) -> None:
        self.list_changed = asyncio.Event()
        self.count = 0

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self.list_changed.set()


def stdio_params(project: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        cwd=str(project),
        args=["-m", "nexus_jupyter.serve.cli_serve", "--dir", "tools/dynamic", *extra],
    )


@pytest.fixture
def http_server(project: Path) -> Iterator[str]:
    """``nexus-tools serve --transport http --port 0`` as a real process; yields its URL."""
    with serve_http(project, "--dir", "tools/dynamic", clean_stop=True) as served:
        yield served.url


@asynccontextmanager
async def connect(target: Any, mode: str) -> AsyncIterator[tuple[mcp.Client, Inbox]]:
    inbox = Inbox()
    async with mcp.Client(target, mode=mode, message_handler=inbox) as client:
        yield client, inbox


async def check_session(client: mcp.Client, inbox: Inbox, project: Path, legacy: bool) -> None:
    names = {t.name for t in (await client.list_tools()).tools}
    assert "add" in names and "mul" not in names
    listing = {t.name: t for t in (await client.list_tools()).tools}
    schema = listing["add"].output_schema
    assert schema is not None and schema["properties"]["result"] == {"type": "integer"}
    result = await client.call_tool("add", {"a": 2, "b": 40})
    assert not result.is_error and result.structured_content == {"result": 42}
    assert text(result) == "42"
    bad = await client.call_tool("add", {"a": "two"})
    assert bad.is_error
    message = text(bad)
    assert "$.a" in message and "$.b" in message  # one message per invalid field
    assert bad.meta is not None
    fields = {e["path"] for e in bad.meta[FIELD_ERRORS_META_KEY]}
    assert fields == {"$.a", "$.b"}
    # a tool file saved during the session: list_changed, and callable in the same session
    if legacy:
        (project / "tools" / "dynamic" / "mul.py").write_text(MUL_TOOL)
        await asyncio.wait_for(inbox.list_changed.wait(), 15)
    else:
        async with client.listen(tools_list_changed=True) as sub:
            (project / "tools" / "dynamic" / "mul.py").write_text(MUL_TOOL)
            event = await asyncio.wait_for(anext(aiter(sub)), 15)
            assert type(event).__name__ == "ToolsListChanged"
    assert "mul" in {t.name for t in (await client.list_tools()).tools}
    product = await client.call_tool("mul", {"a": 6, "b": 7})
    assert product.structured_content == {"result": 42}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_serve_lists_calls_and_reports_new_tool_files(project: Path, mode: str) -> None:
    async with connect(stdio_params(project), mode) as (client, inbox):
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        tools = client.server_capabilities.tools
        assert tools is not None and tools.list_changed
        await check_session(client, inbox, project, legacy=mode == "legacy")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_http_serve_lists_calls_and_reports_new_tool_files(
    project: Path, http_server: str, mode: str
) -> None:
    assert http_server.startswith("http://127.0.0.1:")
    async with connect(http_server, mode) as (client, inbox):
        await check_session(client, inbox, project, legacy=mode == "legacy")


async def test_defer_lists_eager_tools_and_tool_search_only(project: Path) -> None:
    (project / "tools" / "dynamic" / "mul.py").write_text(MUL_TOOL)  # not eager
    async with connect(stdio_params(project), "legacy") as (client, _inbox):
        everything = {t.name for t in (await client.list_tools()).tools}
    async with connect(stdio_params(project, "--defer"), "legacy") as (client, _inbox):
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"add", "tool_search"} <= names and "mul" not in names
        assert "mul" in everything and names < everything
        found = await client.call_tool("tool_search", {"query": "select:mul"})
        assert not found.is_error and "Multiply two integers" in text(found)
        product = await client.call_tool("mul", {"a": 3, "b": 5})  # deferred, still callable
        assert product.structured_content == {"result": 15}


@pytest.fixture
def kernel_registry() -> Iterator[Registry]:
    reg = Registry()
    yield reg
    reg.close()


async def test_handle_serves_a_live_registry_with_progress_and_cancellation(
    kernel_registry: Registry,
) -> None:
    reg = kernel_registry
    cancelled = threading.Event()
    waiting = threading.Event()  # set once wait_forever runs

    @tool
    async def steps(n: int, *, ctx: ToolContext) -> list[int]:
        """Count to n, reporting progress."""
        for i in range(1, n + 1):
            await ctx.progress(i, n, f"step {i}")
        return list(range(1, n + 1))

    @tool
    def wait_forever(*, ctx: ToolContext) -> str:
        """Block until cancelled."""
        ctx.cancellation.on_cancel(cancelled.set)
        waiting.set()
        cancelled.wait(30)
        return "stopped"

    reg.add(steps)
    reg.add(wait_forever)
    handle = McpServerHandle.start(reg, port=0)
    try:
        async with connect(handle.url, "legacy") as (client, inbox):
            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(
                progress: float, total: float | None, message: str | None
            ) -> None:
                seen.append((progress, total, message))

            result = await client.call_tool("steps", {"n": 3}, progress_callback=on_progress)
            assert result.structured_content == {"result": [1, 2, 3]}
            assert [s[0] for s in seen] == [1, 2, 3] and seen[-1][2] == "step 3"
            call = asyncio.ensure_future(client.call_tool("wait_forever", {}))
            assert await asyncio.to_thread(waiting.wait, 10)  # the call runs: now cancel it
            call.cancel()  # the SDK sends notifications/cancelled
            await asyncio.to_thread(cancelled.wait, 10)
            assert cancelled.is_set()

            @tool
            def late(x: str) -> str:
                """Added from the kernel after the client connected."""
                return x.upper()

            reg.add(late)
            await asyncio.wait_for(inbox.list_changed.wait(), 10)
            assert text(await client.call_tool("late", {"x": "hi"})) == "HI"
    finally:
        handle.stop()
    assert not handle.running


async def test_policy_refusals_are_tool_errors_with_the_reason(kernel_registry: Registry) -> None:
    reg = kernel_registry
    reg.policy = Policy(grant="workspace_write")

    @tool(permission="danger_full_access")
    def nuke() -> str:
        """Dangerous."""
        return "boom"

    reg.add(nuke)
    handle = McpServerHandle.start(reg, port=0)
    try:
        async with connect(handle.url, "auto") as (client, _inbox):
            result = await client.call_tool("nuke", {})
            assert result.is_error
            assert "nuke" in text(result) and "danger_full_access" in text(result)
            with pytest.raises(mcp.MCPError, match="No tool named") as unknown:
                await client.call_tool("missing_tool", {})
            # an agent gets agent advice, not the notebook's `%tool list`
            assert "tool_search" in str(unknown.value) and "%tool" not in str(unknown.value)
        reg.policy = Policy(grant="danger_full_access")  # within the grant, but it asks
        async with connect(handle.url, "legacy") as (client, _inbox):
            result = await client.call_tool("nuke", {})
            assert result.is_error and "needs approval" in text(result)
            # never tells the remote caller which nex.yaml line would let it in
            assert "pre_approved" not in text(result) and "running this server" in text(result)
    finally:
        handle.stop()


async def test_configured_mcp_servers_are_served_on(project: Path) -> None:
    """MCP server -> McpSource -> our registry -> nexus-tools serve -> an MCP client."""
    time_server = Path(sys.executable).parent / "mcp-server-time"
    (project / "nex.yaml").write_text(
        f"mcp:\n  servers:\n    - {{name: time, command: {time_server}}}\n"
    )
    params = stdio_params(project, "--config", str(project / "nex.yaml"))
    async with connect(params, "legacy") as (client, inbox):
        names = {t.name for t in (await client.list_tools()).tools}
        if "mcp__time__get_current_time" not in names:  # it connects in the background
            await asyncio.wait_for(inbox.list_changed.wait(), 30)
            names = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__time__get_current_time" in names
        result = await client.call_tool("mcp__time__get_current_time", {"timezone": "UTC"})
        assert not result.is_error, text(result)
        assert result.structured_content is not None
        assert result.structured_content["timezone"] == "UTC"


@pytest.mark.timing  # a latency target: runs alone, after the parallel phase
async def test_a_slow_subscriber_does_not_delay_a_save_reaching_mcp_clients(
    project: Path, kernel_registry: Registry
) -> None:
    """Change delivery never blocks the changer: a subscriber that sleeps 1 s per event
    (a widget rebuilding its rows, say) delays neither the next reload nor the client."""
    reg = kernel_registry
    slow_calls: list[float] = []

    def slow(_change: Any) -> None:
        slow_calls.append(time.monotonic())
        time.sleep(1.0)

    reg.subscribe(slow)
    folder = project / "tools" / "dynamic"
    source = reg.watch(folder)
    assert source.wait_ready(10)
    handle = McpServerHandle.start(reg, port=0)
    try:
        async with connect(handle.url, "legacy") as (client, inbox):
            await client.list_tools()
            delays = []
            for i in range(3):
                inbox.list_changed.clear()
                started = time.monotonic()
                (folder / f"mul{i}.py").write_text(MUL_TOOL.replace("def mul", f"def mul{i}"))
                await asyncio.wait_for(inbox.list_changed.wait(), 10)
                delays.append(time.monotonic() - started)
                assert text(await client.call_tool(f"mul{i}", {"a": 6, "b": 7})) == "42"
            # each save arrived while the slow subscriber still slept on an earlier event
            assert slow_calls and all(d < 1.0 for d in delays), (delays, slow_calls)
            assert sorted(delays)[1] <= 0.150, delays
    finally:
        handle.stop()


async def test_call_results_carry_the_calls_summary_in_meta(project: Path) -> None:
    (project / "tools" / "dynamic" / "calc.py").write_text(
        "from nexus_jupyter import tool\n\n\n"
        '@tool(summary="Calculating: {a} {operation} {b}")\n'
        "def calc(a: int, operation: str, b: int) -> int:\n"
        '    """Apply add or mul to two integers."""\n'
        '    return a + b if operation == "add" else a * b\n'
    )
    params = stdio_params(project).model_copy(update={"env": dict(os.environ)})  # this checkout
    async with connect(params, "legacy") as (client, _inbox):
        result = await client.call_tool("calc", {"a": 2, "operation": "add", "b": 3})
        assert result.meta["nexus-jupyter/summary"] == "Calculating: 2 add 3"
        plain = await client.call_tool("add", {"a": 1, "b": 2})
        assert plain.meta["nexus-jupyter/summary"] == "add(a=1, b=2)"


TYPED_TOOL = '''import datetime
from typing import Literal

from nexus_jupyter import tool


@tool
def typed(when: datetime.date, color: Literal["red", "blue"], path: str) -> str:
    """Takes a date."""
    return f"{when.isoformat()} {color} {path}"
'''


async def test_every_wrong_argument_is_refused_at_once_with_field_errors(project: Path) -> None:
    """A tool file served over stdio (its calls checked by JSON Schema, then run in a worker):
    the date is refused with the wrong JSON types, in one message and one format."""
    (project / "tools" / "dynamic" / "typed.py").write_text(TYPED_TOOL)
    async with connect(stdio_params(project), "legacy") as (client, _inbox):
        bad = await client.call_tool("typed", {"when": "tomorrow", "color": "green", "path": 3})
        good = await client.call_tool("typed", {"when": "2026-01-02", "color": "red", "path": "p"})
    assert bad.is_error and text(bad).startswith("Invalid arguments for tool 'typed':")
    assert bad.meta is not None
    said = {e["path"]: e["message"] for e in bad.meta[FIELD_ERRORS_META_KEY]}
    assert said == {
        "$.when": "expected a date (YYYY-MM-DD)",
        "$.color": 'must be one of: "red", "blue"',
        "$.path": "expected a string",
    }
    assert not good.is_error and text(good) == "2026-01-02 red p"
