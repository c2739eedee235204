"""Long calls as tasks (the MCP tasks extension) through ``nexus-tools serve``: a real server
process on a real tools folder, the real SDK client with nexus's tasks client extension; and
a task-only tool of a real upstream server (``server-everything``) called through nexus."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from raw_jsonrpc import RawMcp  # tests/ is on sys.path (rootdir conftest)
from serving import serve_http

from nexus_jupyter import Registry
from nexus_jupyter.sources.mcp import McpSource
from nexus_jupyter.sources.mcp_tasks import TASKS_EXTENSION, tasks_client_extension

TOOL_FILE = '''
import asyncio

from nexus_jupyter import ToolContext, tool

STARTED = []


@tool(task=True)
async def crunch(seconds: float, ctx: ToolContext) -> str:
    """Work a while, saying how far it got."""
    for step in range(3):
        await ctx.progress(step + 1, 3, f"step {step + 1}")
        await asyncio.sleep(seconds / 3)
    return f"crunched for {seconds:g} s"


@tool(task="required")
async def ask_then_work(ctx: ToolContext) -> str:
    """Ask inside the task, then finish."""
    answer = await ctx.elicit("Colour?", {"type": "object",
                              "properties": {"colour": {"type": "string"}}})
    return f"painted {answer.content.get('colour')}"


@tool(task=True)
async def forever() -> str:
    """Never finishes on its own."""
    await asyncio.sleep(3600)
    return "never"
'''


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("tasks")
    folder = root / "tools"
    folder.mkdir()
    (folder / "long.py").write_text(TOOL_FILE)
    with serve_http(root, "--root", str(root), "--dir", str(folder), clean_stop=True) as s:
        yield s.url


class User:
    def __init__(self) -> None:
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self.progress: list[str | None] = []

    async def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append((method, params))
        return {"action": "accept", "content": {"colour": "teal"}}

    async def on_progress(self, done: float, total: float | None, message: str | None) -> None:
        self.progress.append(message)


def text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


async def test_a_task_client_polls_answers_and_gets_the_result(served: str) -> None:
    user = User()
    extension = tasks_client_extension(user.answer, progress=user.on_progress)
    async with mcp.Client(
        served, mode="auto", extensions=[extension], elicitation_callback=_never
    ) as client:
        done = await client.call_tool("crunch", {"seconds": 1.5})
        assert not done.is_error and text(done) == "crunched for 1.5 s"
        assert any(m and m.startswith(("1/3", "2/3", "3/3")) for m in user.progress), user.progress
        painted = await client.call_tool("ask_then_work", {})
        assert text(painted) == "painted teal"
        ((method, params),) = user.asked
        assert method == "elicitation/create" and params["message"] == "Colour?"


async def test_raw_task_wire_and_cancel(served: str) -> None:
    """The wire as a client without the SDK's help sees it: the task at once, its status,
    cancel, and the gating of task-only tools."""
    async with mcp.Client(served, mode="auto", elicitation_callback=_never) as plain:
        # no extension declared: a task-capable tool just answers ...
        quick = await plain.call_tool("crunch", {"seconds": 0})
        assert text(quick) == "crunched for 0 s"
        # ... and a task-only one is refused with -32021, naming the extension
        with pytest.raises(mcp.MCPError) as refused:
            await plain.call_tool("ask_then_work", {})
        assert refused.value.code == -32021
        assert TASKS_EXTENSION in str(refused.value.data)

    post = RawMcp(served, extensions=[TASKS_EXTENSION])
    try:
        created = post("tools/call", {"name": "forever", "arguments": {}})
        assert created["resultType"] == "task" and created["status"] == "working"
        assert created["ttlMs"] > 0 and "requestState" not in created
        task_id = created["taskId"]
        got = post("tasks/get", {"taskId": task_id})
        assert got["status"] == "working" and "result" not in got
        assert post("tasks/cancel", {"taskId": task_id}) == {"resultType": "complete"}
        got = post("tasks/get", {"taskId": task_id})
        assert got["status"] == "cancelled"
        unknown = post("tasks/get", {"taskId": "no-such-task"}, error=True)
        assert unknown["code"] == types.INVALID_PARAMS and "Unknown task" in unknown["message"]
        gone = post("tasks/list", {}, error=True)
        assert gone["code"] == types.METHOD_NOT_FOUND
    finally:
        post.close()


async def test_legacy_clients_get_the_result(served: str) -> None:
    async with mcp.Client(served, mode="legacy") as client:
        listing = {t.name: t for t in (await client.list_tools()).tools}
        assert listing["crunch"].execution is not None
        assert listing["crunch"].execution.task_support == "optional"
        assert listing["ask_then_work"].execution.task_support == "required"  # type: ignore[union-attr]
        done = await client.call_tool("crunch", {"seconds": 0.3})
        assert text(done) == "crunched for 0.3 s"


async def _never(context: Any, params: Any) -> types.ElicitResult:
    raise AssertionError("a task's questions come through tasks/get, not as requests")


# -- a task-only tool of a real upstream server --------------------------------------------------

TESTS = Path(__file__).resolve().parents[1]
EVERYTHING = TESTS / "mcp_peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE22 = TESTS / "conformance/node_modules/.bin/node"
NODE = str(NODE22) if NODE22.exists() else shutil.which("node")
RESEARCH = "mcp__everything__simulate-research-query"


@pytest.mark.skipif(
    not EVERYTHING.exists() or NODE is None,
    reason="server-everything is not installed: run `make npm-deps` (npm ci in tests/mcp_peers)",
)
async def test_upstream_task_only_tool_through_nexus(tmp_path: Path) -> None:
    """``simulate-research-query`` runs only as a task (its server speaks 2025-11-25 tasks):
    from Python (the notebook's path), and over MCP at both revisions, its question relayed."""
    reg = Registry()
    reg.add_source(McpSource("everything", command=str(NODE), args=[str(EVERYTHING), "stdio"]))
    try:
        for _ in range(300):  # it connects in the background
            if reg.find(RESEARCH) is not None:
                break
            await asyncio.sleep(0.1)
        tool = reg.find(RESEARCH)
        assert tool is not None, reg.sources()
        assert tool.spec.task_support == "required"
        assert tool.spec.display.get("title") == "Simulate Research Query"
        progress: list[str | None] = []
        result = await reg.call(
            RESEARCH, {"topic": "tides"}, progress=lambda d, t, m: progress.append(m)
        )
        assert not result.is_error, result.error
        assert "# Research Report: tides" in result.text
        assert "Gathering sources..." in progress
    finally:
        reg.close()

    (tmp_path / "nex.yaml").write_text(
        f"mcp:\n  servers:\n    - {{name: everything, command: {NODE}, "
        f"args: [{EVERYTHING}, stdio]}}\n"
    )
    extra = ("--root", str(tmp_path), "--config", str(tmp_path / "nex.yaml"))
    with serve_http(tmp_path, *extra, clean_stop=True) as served:
        for mode in ("legacy", "auto"):
            asked: list[Any] = []

            async def elicit(context: Any, params: Any) -> types.ElicitResult:
                asked.append(params)
                return types.ElicitResult(action="accept", content={"interpretation": "ocean"})

            async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
                asked.append(params)
                return {"action": "accept", "content": {"interpretation": "ocean"}}

            async with mcp.Client(
                served.url,
                mode=mode,  # type: ignore[arg-type]
                elicitation_callback=elicit,
                extensions=[tasks_client_extension(answer)],
            ) as client:
                for _ in range(300):  # the upstream connects in the background
                    names = {t.name for t in (await client.list_tools(cache_mode="refresh")).tools}
                    if RESEARCH in names:
                        break
                    await asyncio.sleep(0.1)
                report = await client.call_tool(RESEARCH, {"topic": "tides", "ambiguous": True})
                assert not report.is_error, text(report)
                assert "Research Report: tides (ocean)" in text(report), mode
                assert len(asked) == 1, mode


@pytest.mark.skipif(
    not EVERYTHING.exists() or NODE is None,
    reason="server-everything is not installed: run `make npm-deps` (npm ci in tests/mcp_peers)",
)
async def test_an_upstream_question_reaches_the_client_whose_call_asked() -> None:
    """Two clients at once: A's research task asks its question while B's later call is still
    in flight, so B is the newest caller; the question names A's task and goes to A only.
    B, calling a tool that asks while it is the newest, gets its own question."""
    from nexus_jupyter.serve.mcp_server import McpServerHandle

    reg = Registry()
    reg.add_source(McpSource("everything", command=str(NODE), args=[str(EVERYTHING), "stdio"]))
    handle = McpServerHandle.start(reg, port=0)
    try:
        for _ in range(300):
            if reg.find(RESEARCH) is not None:
                break
            await asyncio.sleep(0.1)
        asked: dict[str, list[str]] = {"A": [], "B": []}

        def user(who: str) -> Any:
            async def elicit(context: Any, params: Any) -> types.ElicitResult:
                asked[who].append(params.message)
                content = {"interpretation": f"{who}'s view", "name": who}
                return types.ElicitResult(action="accept", content=content)

            return elicit

        async with (
            mcp.Client(handle.url, mode="legacy", elicitation_callback=user("A")) as a,
            mcp.Client(handle.url, mode="legacy", elicitation_callback=user("B")) as b,
        ):
            research = asyncio.create_task(
                a.call_tool(RESEARCH, {"topic": "tides", "ambiguous": True})
            )
            await asyncio.sleep(0.5)  # A's task is working; B's call is newer from here on
            long_b = asyncio.create_task(
                b.call_tool(
                    "mcp__everything__trigger-long-running-operation", {"duration": 6, "steps": 3}
                )
            )
            report = await research
            assert "tides (A's view)" in text(report)
            assert len(asked["A"]) == 1 and asked["B"] == []
            assert "Long running operation completed" in text(await long_b)
    finally:
        handle.stop()
        reg.close()


async def test_a_task_that_needs_approval_asks_inside_the_task() -> None:
    """A task tool whose policy says ask: the approval question waits in the task
    (input_required, answered by tasks/update) and the tool runs once approved."""
    from nexus_jupyter import tool
    from nexus_jupyter.core.policy.policy import Policy
    from nexus_jupyter.serve.mcp_approval import APPROVE
    from nexus_jupyter.serve.mcp_server import McpServerHandle

    ran: list[str] = []

    @tool(permission="danger_full_access", task=True)
    async def wipe(path: str) -> str:
        """Delete a folder, slowly (asks first)."""
        await asyncio.sleep(0.2)
        ran.append(path)
        return f"wiped {path}"

    reg = Registry()
    reg.add(wipe)
    reg.policy = Policy(grant="danger_full_access")  # within the grant, but it asks
    handle = McpServerHandle.start(reg, port=0)
    try:
        asked: list[tuple[str, dict[str, Any]]] = []

        async def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
            asked.append((method, params))
            return {"action": "accept", "content": {"decision": APPROVE}}

        extension = tasks_client_extension(answer)
        async with mcp.Client(
            handle.url, mode="auto", extensions=[extension], elicitation_callback=_never
        ) as client:
            done = await client.call_tool("wipe", {"path": "/tmp/x"})
        assert text(done) == "wiped /tmp/x" and ran == ["/tmp/x"]
        ((method, question),) = asked
        assert method == "elicitation/create" and "'wipe'" in question["message"]
        assert '"path": "/tmp/x"' in question["message"]
    finally:
        handle.stop()
        reg.close()


async def test_nexus_as_the_client_of_a_2026_task_server(served: str) -> None:
    """McpSource declares the tasks extension: another nexus's task tools answer with tasks,
    polled to their result, and a task's question goes to whoever made the call."""
    from nexus_jupyter.core.tools.channel import CURRENT_CHANNEL, Elicitation

    class Caller:
        loop: Any = None
        asked: list[str] = []

        def log(self, level: str, message: str, logger: str) -> None:
            pass

        async def elicit(self, message: str, schema: dict[str, Any], *, key: Any = None) -> Any:
            self.asked.append(message)
            return Elicitation("accept", {"colour": "ochre"})

        async def sample(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("not asked")

        async def list_roots(self, *, key: Any = None) -> list[dict[str, Any]]:
            return []

    reg = Registry()
    source = McpSource("up", url=served)
    reg.add_source(source)
    try:
        for _ in range(300):
            if reg.find("mcp__up__ask_then_work") is not None:
                break
            await asyncio.sleep(0.05)
        assert source.protocol_version == "2026-07-28"
        crunched = await reg.call("mcp__up__crunch", {"seconds": 0.3})
        assert crunched.text == "crunched for 0.3 s", crunched.error
        nobody = await reg.call("mcp__up__ask_then_work", {})
        assert nobody.is_error and "only calls over MCP can" in (nobody.error or "")
        caller = Caller()
        caller.loop = asyncio.get_running_loop()
        bound = CURRENT_CHANNEL.set(caller)  # type: ignore[arg-type]
        try:
            painted = await reg.call("mcp__up__ask_then_work", {})
        finally:
            CURRENT_CHANNEL.reset(bound)
        assert painted.text == "painted ochre", painted.error
        assert caller.asked == ["Colour?"]
    finally:
        reg.close()


async def test_2025_clients_run_tasks_on_that_revisions_wire(served: str) -> None:
    """A 2025-11-25 client that asks for a task (tools/call with ``task``) gets one: its
    status through tasks/get, the result through tasks/result, which also carries the task's
    question to the client; tasks/cancel answers with the task."""
    from nexus_jupyter.sources.mcp_tasks import call_as_task, runs_tasks

    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"colour": "plum"})

    async with mcp.Client(served, mode="legacy", elicitation_callback=elicit) as client:
        assert runs_tasks(client)  # capabilities.tasks.requests.tools.call
        progress: list[str | None] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append(message)

        done = await call_as_task(client, "crunch", {"seconds": 1.2}, progress=on_progress)
        assert text(done) == "crunched for 1.2 s"
        assert any(m and "/3: step" in m for m in progress), progress
        painted = await call_as_task(client, "ask_then_work", {})
        assert text(painted) == "painted plum" and asked == ["Colour?"]

        raw = await client.session._dispatcher.send_raw_request(
            "tools/call", {"name": "forever", "arguments": {}, "task": {"ttl": 60000}}, {}
        )
        task = raw["task"]
        assert task["status"] == "working" and task["ttl"] == 60000 and "ttlMs" not in task
        get = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task["taskId"]))
        assert (await client.session.send_request(get, types.GetTaskResult)).status == "working"
        cancel = types.CancelTaskRequest(
            params=types.CancelTaskRequestParams(task_id=task["taskId"])
        )
        cancelled = await client.session.send_request(cancel, types.CancelTaskResult)
        assert cancelled.status == "cancelled"
        # without the task parameter, the same tool answers as usual
        assert text(await client.call_tool("crunch", {"seconds": 0})) == "crunched for 0 s"
