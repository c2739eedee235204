"""``nexus-tools serve`` as a new user meets it, through the SDK's real client against a real
server process: what an agent reads (a failing tool's own traceback and none for a refusal,
validation and prompt-argument errors that say what to send) and what the person running
the server reads on stderr (one line per broken source, the tools above the MCP grant, the
tools of MCP servers that connect after the start)."""

from __future__ import annotations

import asyncio
import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from mcp.client.stdio import StdioServerParameters
from serving import ServeProcess, serve_http  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter.serve.mcp_approval import APPROVE
from nexus_jupyter.serve.mcp_bridge import TRACEBACK_MARK

pytestmark = pytest.mark.e2e

NOISY = '''from nexus_jupyter import tool


@tool
def noisy(n: int) -> int:
    """Divide ten by n."""
    print("about to divide")
    return 10 // n
'''

REVIEW = '''from typing import Literal

from nexus_jupyter import prompt


@prompt
def review(code: str, style: Literal["terse", "thorough"] = "terse") -> str:
    """Review a piece of code."""
    return f"Review ({style}):\\n{code}"
'''

BROKEN = "from nexus_jupyter import tool\n\n\n@tool\ndef half(x: int) -> int:\n    return x +\n"


def make_project(root: Path, config: str = "") -> Path:
    folder = root / "tools" / "dynamic"
    folder.mkdir(parents=True)
    (folder / "noisy.py").write_text(NOISY)
    (folder / "review.py").write_text(REVIEW)
    if config:
        (root / "nex.yaml").write_text(config)
    return root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """One default server (nex.yaml grants nothing extra) for the agent-facing checks."""
    project = make_project(tmp_path_factory.mktemp("served"))
    with serve_http(project, "--dir", "tools/dynamic") as server:
        yield server


def texts(result: types.CallToolResult) -> list[str]:
    return [getattr(block, "text", "") for block in result.content]


def lines_with(server: ServeProcess, *words: str) -> list[str]:
    return [line for line in list(server.output) if all(w in line for w in words)]


async def said(server: ServeProcess, *words: str, timeout: float = 30.0) -> str:
    """The first line of the server's output with all of ``words`` (polled: a process)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (found := lines_with(server, *words)):
        assert asyncio.get_running_loop().time() < deadline, (words, "".join(server.output))
        await asyncio.sleep(0.1)
    return found[0]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- what the agent reads -----------------------------------------------------------------


async def test_a_failing_tool_file_shows_its_own_frames_and_a_refusal_none(
    tmp_path: Path,
) -> None:
    """Over stdio, as the tester ran it: the tool file runs in a worker process, and its
    traceback is the worker's (the file and line), never the server's call machinery."""
    project = make_project(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(project),
        args=["-m", "nexus_jupyter.serve.cli_serve", "--dir", "tools/dynamic"],
    )
    async with mcp.Client(params, mode="legacy") as client:
        failed = await client.call_tool("noisy", {"n": 0})
        assert failed.is_error
        error, trace = texts(failed)
        assert error.startswith(
            "Tool 'noisy' failed: integer division or modulo by zero (ZeroDivisionError). "
            "Its traceback is in the next block."
        )
        assert failed.content[1].meta == {TRACEBACK_MARK: True}
        assert 'noisy.py", line 8, in noisy' in trace and "return 10 // n" in trace
        assert "nexus_jupyter" not in trace and "isolation.py" not in trace
        for name, arguments in [
            ("read", {"path": "/etc/passwd"}),
            ("write", {"path": "nex.yaml", "content": "grant: danger_full_access\n"}),
        ]:
            refused = await client.call_tool(name, arguments)
            assert refused.is_error
            (only,) = texts(refused)  # the reason, and no traceback block
            assert "Traceback" not in only and not re.match(r"[A-Z]\w+: ", only)  # no class name


async def test_an_approved_builtins_refusal_has_no_traceback_and_granted_tools_are_listed(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path, "grant: {mcp: danger_full_access}\n")

    async def approve(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"decision": APPROVE})

    with serve_http(project, "--dir", "tools/dynamic") as server:
        async with mcp.Client(server.url, mode="legacy", elicitation_callback=approve) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"bash", "create_dynamic_tool"} <= names  # the grant lets callers run them
            refused = await client.call_tool(
                "create_dynamic_tool", {"name": "read", "description": "x", "code": "return 1"}
            )
            assert refused.is_error
            (only,) = texts(refused)
            assert "read" in only and "Traceback" not in only
    assert not lines_with(server, "not listed to MCP clients")


async def test_invalid_arguments_say_what_to_send(served: ServeProcess) -> None:
    async with mcp.Client(served.url, mode="legacy") as client:
        null = texts(await client.call_tool("noisy", {"n": None}))[0]
        assert "- $.n: expected an integer (got null)" in null
        assert "'noisy' takes: n (integer, required)." in null
        extra = texts(await client.call_tool("noisy", {"n": 1, "m": 2}))[0]
        assert "- $.m: unexpected argument; this tool takes: n (got 2)" in extra
        word = texts(await client.call_tool("noisy", {"n": "ten"}))[0]
        assert '- $.n: expected an integer (got "ten")' in word
        typo = texts(await client.call_tool("read", {"pth": "x"}))[0]
        assert "- $.path: required argument is missing" in typo
        assert (
            '- $.pth: unexpected argument (did you mean "path"?); this tool takes: path, offset, '
            'limit (got "x")' in typo
        )
        assert "path (string, required), offset (integer), limit (integer)" in typo
        for message in (null, extra, word, typo):
            assert "is not of type" not in message and "Additional properties" not in message


async def test_a_tool_only_the_operator_can_set_up_tells_the_agent_to_ask(
    served: ServeProcess,
) -> None:
    """web_search without a search provider: the agent is told who can set it up and what
    they must do, never to edit nex.yaml (which it cannot); the listing keeps the fix."""
    async with mcp.Client(served.url, mode="legacy") as client:
        refused = await client.call_tool("web_search", {"query": "weather in Oslo"})
    assert refused.is_error
    (only,) = texts(refused)
    assert only.startswith("Tool 'web_search' cannot run now: "), only
    assert "only the person running the server can change that: ask the user to" in only
    assert "search provider" in only and "brave/api_key" in only
    assert "nex.yaml" not in only and "Set one" not in only


async def test_prompt_arguments_are_checked_against_the_signature(served: ServeProcess) -> None:
    async with mcp.Client(served.url, mode="legacy") as client:
        with pytest.raises(mcp.MCPError) as loud:
            await client.get_prompt("review", {"code": "x", "style": "loud"})
        assert loud.value.error.code == types.INVALID_PARAMS
        message = loud.value.error.message
        assert "'style' must be one of 'terse', 'thorough', not 'loud'" in message
        with pytest.raises(mcp.MCPError) as missing:
            await client.get_prompt("review", {})
        assert missing.value.error.code == types.INVALID_PARAMS
        assert "required argument 'code' is missing" in missing.value.error.message
        assert "code (required), style (optional; one of 'terse', 'thorough')" in (
            missing.value.error.message
        )
        good = await client.get_prompt("review", {"code": "x", "style": "thorough"})
        assert good.messages[0].content.text == "Review (thorough):\nx"  # type: ignore[union-attr]
    # a client's mistake is not the server's problem: no warning, no traceback
    assert not lines_with(served, "WARNING") and not lines_with(served, "Traceback")


# -- what the person running the server reads ---------------------------------------------


async def test_tools_above_the_grant_are_not_listed_and_the_operator_is_told(
    served: ServeProcess,
) -> None:
    note = await said(served, "not listed to MCP clients")
    assert "bash" in note and "create_dynamic_tool" in note and "danger_full_access" in note
    assert "`grant: {mcp: danger_full_access}` in nex.yaml" in note
    start = await said(served, "Serving")
    async with mcp.Client(served.url, mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "bash" not in names and "create_dynamic_tool" not in names and "read" in names
        assert start.startswith(f"Serving {len(names)} tools over MCP at http://")
        refused = await client.call_tool("bash", {"command": "id"})  # by name: the reason
        assert refused.is_error and "danger_full_access" in texts(refused)[0]
        assert "Only the person running this server" in texts(refused)[0]


async def test_with_defer_the_start_line_counts_the_tools_it_lists(
    tmp_path: Path, served: ServeProcess
) -> None:
    """``--defer`` lists the eager tools and tool_search: the start line counts those, and
    says how many more a client finds through tool_search (the rest of the granted ones)."""
    async with mcp.Client(served.url, mode="legacy") as client:  # the same tools, not deferred
        granted = {t.name for t in (await client.list_tools()).tools}
    with serve_http(make_project(tmp_path), "--dir", "tools/dynamic", "--defer") as server:
        start = await said(server, "Serving")
        async with mcp.Client(server.url, mode="legacy") as client:
            listed = {t.name for t in (await client.list_tools()).tools}
    assert "tool_search" in listed and listed < granted
    deferred = len(granted) - len(listed)
    assert start.startswith(
        f"Serving {len(listed)} tools ({deferred} more deferred: found with tool_search) "
        "over MCP at http://"
    ), start


async def test_each_broken_source_is_one_warning_line(tmp_path: Path) -> None:
    project = make_project(
        tmp_path, "mcp:\n  servers:\n    - {name: nocmd, command: no-such-binary-xyz}\n"
    )
    jupyter = f"http://127.0.0.1:{closed_port()}/"
    with serve_http(
        project, "--dir", "tools/dynamic", "--jupyter", jupyter, "--token", "t"
    ) as server:
        nocmd = await said(server, "warning: MCP server 'nocmd'")
        assert "no-such-binary-xyz" in nocmd and "nex.yaml" in nocmd
        down = await said(server, "warning: Jupyter server http://127.0.0.1")
        assert "--jupyter and --token" in down and "keeps retrying" in down
        (tmp_path / "tools" / "dynamic" / "half.py").write_text(BROKEN)  # while it runs
        broken = await said(server, "warning: tools folder", "half.py")
        assert "line 6" in broken and "save it" in broken
        await asyncio.sleep(3.5)  # a few retries of both servers: still one line each
        assert len(lines_with(server, "warning: MCP server 'nocmd'")) == 1
        assert len(lines_with(server, "warning: Jupyter server")) == 1
        (tmp_path / "tools" / "dynamic" / "half.py").write_text(BROKEN.replace(" +\n", "\n"))
        await said(server, "tools folder tools/dynamic works again")


async def test_a_toolset_module_that_fails_to_import_is_one_warning_line(tmp_path: Path) -> None:
    """Not also the registry's own log line: the notice says it, with the fix."""
    (tmp_path / "raising_tools.py").write_text("raise RuntimeError('boom-4711 at import')\n")
    project = make_project(tmp_path, "toolsets:\n  raising: {module: 'raising_tools:tools'}\n")
    with serve_http(project, "--dir", "tools/dynamic") as server:  # said before "Serving"
        (line,) = lines_with(server, "boom-4711")
    assert line.startswith("nexus-tools serve: warning: source 'toolset:raising': ")
    assert "fix `module:` in nex.yaml" in line


MISSING_PROGRAMS = """tools:
  - {id: lint, description: Lint the project., source: {type: cli, command: nosuch-linter-4711}}
  - id: fmt
    description: Format the project.
    permission: workspace_write
    source: {type: cli, command: ./bin/missing-fmt}
"""


async def test_a_declared_tool_whose_program_is_missing_is_said_with_the_fix(
    tmp_path: Path,
) -> None:
    """Not hidden behind the grant: the operator is told the program is missing and how to
    fix it (not to raise the grant, which would not help); neither is listed to MCP clients
    until it can run, and an agent that calls one of them by name is told to ask the user."""
    with serve_http(make_project(tmp_path, MISSING_PROGRAMS), "--dir", "tools/dynamic") as server:
        warning = await said(server, "warning: the tools: of nex.yaml")
        assert "'lint' cannot run: 'nosuch-linter-4711' is not installed (not on PATH). " in (
            warning
        )
        assert "Install it, or correct the command of tool 'lint' under tools: in nex.yaml" in (
            warning
        )
        assert f"'fmt' cannot run: '{tmp_path / 'bin' / 'missing-fmt'}' not found" in warning
        await said(server, "not listed to MCP clients")
        assert all("lint" not in line for line in lines_with(server, "not listed to MCP"))
        async with mcp.Client(server.url, mode="legacy") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            refused = await client.call_tool("fmt", {})
    assert "lint" not in names and "fmt" not in names  # neither can run
    assert refused.is_error
    (only,) = texts(refused)
    assert "missing-fmt' not found" in only and "ask the user to" in only
    assert "nex.yaml" not in only and "Install it" not in only


async def test_a_missing_tools_folder_is_said(tmp_path: Path) -> None:
    with serve_http(make_project(tmp_path), "--dir", "nonexist/dir") as server:
        line = await said(server, "warning: tools folder")
        assert f"{tmp_path / 'nonexist' / 'dir'} does not exist" in line and "--dir" in line


async def test_the_tools_of_mcp_servers_that_connect_later_are_counted(tmp_path: Path) -> None:
    time_server = Path(sys.executable).parent / "mcp-server-time"
    project = make_project(
        tmp_path, f"mcp:\n  servers:\n    - {{name: time, command: {time_server}}}\n"
    )
    with serve_http(project, "--dir", "tools/dynamic") as server:
        first = await said(server, "Serving")
        served = int(first.split()[1])
        await asyncio.sleep(0.2)  # printed right after the start line, when it is said
        if lines_with(server, "more tools to come: MCP server 'time' still connecting"):
            now = await said(server, "MCP server 'time' connected: 2 tools")
            assert now.rstrip().endswith(f"{served + 2} tools are served now")
            served += 2
        # else it answered before the start, and the start line counts its tools
        async with mcp.Client(server.url, mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert len(names) == served and "mcp__time__get_current_time" in names


async def test_the_listing_follows_the_policy_the_calls_follow(tmp_path: Path) -> None:
    """Listing, tool_search and calls agree: a `policies:` line that lowers every MCP
    caller's grant to read_only hides the tools that write, as its calls are refused."""
    from nexus_jupyter import Registry
    from nexus_jupyter.core.policy.policy import Policy
    from nexus_jupyter.serve.mcp_server import RegistryServer
    from nexus_jupyter.sources.builtin import BuiltinSource

    reg = Registry(search="keyword")
    reg.add_source(BuiltinSource(root=tmp_path, registry=reg))
    served = RegistryServer(reg, granted_only=True)
    served.attach()
    try:
        async with mcp.Client(served.server) as client:  # a real client, in memory
            reg.policy = Policy()  # MCP callers: workspace_write
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"read", "write", "edit"} <= names and "bash" not in names
            reg.policy = Policy(policies=[{"principal": "*", "grant": "read_only"}])
            # a new level, so a new listing (a listing is kept per level)
            names = {t.name for t in (await client.list_tools()).tools}
            assert "read" in names and "write" not in names and "edit" not in names
            refused = await client.call_tool("write", {"path": "a.txt", "content": "x"})
            assert refused.is_error and "read_only" in texts(refused)[0]
            found = await client.call_tool("tool_search", {"query": "write a file"})
            assert "write" not in [t["name"] for t in found.structured_content["tools"]]
    finally:
        served.detach()
        reg.close()
