"""``%tool mcp ...`` and ``%tool serve`` in a real IPython shell, against real MCP servers."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import mcp
import mcp_types as types
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import run_ok

from nexus_jupyter import Registry

pytestmark = pytest.mark.e2e

TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")


def text(result: types.CallToolResult) -> str:
    """The first content block's text (asserting it is text)."""
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


def test_mcp_add_list_call_restart_remove(shell: InteractiveShell, registry: Registry) -> None:
    shown = run_ok(shell, f"%tool mcp add time --wait -- {TIME_SERVER}")
    assert "time: ready" in repr(shown) and "mcp-server-time" in repr(shown)
    assert "mcp__time__get_current_time" in registry
    result = run_ok(shell, "%tool call mcp__time__get_current_time timezone=UTC")
    assert result.structured["timezone"] == "UTC"
    listing = run_ok(shell, "%tool mcp list")
    assert listing.rows[0]["state"] == "ready" and len(listing.rows[0]["tools"]) == 2
    assert "<table>" in listing._repr_html_()
    run_ok(shell, "%tool mcp restart time")
    run_ok(shell, "%tool mcp remove time")
    assert "mcp__time__get_current_time" not in registry
    assert "No MCP servers" in repr(run_ok(shell, "%tool mcp list"))


def test_mcp_mistakes_are_one_sentence(shell: InteractiveShell, registry: Registry) -> None:
    for line, fragment in [
        ("%tool mcp add x", "either `-- COMMAND"),
        ("%tool mcp add -- cmd", "one server name"),
        ("%tool mcp remove ghost", "No MCP server named 'ghost'"),
        ("%tool mcp frobnicate", "Unknown `%tool mcp` action"),
        ("%tool serve --port abc", "--port must be a whole number"),
    ]:
        result = shell.run_cell(line)
        assert result.error_in_exec is not None, line
        assert fragment in str(result.error_in_exec), (line, str(result.error_in_exec))


def test_mcp_add_shows_errors_with_stderr(shell: InteractiveShell, registry: Registry) -> None:
    script = "import sys; sys.stderr.write('no token configured\\n'); sys.exit(1)"
    shown = run_ok(shell, f'%tool mcp add bad --wait -- {sys.executable} -c "{script}"')
    # it may already be trying again (still broken, with the same reason and stderr)
    assert re.search(r"bad: (error|reconnecting) ", repr(shown)), repr(shown)
    assert "no token configured" in repr(shown)


def test_serve_from_the_kernel_without_blocking(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(
        shell,
        "from nexus_jupyter import tool\n"
        "@tool\ndef shout(text: str) -> str:\n    'Upper-case the text.'\n"
        "    return text.upper()\n"
        "import nexus_jupyter\nnexus_jupyter.registry().add(shout)",
    )
    message = run_ok(shell, "%tool serve --port 0")
    url = str(message).split(" at ", 1)[1].split(" ", 1)[0]
    assert url.startswith("http://127.0.0.1:")
    again = shell.run_cell("%tool serve")
    assert "Already serving" in str(again.error_in_exec)

    async def use() -> str:
        async with mcp.Client(url) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "shout" in names
            return text(await client.call_tool("shout", {"text": "hi"}))

    assert asyncio.run(use()) == "HI"
    assert "Stopped serving" in run_ok(shell, "%tool serve --stop")
    assert "Not serving" in run_ok(shell, "%tool serve --stop")


def test_serve_counts_the_tools_a_client_is_offered(
    shell: InteractiveShell, registry: Registry
) -> None:
    """Not every tool of the registry: those above the MCP grant are not listed, and with
    --defer only the eager ones (and tool_search) are."""
    from nexus_jupyter.core.policy.policy import Policy

    registry.policy = Policy()  # MCP callers: workspace_write, as nex.yaml's default
    run_ok(
        shell,
        "from nexus_jupyter import tool\n"
        "@tool\ndef shout(text: str) -> str:\n    'Upper-case the text.'\n"
        "    return text.upper()\n"
        "@tool(permission='danger_full_access', eager=True)\n"
        "def wipe(path: str) -> str:\n    'Pretend to delete a path.'\n    return path\n"
        "@tool(eager=True)\ndef whisper(text: str) -> str:\n    'Lower-case the text.'\n"
        "    return text.lower()\n"
        "import nexus_jupyter\nfor t in (shout, wipe, whisper):\n"
        "    nexus_jupyter.registry().add(t)",
    )

    async def listed(url: str) -> set[str]:
        async with mcp.Client(url) as client:
            return {t.name for t in (await client.list_tools()).tools}

    for line in ("%tool serve --port 0", "%tool serve --port 0 --defer"):
        message = str(run_ok(shell, line))
        url = message.split(" at ", 1)[1].split(" ", 1)[0]
        names = asyncio.run(listed(url))
        run_ok(shell, "%tool serve --stop")
        assert "wipe" not in names and "whisper" in names
        assert message.startswith(f"Serving {len(names)} tools"), (line, message, names)
        if "--defer" in line:
            assert "shout" not in names
            assert f"Serving {len(names)} tools (1 more deferred: found with tool_search)" in (
                message
            )
        else:
            assert names == {"shout", "whisper"} and len(registry) == 3
