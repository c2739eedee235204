"""Task listing and status notifications through ``nexus-tools serve`` (a real server process
on a real tools folder): ``tasks/list`` and ``notifications/tasks/status`` for 2025-11-25
clients (the SDK client), ``notifications/tasks`` on a ``subscriptions/listen`` stream for
2026-07-28 clients (the wire itself), and the 2025-11-25 rules on ending tasks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import mcp
import mcp_types as types
import pytest
from raw_jsonrpc import RawMcp  # tests/ is on sys.path (rootdir conftest)
from serving import serve_http

from nexus_jupyter.sources.mcp_tasks import TASKS_EXTENSION

TOOL_FILE = '''
import asyncio

from nexus_jupyter import ToolContext, tool


@tool(task=True)
async def nap(seconds: float) -> str:
    """Sleep, then say so."""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g} s"


@tool(task=True)
def refuse() -> str:
    """Always fails (a tool error)."""
    raise ValueError("no, thank you")


@tool(task=True)
async def steps(ctx: ToolContext) -> str:
    """Report progress, then finish."""
    for step in range(1, 3):
        await ctx.progress(step, 3, f"at {step}")
    return "done"


@tool
def plain() -> str:
    """No task support."""
    return "plain"


@tool(task="required")
async def ask_colour(ctx: ToolContext) -> str:
    """Ask inside the task, then finish."""
    answer = await ctx.elicit("Colour?", {"type": "object",
                              "properties": {"colour": {"type": "string"}}})
    return f"painted {answer.content.get('colour')}"
'''


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("task-status")
    folder = root / "tools"
    folder.mkdir()
    (folder / "naps.py").write_text(TOOL_FILE)
    with serve_http(root, "--root", str(root), "--dir", str(folder), clean_stop=True) as s:
        yield s.url


class Notes:
    """The ``notifications/tasks/status`` a client received (through a client extension's
    notification binding: the SDK leaves that method out of its 2025-11-25 tables)."""

    def __init__(self) -> None:
        from mcp.client.extension import ClientExtension, NotificationBinding

        self.status: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()
        notes = self

        class StatusWatcher(ClientExtension):
            identifier = "test.nexus/task-status"

            def notifications(self) -> list[NotificationBinding[Any]]:
                return [
                    NotificationBinding(
                        method="notifications/tasks/status",
                        params_type=types.TaskStatusNotificationParams,
                        handler=notes.got,
                    )
                ]

        self.extension = StatusWatcher()

    async def got(self, params: Any) -> None:
        self.status.append(params.model_dump(by_alias=True, mode="json", exclude_none=True))
        self.arrived.set()

    async def until(self, check: Any, deadline: float = 20.0) -> None:
        async with asyncio.timeout(deadline):
            while not check():
                self.arrived.clear()
                await self.arrived.wait()


async def _start(client: mcp.Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    raw = await client.session._dispatcher.send_raw_request(
        "tools/call", {"name": name, "arguments": arguments, "task": {"ttl": 60000}}, {}
    )
    return dict(raw["task"])


async def _raw(client: mcp.Client, method: str, params: dict[str, Any]) -> Any:
    return await client.session._dispatcher.send_raw_request(method, params, {})


async def test_2025_tasks_list_status_notifications_and_ending_rules(served: str) -> None:
    notes = Notes()
    async with (
        mcp.Client(served, mode="legacy", extensions=[notes.extension]) as client,
        mcp.Client(served, mode="legacy") as other,
    ):
        tasks_capability = client.server_capabilities.tasks  # type: ignore[union-attr]
        assert tasks_capability is not None and tasks_capability.list is not None
        first = await _start(client, "nap", {"seconds": 0.3})
        second = await _start(client, "refuse", {})
        theirs = await _start(other, "nap", {"seconds": 0})

        # the server says when each of this session's tasks ends, without a poll
        ended = {first["taskId"]: "completed", second["taskId"]: "failed"}
        await notes.until(lambda: {n["taskId"]: n["status"] for n in notes.status} == ended)
        assert all(n["taskId"] != theirs["taskId"] for n in notes.status)

        listed = await _raw(client, "tasks/list", {})
        assert [t["taskId"] for t in listed["tasks"]] == [first["taskId"], second["taskId"]]
        assert [t["status"] for t in listed["tasks"]] == ["completed", "failed"]
        assert "nextCursor" not in listed
        (only,) = (await _raw(other, "tasks/list", {}))["tasks"]
        assert only["taskId"] == theirs["taskId"]  # a session sees its own tasks only
        with pytest.raises(mcp.MCPError) as unknown:
            await _raw(other, "tasks/get", {"taskId": first["taskId"]})
        assert unknown.value.code == types.INVALID_PARAMS
        with pytest.raises(mcp.MCPError) as bad_cursor:
            await _raw(client, "tasks/list", {"cursor": "not-a-cursor!"})
        assert bad_cursor.value.code == types.INVALID_PARAMS
        assert "nextCursor" in str(bad_cursor.value)

        # 2025-11-25: a tool error is a failed task, whose result is the call's own
        result = await _raw(client, "tasks/result", {"taskId": second["taskId"]})
        assert result["isError"] is True and "no, thank you" in json.dumps(result)
        # ... and a task that has ended cannot be cancelled
        with pytest.raises(mcp.MCPError) as ended_already:
            await _raw(client, "tasks/cancel", {"taskId": first["taskId"]})
        assert ended_already.value.code == types.INVALID_PARAMS
        assert "already ended" in str(ended_already.value)


async def test_2025_tasks_list_pages(served: str) -> None:
    async with mcp.Client(served, mode="legacy") as client:
        made = [(await _start(client, "nap", {"seconds": 0}))["taskId"] for _ in range(105)]
        first = await _raw(client, "tasks/list", {})
        assert len(first["tasks"]) == 100 and first["nextCursor"]
        rest = await _raw(client, "tasks/list", {"cursor": first["nextCursor"]})
        assert "nextCursor" not in rest
        assert [t["taskId"] for t in first["tasks"] + rest["tasks"]] == made


async def _listen(url: str, params: dict[str, Any], extensions: bool) -> AsyncIterator[dict]:
    """The messages of one 2026-07-28 ``subscriptions/listen`` stream, as they come."""
    capabilities = {"extensions": {TASKS_EXTENSION: {}}} if extensions else {}
    body = {
        "jsonrpc": "2.0",
        "id": 41,
        "method": "subscriptions/listen",
        "params": {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": capabilities,
            },
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "subscriptions/listen",
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        async with http.stream("POST", url, json=body, headers=headers) as response:
            async for line in response.aiter_lines():
                if line.startswith("data:") and line[5:].strip():
                    yield json.loads(line[5:])
                elif line.startswith("{"):  # refused: a plain JSON answer
                    yield json.loads(line)


async def test_2026_task_notifications_on_a_listen_stream(served: str) -> None:
    post = RawMcp(served, extensions=[TASKS_EXTENSION])
    post.capabilities["elicitation"] = {}  # the task asks its user
    try:
        created = post("tools/call", {"name": "ask_colour", "arguments": {}})
        task_id = created["taskId"]
        stream = _listen(
            served,
            {"notifications": {"toolsListChanged": True, "taskIds": [task_id, "nope"]}},
            True,
        )
        seen: list[dict[str, Any]] = []
        async with asyncio.timeout(30):
            ack = await anext(stream)
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            honored = ack["params"]["notifications"]
            assert honored["taskIds"] == [task_id]  # not a task it may see: not honoured
            assert honored["toolsListChanged"] is True
            async for message in stream:
                assert message["method"] == "notifications/tasks", message
                task = message["params"]
                assert task["taskId"] == task_id
                assert task["_meta"]["io.modelcontextprotocol/subscriptionId"] == 41
                seen.append(task)
                if task["status"] == "input_required":
                    (key,) = task["inputRequests"]
                    answer = {key: {"action": "accept", "content": {"colour": "teal"}}}
                    await asyncio.to_thread(
                        post, "tasks/update", {"taskId": task_id, "inputResponses": answer}
                    )
                if task["status"] in ("completed", "failed", "cancelled"):
                    break
        await stream.aclose()
        statuses = [t["status"] for t in seen]
        assert "input_required" in statuses and statuses[-1] == "completed", statuses
        assert seen[-1]["result"]["content"][0]["text"] == "painted teal"
    finally:
        post.close()


async def test_2026_task_notifications_need_the_extension(served: str) -> None:
    stream = _listen(served, {"notifications": {"taskIds": ["any"]}}, False)
    async with asyncio.timeout(30):
        answer = await anext(stream)
    await stream.aclose()
    assert answer["error"]["code"] == -32021
    assert TASKS_EXTENSION in json.dumps(answer["error"])


async def test_2025_task_for_a_forbidden_tool_and_a_finished_status(served: str) -> None:
    async with mcp.Client(served, mode="legacy") as client:
        # taskSupport absent (forbidden): the spec says servers SHOULD answer -32601
        with pytest.raises(mcp.MCPError) as refused:
            await _start(client, "plain", {})
        assert refused.value.code == types.METHOD_NOT_FOUND
        assert "without 'task'" in str(refused.value)
        task = await _start(client, "steps", {})
        await _raw(client, "tasks/result", {"taskId": task["taskId"]})  # waits for the end
        got = await _raw(client, "tasks/get", {"taskId": task["taskId"]})
        assert got["status"] == "completed"
        assert "statusMessage" not in got  # not the last progress line ("2/3: at 2")
