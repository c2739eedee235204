"""What an MCP client over HTTP is shown of this machine's paths, against real ``serve``
processes and the real ``mcp`` client: a declared script's command line (in ``tools/list``
and in ``tool_search``'s answers) shows neither the interpreter's place nor the workspace's;
the workspace itself is not named in an error; a tool folder outside the working folder is
named by its own name; a failing resource or prompt is worded for the agent, and resources'
and prompts' descriptions name the workspace's folders short. Over stdio the
client is shown the full paths."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp
import pytest
from serving import serve_http, stdio_params  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter.serve.mcp_paths import ShownPaths

pytestmark = pytest.mark.e2e

HELLO = 'print("hello")\n'

DECLARED = """tools:
  - id: hello
    permission: read_only
    source: {type: script, path: scripts/hello.py}
"""

OFFERS = '''from pathlib import Path

from nexus_jupyter import prompt, resource, tool


@tool
def echo(text: str) -> str:
    """Say the text back."""
    return text


@resource("notes://missing", description=f"Notes kept in {Path(__file__).parent / 'notes'}.")
def missing() -> str:
    """Notes that are not there."""
    return Path(__file__).with_name("missing.md").read_text()


@prompt(description=f"A prompt from {Path(__file__).parent} that fails.")
def broken(topic: str) -> str:
    """A prompt that fails."""
    raise ValueError(f"no template for {topic!r} in {Path(__file__).parent}")
'''


def make_project(root: Path) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "hello.py").write_text(HELLO)
    (root / "tools").mkdir()
    (root / "tools" / "offers.py").write_text(OFFERS)
    (root / "nex.yaml").write_text(DECLARED)
    return root


def places(path: Path) -> list[str]:
    """``path`` as given and with its links resolved."""
    return [str(path), str(path.resolve())]


async def described(client: Any) -> dict[str, str]:
    """How ``hello`` is described: in tools/list, and by tool_search (select:, free text)."""
    listed = {t.name: t for t in (await client.list_tools()).tools}
    selected = await client.call_tool("tool_search", {"query": "select:hello"})
    found = await client.call_tool("tool_search", {"query": "hello", "max_results": 50})
    hits = {t["name"]: t for t in (found.structured_content or {})["tools"]}
    return {
        "list": listed["hello"].description or "",
        "select": (selected.structured_content or {})["tools"][0]["description"],
        "search": hits["hello"]["description"],
        "text": "\n".join(getattr(b, "text", "") for b in [*selected.content, *found.content]),
    }


async def test_a_declared_scripts_command_line_is_shown_short_over_http_in_full_over_stdio(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    with serve_http(project, "--dir", "tools") as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            remote = await described(client)
    python = Path(sys.executable).name
    for seen in remote.values():
        assert sys.executable not in seen and not any(p in seen for p in places(project))
    assert remote["list"] == f"Run `{python} scripts/hello.py`."
    assert remote["select"] == remote["search"] == remote["list"]
    async with mcp.Client(stdio_params(project, "--dir", "tools"), mode="legacy") as client:
        local = await described(client)
    assert local["list"] == local["select"] == local["search"]
    assert local["list"].startswith(f"Run `{sys.executable} ")
    assert any(f"{p}/scripts/hello.py`." in local["list"] for p in places(project))


async def test_the_workspace_itself_is_not_named_over_http(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    with serve_http(project, "--dir", "tools") as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            home = await client.call_tool("read", {"path": "~/notes.md"})
            outside = await client.call_tool("read", {"path": "/etc/hostname"})
    (said,) = [getattr(b, "text", "") for b in home.content]
    assert home.is_error and said.endswith("use a path relative to the workspace."), said
    (out,) = [getattr(b, "text", "") for b in outside.content]
    assert "outside the workspace; tools may only touch files under it." in out, out
    assert not any(p in said + out for p in places(project))
    async with mcp.Client(stdio_params(project, "--dir", "tools"), mode="legacy") as client:
        local = await client.call_tool("read", {"path": "~/notes.md"})
    text = getattr(local.content[0], "text", "")
    assert any(f"relative to the workspace {p!r}." in text for p in places(project)), text


async def test_a_tool_folder_outside_the_working_folder_is_named_by_its_name_over_http(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path / "project")
    elsewhere = tmp_path / "elsewhere" / "shared-tools"
    elsewhere.mkdir(parents=True)
    (project / "tools" / "offers.py").rename(elsewhere / "offers.py")
    with serve_http(project, "--dir", str(elsewhere)) as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            said = client.instructions or ""
            echo = {t.name: t for t in (await client.list_tools()).tools}["echo"]
    assert echo.meta is not None
    assert echo.meta["nexus-jupyter/source"] == "directory:shared-tools"
    assert echo.meta["nexus-jupyter/origin"] == "offers.py"
    assert "tool files in shared-tools (1)" in said, said
    assert not any(p in said for p in places(tmp_path))
    async with mcp.Client(stdio_params(project, "--dir", str(elsewhere)), mode="legacy") as client:
        local_said = client.instructions or ""
        local = {t.name: t for t in (await client.list_tools()).tools}["echo"]
    assert local.meta is not None
    assert local.meta["nexus-jupyter/source"] in {f"directory:{p}" for p in places(elsewhere)}
    assert any(f"tool files in {p} (1)" in local_said for p in places(elsewhere))


async def test_a_failing_resource_or_prompt_is_worded_for_the_agent_over_http(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    with serve_http(project, "--dir", "tools") as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            # descriptions name the workspace's folders as tools' descriptions do
            resources = (await client.list_resources()).resources
            prompts = (await client.list_prompts()).prompts
            assert [r.description for r in resources] == ["Notes kept in tools/notes."]
            assert [p.description for p in prompts] == ["A prompt from tools that fails."]
            with pytest.raises(mcp.MCPError) as unread:
                await client.read_resource("notes://missing")
            with pytest.raises(mcp.MCPError) as unrendered:
                await client.get_prompt("broken", {"topic": "tea"})
    read_error, prompt_error = str(unread.value), str(unrendered.value)
    assert read_error.startswith(
        "Reading resource 'notes://missing' failed: [Errno 2] No such file or directory: "
        "'tools/missing.md' (FileNotFoundError). If the URI was wrong, read another one; "
        "otherwise tell the user the resource is failing."
    ), read_error
    assert prompt_error == (
        "Prompt 'broken' failed: no template for 'tea' in tools (ValueError). If your "
        "arguments caused it, get it again with other ones; otherwise tell the user the "
        "prompt is failing."
    ), prompt_error
    assert not any(p in read_error + prompt_error for p in places(project))
    async with mcp.Client(stdio_params(project, "--dir", "tools"), mode="legacy") as client:
        with pytest.raises(mcp.MCPError) as local:
            await client.read_resource("notes://missing")
        full = (await client.list_resources()).resources[0].description or ""
    assert any(full == f"Notes kept in {p}/tools/notes." for p in places(project)), full
    assert any(
        f"'{p}/tools/missing.md' (FileNotFoundError)" in str(local.value) for p in places(project)
    )


def test_the_workspace_is_replaced_only_where_it_is_the_whole_path() -> None:
    shown = ShownPaths("/srv/project")
    assert shown.text("cd /srv/project && ls; a file in /srv/project.") == (
        "cd . && ls; a file in the workspace."
    )
    assert shown.text("the workspace '/srv/project' and \"/srv/project\"") == (
        'the workspace and "."'
    )
    untouched = "/srv/project.bak, /srv/projects and /old/srv/project"
    assert shown.text(untouched) == untouched
    assert shown.source("directory:/srv/project/tools") == "directory:tools"
    assert shown.source("directory:/opt/shared/tools") == "directory:tools"
    assert shown.source("mcp:time") == "mcp:time"
