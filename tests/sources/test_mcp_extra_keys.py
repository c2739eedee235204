"""An MCP server's tool schema is JSON Schema: a key it does not list (and it says nothing of
``additionalProperties``) is sent on to the server, which decides, as it would without nexus
in between. Real upstream processes: mcp-server-time (PyPI) and server-everything (npm)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_until  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry, ToolValidationError
from nexus_jupyter.sources.mcp import McpSource

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

TESTS = Path(__file__).resolve().parents[1]
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
EVERYTHING = TESTS / "mcp_peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE22 = TESTS / "conformance/node_modules/.bin/node"
NODE = str(NODE22) if NODE22.exists() else shutil.which("node")


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(search="keyword")
    yield registry
    registry.close()


def _connected(reg: Registry, source: McpSource) -> None:
    wait_until(reg, lambda: source.state == "ready", timeout=60)


def test_an_extra_key_reaches_the_time_server_and_the_call_succeeds(reg: Registry) -> None:
    source = reg.add_source(McpSource("time", command=str(TIME_SERVER)))
    _connected(reg, source)
    tool = reg.get("mcp__time__get_current_time")
    schema = tool.spec.input_schema
    assert "timezone" in schema["properties"] and "additionalProperties" not in schema
    assert not tool.schema_from_python
    arguments = {"timezone": "UTC", "verbose": True}
    assert tool.validate(arguments) == arguments  # what the handler sends to the server
    result = reg.call_sync("mcp__time__get_current_time", arguments)
    assert result.ok, result.error
    assert result.structured["timezone"] == "UTC"
    # what the schema does say is still checked here first
    with pytest.raises(ToolValidationError) as info:
        reg.call_sync("mcp__time__get_current_time", {"timezone": 42, "verbose": True})
    assert [e.path for e in info.value.errors] == ["$.timezone"]


@pytest.mark.skipif(
    not EVERYTHING.exists() or NODE is None,
    reason="server-everything is not installed: run `make npm-deps` (npm ci in tests/mcp_peers)",
)
def test_an_extra_key_reaches_server_everything_and_the_call_succeeds(reg: Registry) -> None:
    source = reg.add_source(
        McpSource("everything", command=str(NODE), args=[str(EVERYTHING), "stdio"])
    )
    _connected(reg, source)
    echo = reg.get("mcp__everything__echo")
    assert "additionalProperties" not in echo.spec.input_schema
    arguments = {"message": "hi", "extra": 1}
    assert echo.validate(arguments) == arguments
    result = reg.call_sync("mcp__everything__echo", arguments)
    assert result.ok, result.error
    assert "hi" in result.text
