"""What an agent reads about a tool, through the real faces: the docstring's prose as the
description, the operator told about tools without one and tools hidden by another of their
name (``nexus-tools check`` and ``serve``), and a first ``tools/list`` that has the tools of
an MCP server of nex.yaml that answers late."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mcp
import pytest
from mcp.client.stdio import StdioServerParameters
from serving import serve_http  # tests/ is on sys.path (rootdir conftest)

pytestmark = pytest.mark.e2e

EXE = str(Path(sys.executable).parent / "nexus-tools")

BANK = '''from nexus_jupyter import tool


@tool
def transfer(account: str, amount: int) -> str:
    """Transfer money to another account.

    IMPORTANT: amount is in cents. Never transfer more than 10000
    without asking the user first.

    Args:
        account: The account to pay.
        amount: How much, in cents.

    Returns:
        The receipt.
    """
    return account


@tool
def shout(text: str) -> str:
    return text.upper()


@tool
def read(path: str) -> str:
    """Read a file, my way."""
    return path
'''

#: an MCP server (stdio, newline-delimited JSON-RPC) that takes 1.5 s to answer initialize
SLOW_UPSTREAM = """import json, sys, time

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, result = msg.get("method"), {}
    if method == "initialize":
        time.sleep(1.5)
        result = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow", "version": "1"},
        }
    elif method == "tools/list":
        schema = {"type": "object", "properties": {}}
        result = {"tools": [{"name": "late", "description": "A late tool.", "inputSchema": schema}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def make_project(root: Path, config: str = "") -> Path:
    folder = root / "tools" / "dynamic"
    folder.mkdir(parents=True)
    (folder / "bank.py").write_text(BANK)
    if config:
        (root / "nex.yaml").write_text(config)
    return root


async def test_the_agent_reads_the_docstrings_prose_not_its_args(tmp_path: Path) -> None:
    with serve_http(make_project(tmp_path), "--dir", "tools/dynamic") as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["transfer"].description == (
        "Transfer money to another account.\n\nIMPORTANT: amount is in cents. Never transfer "
        "more than 10000\nwithout asking the user first."
    )
    props = tools["transfer"].input_schema["properties"]
    assert props["amount"]["description"] == "How much, in cents."
    assert tools["read"].description != "Read a file, my way."  # the built-in is served


def test_check_notes_tools_without_a_description_and_hidden_tools(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    base = [EXE, "--root", str(project), "--wait", "5"]
    checked = subprocess.run(
        [*base, "--json", "check", "--no-tests"], capture_output=True, text=True, timeout=120
    )
    notes = json.loads(checked.stdout)["notes"]
    hidden = [n for n in notes if n.startswith("'read' of tool file")]
    assert len(hidden) == 1 and "bank.py is hidden by the built-in 'read'" in hidden[0]
    assert "rename it" in hidden[0] and "allow_overrides" in hidden[0]
    bare = [n for n in notes if n.startswith("'shout'")]
    assert len(bare) == 1 and "has no description" in bare[0]
    assert "add a docstring, or `description=`" in bare[0]
    assert not [n for n in notes if "'transfer'" in n]
    text = subprocess.run(
        [*base, "check", "--no-tests"], capture_output=True, text=True, timeout=120
    ).stdout
    assert f"  note: {hidden[0]}" in text and f"  note: {bare[0]}" in text


async def test_serve_says_the_hidden_and_undescribed_tools_in_one_line_each(
    tmp_path: Path,
) -> None:
    with serve_http(make_project(tmp_path), "--dir", "tools/dynamic") as server:
        output = "".join(server.output)
    hidden = [line for line in output.splitlines() if "hidden by another" in line]
    assert len(hidden) == 1, output
    assert hidden[0].startswith("nexus-tools serve: note: 1 tool(s) hidden")
    assert "'read' of tool file" in hidden[0] and "served: the built-in 'read'" in hidden[0]
    assert "Rename them" in hidden[0] and "allow_overrides" in hidden[0]
    bare = [line for line in output.splitlines() if "without a description" in line]
    assert len(bare) == 1 and "'shout' (tool file" in bare[0] and "docstring" in bare[0]
    assert "'transfer'" not in bare[0]


async def test_the_first_listing_has_the_tools_of_a_slow_mcp_server(tmp_path: Path) -> None:
    (tmp_path / "slow_upstream.py").write_text(SLOW_UPSTREAM)
    config = (
        f"mcp:\n  servers:\n    - {{name: slow, command: {sys.executable}, "
        f"args: [{tmp_path / 'slow_upstream.py'}]}}\n"
    )
    project = make_project(tmp_path, config)
    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(project),
        args=["-m", "nexus_jupyter.serve.cli_serve", "--dir", "tools/dynamic"],
        env=dict(os.environ),
    )
    async with mcp.Client(params, mode="legacy") as client:  # lists at once, and once
        names = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__slow__late" in names and "transfer" in names
    # with the wait switched off, the first listing comes before the server answers
    params.args = [*params.args, "--list-wait", "0"]
    async with mcp.Client(params, mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "mcp__slow__late" not in names and "transfer" in names
