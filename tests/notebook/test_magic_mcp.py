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
