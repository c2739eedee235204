"""``nexus-tools serve`` as an agent and its MCP client meet it, against real server processes:
a malformed stdio line gets its JSON-RPC error; tools that cannot run are not offered (but a
call by name says whom to ask); the instructions say what the server offers and how
approvals go; errors are sentences without a Python class name in front; over HTTP the
client is shown the machine's paths in short, over stdio in full."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from serving import INIT, serve_http  # tests/ is on sys.path (rootdir conftest)
from serving import stdio_params as serve_stdio

from nexus_jupyter.serve.mcp_bridge import ERROR_META_KEY
from nexus_jupyter.sources.mcp_session import result_from_mcp

pytestmark = pytest.mark.e2e

NOISY = '''import json

from nexus_jupyter import tool


@tool
def noisy(n: int) -> int:
    """Divide ten by n."""
    return 10 // n


@tool
def parse(text: str) -> int:
    """Parse text as JSON."""
    return json.loads(text)


@tool(timeout=0.5)
def slow() -> str:
    """Take too long."""
    import time

    time.sleep(30)
    return "done"
'''


def make_project(root: Path, config: str = "") -> Path:
    (root / "tools").mkdir()
    (root / "tools" / "noisy.py").write_text(NOISY)
    if config:
        (root / "nex.yaml").write_text(config)
    return root


def stdio_params(project: Path, *extra: str) -> Any:
    return serve_stdio(project, "--dir", "tools", *extra)


def texts(result: types.CallToolResult) -> list[str]:
    return [getattr(block, "text", "") for block in result.content]


# -- stdio: a line that is not a JSON-RPC message ------------------------------------------


class RawStdio:
    """``serve`` over stdio, written to and read from line by line (no SDK in between)."""

    def __init__(self, project: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nexus_jupyter.serve.cli_serve", "--dir", "tools"],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next message the server writes (a bounded wait: none is a failure)."""
        try:
            return dict(json.loads(self.lines.get(timeout=30)))
        except queue.Empty:
            raise AssertionError("serve wrote no answer within 30 s") from None

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def test_a_malformed_stdio_line_gets_its_json_rpc_error_and_serving_goes_on(
    tmp_path: Path,
) -> None:
    server = RawStdio(make_project(tmp_path))
    try:
        server.send(json.dumps(INIT))
        assert server.answer()["id"] == 1
        server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        server.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"')  # cut short
        parse = server.answer()
        assert parse["id"] is None and parse["error"]["code"] == -32700
        assert parse["error"]["message"].startswith("Parse error: the line is not JSON (")
        assert "one line of JSON" in parse["error"]["message"]
        server.send(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "x"}))
        invalid = server.answer()
        assert invalid["id"] == 3 and invalid["error"]["code"] == -32600
        assert '"params" must be a JSON object' in invalid["error"]["message"]
        server.send("")  # a blank line is no message: no answer
        server.send(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        assert server.answer() == {"jsonrpc": "2.0", "id": 4, "result": {}}
    finally:
        server.close()


# -- what the agent is offered, and told ---------------------------------------------------


async def test_a_tool_that_cannot_run_is_not_offered_but_answers_by_name(tmp_path: Path) -> None:
    """web_search without a search provider: not in tools/list nor in tool_search (as
    select: says, with the reason worded for the agent), the call by name tells it to ask
    the user; the person running the server is told on stderr."""
    project = make_project(tmp_path)
    with serve_http(project, "--dir", "tools") as server:
        for mode in ("legacy", "auto"):
            async with mcp.Client(server.url, mode=mode) as client:
                names = {t.name for t in (await client.list_tools()).tools}
                assert "web_search" not in names and {"web_fetch", "noisy"} <= names
                refused = await client.call_tool("web_search", {"query": "weather in Oslo"})
                (only,) = texts(refused)
                assert refused.is_error and "ask the user to configure a search provider" in only
                found = await client.call_tool("tool_search", {"query": "select:web_search,read"})
                answer = found.structured_content or {}
                assert [t["name"] for t in answer["tools"]] == ["read"]
                assert "ask the user" in answer["not_available"]["web_search"]
                hits = await client.call_tool("tool_search", {"query": "search the web"})
                hit_names = [t["name"] for t in (hits.structured_content or {})["tools"]]
                assert "web_search" not in hit_names
                assert (hits.structured_content or {})["total_tools"] == len(names)
        note = [ln for ln in server.output if "not offered to MCP clients yet" in ln]
        assert note and "web_search (web_search has no search provider configured" in note[0]
        assert f"Serving {len(names)} tools over MCP" in "".join(server.output)


def test_nexus_tools_list_still_shows_it_with_the_fix(tmp_path: Path) -> None:
    """The person running the server sees it, with the reason (the CLI face)."""
    project = make_project(tmp_path)
    listing = subprocess.run(
        [str(Path(sys.executable).with_name("nexus-tools")), "list"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    row = next(ln for ln in listing.stdout.splitlines() if ln.startswith("web_search "))
    assert "[unavailable: web_search has no search provider configured" in row


async def test_the_instructions_say_what_is_offered_and_how_to_find_it(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    with serve_http(project, "--dir", "tools", "--defer") as server:
        for mode in ("legacy", "auto"):  # initialize, and server/discover at 2026-07-28
            async with mcp.Client(server.url, mode=mode) as client:
                said = client.instructions or ""
                listed = len((await client.list_tools()).tools)
            first, defer, *rest = said.splitlines()
            assert (
                first.startswith("This server (nexus-tools) offers ") and "web_search" not in said
            )
            assert "built-in files (6), web (1), meta (1); tool files in tools (3)." in first
            assert defer.startswith(f"Only {listed} are listed; ")
            assert '"select:NAME1,NAME2"' in defer and "call them by name" in defer
            assert not any("approval" in line for line in rest)  # no offered tool asks
            assert len(said.splitlines()) <= 5


async def test_the_instructions_say_how_approvals_go_when_a_tool_asks(tmp_path: Path) -> None:
    project = make_project(tmp_path, "grant: {mcp: danger_full_access}\n")
    async with mcp.Client(stdio_params(project), mode="legacy") as client:
        said = client.instructions or ""
    assert (
        "offers 13 tools: built-in files (6), shell (1), web (1), meta (2); tool files in tools (3)."
        in said
    ), said
    assert "Some calls need the user's approval: the server asks them through your client." in said
    assert "means the tool did not run: tell the user" in said


def real_places(path: Path) -> list[Path]:
    """``path`` as given and with its links resolved."""
    return [path, path.resolve()]


# -- errors as sentences, and paths ----------------------------------------------------------


async def test_errors_are_sentences_without_a_class_name_in_front(tmp_path: Path) -> None:
    async with mcp.Client(stdio_params(make_project(tmp_path)), mode="legacy") as client:
        failed = await client.call_tool("noisy", {"n": 0})
        refused = await client.call_tool("read", {"path": "/etc/passwd"})
        timed_out = await client.call_tool("slow", {})
    text = texts(failed)[0]
    assert text.startswith(
        "Tool 'noisy' failed: integer division or modulo by zero (ZeroDivisionError). Its "
        "traceback is in the next block. If your arguments caused it, call it again"
    )
    (reason,) = texts(refused)
    assert reason.startswith("The path '/etc/passwd' resolves to") and "Denied" not in reason
    assert refused.meta is not None and refused.meta[ERROR_META_KEY]["type"] == "PermissionDenied"
    (late,) = texts(timed_out)
    assert late.startswith("The call to tool 'slow' timed out after 0.5 s"), late
    assert "TimeoutError" not in late
    # a nexus client (the Jupyter server, serve --jupyter) still reads the tool's own type
    back = result_from_mcp("noisy", failed)
    assert (back.error_type, back.error) == (
        "ZeroDivisionError",
        "integer division or modulo by zero",
    )


async def test_over_http_paths_are_shown_in_short_and_over_stdio_in_full(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    places = real_places(tmp_path)
    full = str(places[1] / "tools" / "noisy.py")
    async with mcp.Client(stdio_params(project), mode="legacy") as client:
        local = {t.name: t for t in (await client.list_tools()).tools}
        local_trace = texts(await client.call_tool("noisy", {"n": 0}))[1]
    assert local["noisy"].meta is not None
    assert local["noisy"].meta["nexus-jupyter/origin"] in (full, str(project / "tools/noisy.py"))
    assert any(f'File "{place}' in local_trace for place in places)
    with serve_http(project, "--dir", "tools") as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            remote = {t.name: t for t in (await client.list_tools()).tools}
            trace = texts(await client.call_tool("noisy", {"n": 0}))[1]
            library = texts(await client.call_tool("parse", {"text": "{"}))
    assert remote["noisy"].meta is not None
    assert remote["noisy"].meta["nexus-jupyter/origin"] == "tools/noisy.py"
    assert 'File "tools/noisy.py", line 9, in noisy' in trace
    assert all(str(place) not in trace for place in places)
    library_trace = library[-1]
    assert 'File "tools/noisy.py"' in library_trace
    assert 'File "python/json/' in library_trace  # Python's own module, from its folder
    assert sys.prefix not in library_trace and sys.base_prefix not in library_trace


def test_requests_piped_in_are_all_answered_before_serve_ends_at_the_end_of_input(
    tmp_path: Path,
) -> None:
    """``printf ... | nexus-tools serve`` (a trial's finding): the end of input used to
    cancel what was still being answered ("Connection closed"), or leave a request with no
    answer at all. Each request read before the end gets its answer."""
    project = make_project(tmp_path)
    done = _piped_into_serve(
        project,
        {"id": 2, "method": "tools/call", "params": {"name": "nosuch", "arguments": {}}},
        {"id": 3, "method": "tools/list"},
        {"id": 4, "method": "tools/call", "params": {"name": "slow", "arguments": {}}},
        {"id": 5, "method": "tools/call", "params": {"name": "noisy", "arguments": {"n": 5}}},
    )
    assert done.returncode == 0, done.stderr
    answers = {a["id"]: a for a in map(json.loads, done.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3, 4, 5], done.stdout
    assert "No tool named 'nosuch'" in answers[2]["error"]["message"]
    assert "slow" in {t["name"] for t in answers[3]["result"]["tools"]}
    assert answers[4]["result"]["isError"] is True  # timed out after its 0.5 s: still said
    assert answers[5]["result"]["structuredContent"] == {"result": 2}, answers[5]


def test_a_request_cancelled_before_the_end_of_input_holds_nothing_up(tmp_path: Path) -> None:
    """A review finding: the SDK never answers a request its client cancelled, and the SDK's
    client cancels what it abandons before it closes stdin; the end must not wait for it."""
    project = make_project(tmp_path)
    (project / "tools" / "nap.py").write_text(
        "import time\nfrom nexus_jupyter import tool\n\n\n@tool\ndef nap() -> str:\n"
        '    """Sleep a while."""\n    time.sleep(20)\n    return "rested"\n'
    )
    began = time.monotonic()
    done = _piped_into_serve(
        project,
        {"id": 2, "method": "tools/call", "params": {"name": "nap", "arguments": {}}},
        {"method": "notifications/cancelled", "params": {"requestId": 2, "reason": "gone"}},
    )
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == [1], done.stdout
    assert took < 15.0, f"serve took {took:.1f} s to end"  # not the nap's 20 s


def _piped_into_serve(project: Path, *requests: dict[str, Any]) -> Any:
    """``printf ... | serve`` of ``project``'s tools: initialize, initialized, ``requests``,
    then the end of input; the finished process."""
    opening = [
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"method": "notifications/initialized"},
    ]
    piped = "".join(json.dumps({"jsonrpc": "2.0", **r}) + "\n" for r in [*opening, *requests])
    return subprocess.run(
        [sys.executable, "-m", "nexus_jupyter.serve.cli_serve", "--dir", "tools"],
        input=piped,
        capture_output=True,
        text=True,
        cwd=project,
        timeout=60,
    )
