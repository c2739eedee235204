"""OpenTelemetry spans of tool calls, recorded with the SDK's in-memory span exporter: one span
per call with the conventions' attributes, never an argument value; nothing at all when
tracing is off; and configuration from the OTEL_* environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from nexus_jupyter import Registry, RequestInfo, tool
from nexus_jupyter.core.errors import ToolValidationError
from nexus_jupyter.core.telemetry import tracing
from nexus_jupyter.core.tools.context import MCP_CALLER

SECRET_ARGUMENT = 918273645


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def explode(reason: str) -> None:
    """Always fails."""
    raise RuntimeError(f"kaboom: {reason}")


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    try:
        yield exporter
    finally:
        tracing.disable()
        provider.shutdown()


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(search="keyword")
    registry.add_many([add, explode])
    yield registry
    registry.close()


def test_one_span_per_call_with_the_conventions_attributes(spans, reg) -> None:
    request = RequestInfo(
        request_id="mcp-7", principal="alice", session_id="s-123", caller=MCP_CALLER
    )
    assert reg.call_sync("add", {"a": SECRET_ARGUMENT, "b": 1}, request=request).structured
    (span,) = spans.get_finished_spans()
    assert span.name == "execute_tool add"
    assert span.kind == SpanKind.INTERNAL
    attributes = dict(span.attributes)
    assert attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "mcp-7",
        "user.id": "alice",
        "nexus.tool.source": "notebook",
        "nexus.tool.version": reg.get("add").spec.version,
        "nexus.caller": "mcp",
        "mcp.method.name": "tools/call",
        "mcp.session.id": "s-123",
        "nexus.call.outcome": "ok",
    }
    assert span.status.status_code == StatusCode.UNSET
    assert span.end_time > span.start_time  # the span's duration is the call's
    assert str(SECRET_ARGUMENT) not in span.to_json()  # argument values are never recorded


async def test_failures_and_refusals_are_error_spans_without_their_message(spans, reg) -> None:
    result = await reg.call("explode", {"reason": "secret-reason-xyz"})
    assert result.is_error
    with pytest.raises(ToolValidationError):
        await reg.call("add", {"a": "not a number", "b": 1})
    failed, invalid = spans.get_finished_spans()
    assert failed.attributes["nexus.call.outcome"] == "error"
    assert failed.attributes["error.type"] == "RuntimeError"
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.status.description == "RuntimeError"
    assert "secret-reason-xyz" not in failed.to_json()
    assert invalid.attributes["nexus.call.outcome"] == "invalid"
    assert invalid.attributes["error.type"] == "ToolValidationError"
    assert "not a number" not in invalid.to_json()
    assert invalid.attributes["user.id"] == "local"


def test_a_tools_own_spans_and_calls_are_children_of_its_span(spans, reg) -> None:
    @tool
    def outer() -> int:
        """Calls another tool, inside a span of its own."""
        with tracing.TRACER.start_as_current_span("tool work"):
            return reg.call_sync("add", {"a": 1, "b": 2}).structured

    reg.add(outer)
    assert reg.call_sync("outer", {}).structured == 3
    finished = {s.name: s for s in spans.get_finished_spans()}
    root, work, inner = (
        finished["execute_tool outer"],
        finished["tool work"],
        finished["execute_tool add"],
    )
    assert work.parent.span_id == root.context.span_id
    assert inner.parent.span_id == work.context.span_id
    assert {s.context.trace_id for s in finished.values()} == {root.context.trace_id}


def test_no_span_and_nothing_imported_while_tracing_is_off(reg) -> None:
    assert tracing.TRACER is None
    reg.call_sync("add", {"a": 1, "b": 2})
    code = (
        "import sys\n"
        "from nexus_jupyter import Registry, tool\n"
        "@tool\ndef add(a: int, b: int) -> int:\n    'Add.'\n    return a + b\n"
        "reg = Registry(search='keyword'); reg.add(add); reg.call_sync('add', {'a': 1, 'b': 2})\n"
        "from nexus_jupyter.core.telemetry import tracing\n"
        "print(tracing.configure_from_environment(), 'opentelemetry' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "False"]


def test_the_otel_environment_turns_tracing_on_with_its_exporter(tmp_path) -> None:
    code = (
        "from nexus_jupyter import Registry, tool\n"
        "@tool\ndef add(a: int, b: int) -> int:\n    'Add.'\n    return a + b\n"
        f"reg = Registry.default(root={str(tmp_path)!r}, search='keyword', mcp=False)\n"
        "reg.add(add); reg.call_sync('add', {'a': 1, 'b': 2}); reg.close()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(
        OTEL_TRACES_EXPORTER="console", OTEL_SERVICE_NAME="my-tools", NEXUS_HOME=str(tmp_path)
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    span = json.loads(out.stdout)  # the console exporter's JSON, flushed at exit
    assert span["name"] == "execute_tool add"
    assert span["resource"]["attributes"]["service.name"] == "my-tools"
    env["OTEL_SDK_DISABLED"] = "true"
    quiet = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert quiet.stdout == ""
