"""Traces across processes: a real MCP client sends a ``traceparent`` in a call's ``_meta`` to a
real ``nexus-tools serve`` (tracing configured by OTEL_* variables, spans printed by the console
exporter); the call's span continues that trace, and the upstream MCP server (a real process,
``tests/mcp_peers/meta_recorder.py``) receives the continued context in its request's
``_meta``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import mcp
import pytest
from serving import serve_http

pytestmark = [pytest.mark.timeout(120)]

RECORDER = Path(__file__).resolve().parents[1] / "mcp_peers" / "meta_recorder.py"
ADD = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''
TRACE_A, PARENT_A = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
TRACE_B, PARENT_B = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


def spans_in(output: str) -> list[dict]:
    """The span JSON objects the console exporter printed, among the server's log lines."""
    decoder = json.JSONDecoder()
    found, at = [], 0
    while (start := output.find('{\n    "name": ', at)) != -1:
        span, at = decoder.raw_decode(output, start)
        found.append(span)
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tools" / "dynamic").mkdir(parents=True)
    (tmp_path / "tools" / "dynamic" / "add.py").write_text(ADD)
    (tmp_path / "nex.yaml").write_text(
        "search: {mode: keyword}\naudit: false\n"
        "approvals: {'mcp__rec__*': pre_approved}\n"
        f"mcp:\n  servers:\n    - {{name: rec, command: {sys.executable}, args: [{RECORDER}]}}\n"
    )
    return tmp_path


async def _wait_listed(client: mcp.Client, name: str, deadline: float) -> None:
    import asyncio

    while name not in {t.name for t in (await client.list_tools()).tools}:
        assert time.monotonic() < deadline, f"{name} never listed"
        await asyncio.sleep(0.1)  # the upstream server process is still starting


async def test_the_clients_traceparent_is_continued_and_passed_upstream(
    project: Path, tmp_path: Path
) -> None:
    env = {
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_BSP_SCHEDULE_DELAY": "50",
        "OTEL_SERVICE_NAME": "nexus-under-test",
        "NEXUS_HOME": str(tmp_path / "home"),
        "NEXUS_KERNEL_LINK": "0",
    }
    with serve_http(
        project, "--dir", str(project / "tools" / "dynamic"), env=env, clean_stop=True
    ) as served:
        async with mcp.Client(served.url, mode="legacy") as client:
            await _wait_listed(client, "mcp__rec__received_meta", time.monotonic() + 60)
            added = await client.call_tool(
                "add", {"a": 918273645, "b": 1}, meta={"traceparent": f"00-{TRACE_A}-{PARENT_A}-01"}
            )
            assert not added.is_error
            relayed = await client.call_tool(
                "mcp__rec__received_meta", {}, meta={"traceparent": f"00-{TRACE_B}-{PARENT_B}-01"}
            )
            assert not relayed.is_error, relayed
            upstream_meta = relayed.structured_content
    spans = spans_in("".join(served.output))
    by_id = {s["context"]["span_id"]: s for s in spans}

    # 1. The call's span continues the client's trace: ours <- the SDK's server span <- the
    #    client's span id from `_meta`.
    ours = next(s for s in spans if s["name"] == "execute_tool add")
    assert ours["context"]["trace_id"] == f"0x{TRACE_A}"
    server_span = by_id[ours["parent_id"]]
    assert server_span["name"] == "tools/call add" and server_span["kind"] == "SpanKind.SERVER"
    assert server_span["parent_id"] == f"0x{PARENT_A}"
    attributes = ours["attributes"]
    assert attributes["gen_ai.tool.name"] == "add"
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["mcp.session.id"]  # a legacy streamable-HTTP session has an id
    assert attributes["user.id"] == "unknown"  # no --auth: a remote, unnamed principal
    assert attributes["nexus.call.outcome"] == "ok"
    assert attributes["nexus.tool.source"].startswith("directory:")
    assert ours["resource"]["attributes"]["service.name"] == "nexus-under-test"
    assert "918273645" not in json.dumps(ours)  # argument values never go into a span

    # 2. The upstream server got the continued context: its traceparent is the trace the client
    #    started, with the SDK's outgoing client span (a child of our span) as parent.
    sent = upstream_meta["traceparent"].split("-")
    assert sent[1] == TRACE_B
    relay = next(s for s in spans if s["name"] == "execute_tool mcp__rec__received_meta")
    assert relay["context"]["trace_id"] == f"0x{TRACE_B}"
    assert relay["attributes"]["gen_ai.tool.type"] == "extension"
    outgoing = by_id[f"0x{sent[2]}"]
    assert outgoing["name"] == "MCP send tools/call received_meta"
    assert outgoing["kind"] == "SpanKind.CLIENT"
    assert outgoing["parent_id"] == relay["context"]["span_id"]
