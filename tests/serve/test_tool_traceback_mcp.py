"""A failed call keeps the tool's traceback across MCP: the server puts it in a marked block,
and a nexus client (the Jupyter server talking to a kernel) reads it back as the result's
traceback, with the tool's own error type."""

from __future__ import annotations

from nexus_jupyter import Registry, tool
from nexus_jupyter.serve.mcp_bridge import TRACEBACK_MARK, call_result
from nexus_jupyter.sources.mcp_session import result_from_mcp


@tool
def ratio(x: float) -> float:
    """Divide one by x."""
    return 1 / x


def test_traceback_survives_the_mcp_round_trip() -> None:
    with Registry(search="keyword") as registry:
        registry.add(ratio)
        failed = registry.call_sync("ratio", {"x": 0})
    answer = call_result(failed, None)
    assert answer.is_error
    first, trace_block = answer.content
    assert first.text.startswith("Tool 'ratio' failed: float division by zero (ZeroDivisionError).")
    assert trace_block.meta == {TRACEBACK_MARK: True}
    assert "in ratio" in trace_block.text and "return 1 / x" in trace_block.text

    back = result_from_mcp("ratio", answer)
    assert back.error_type == "ZeroDivisionError"
    assert back.error == "float division by zero"
    assert back.traceback == failed.traceback
    assert "nexus_jupyter/" not in back.traceback


def test_a_nexus_server_of_an_earlier_release_is_still_read() -> None:
    """It wrote "ZeroDivisionError: ..." before the traceback block, with no ``_meta``."""
    import mcp_types as types

    earlier = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="ZeroDivisionError: float division by zero"),
            types.TextContent(type="text", text="Traceback ...", _meta={TRACEBACK_MARK: True}),
        ],
        is_error=True,
    )
    back = result_from_mcp("ratio", earlier)
    assert (back.error_type, back.error) == ("ZeroDivisionError", "float division by zero")


def test_other_servers_errors_stay_as_they_were() -> None:
    import mcp_types as types

    plain = types.CallToolResult(
        content=[types.TextContent(type="text", text="ValueError: nope")], is_error=True
    )
    back = result_from_mcp("t", plain)
    assert back.error_type == "McpToolError" and back.error == "ValueError: nope"
    assert back.traceback is None
