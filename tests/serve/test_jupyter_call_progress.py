"""A REST call that asks for progress (``"progress": true``) gets the tool's reports in its
answer while the tool runs, then the result, on a real Jupyter server (pytest-jupyter)."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import json
import threading

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only
from tornado.httpclient import HTTPClientError

from nexus_jupyter import Registry, ToolContext, tool

WAIT_S = 10.0
#: set by the test once it has read a progress line: the tool finishes only then
released = threading.Event()


@tool
def countdown(start: int, *, ctx: ToolContext) -> str:
    """Count down, reporting each step; finishes once the client has seen a report."""
    for step in range(start):
        ctx.progress(step + 1, start, f"{start - step - 1} to go")
    return "released" if released.wait(WAIT_S) else "no report reached the client"


@tool
def gives_up(*, ctx: ToolContext) -> None:
    """Reports, then fails."""
    ctx.progress(1, 2, "half way")
    if not released.wait(WAIT_S):
        raise RuntimeError("no report reached the client")
    raise ValueError("the second half is missing")


@tool
def quiet(a: int) -> int:
    """Reports nothing."""
    return a + 1


@pytest.fixture
def jp_server_config():
    def make(root: str) -> Registry:
        reg = Registry(search="keyword")
        for fn in (countdown, gives_up, quiet):
            reg.add(fn)
        return reg

    released.clear()
    return nexus_server_config(make)


async def streamed_call(jp_fetch, name: str, arguments: dict) -> tuple[int, str, list[dict]]:
    """The answer's status, content type and lines; ``released`` is set at the first report."""
    buffer = bytearray()

    def on_chunk(chunk: bytes) -> None:
        buffer.extend(chunk)
        if b'"progress"' in buffer:
            released.set()  # the report came while the tool still runs

    body = json.dumps({"arguments": arguments, "progress": True})
    try:
        response = await jp_fetch(
            "nexus",
            "api",
            "tools",
            name,
            "call",
            method="POST",
            body=body,
            streaming_callback=on_chunk,
        )
    except HTTPClientError as exc:
        assert exc.response is not None
        response = exc.response
    lines = [json.loads(line) for line in bytes(buffer).decode().splitlines() if line.strip()]
    return response.code, response.headers["Content-Type"], lines


@on_server_loop
async def test_progress_comes_while_the_tool_runs_then_the_result(jp_fetch):
    code, kind, lines = await streamed_call(jp_fetch, "countdown", {"start": 3})
    assert code == 200 and kind.startswith("application/x-ndjson")
    *reports, last = lines
    assert reports and all(set(line) == {"progress"} for line in reports)
    # reports that come faster than the client reads are coalesced: the newest is never lost
    assert reports[-1]["progress"] == {"current": 3, "total": 3, "message": "0 to go"}
    assert last["result"]["structured"] == "released"
    assert last["result"]["is_error"] is False


@on_server_loop
async def test_a_tool_that_fails_after_reporting_ends_the_stream_with_its_error(jp_fetch):
    _, _, lines = await streamed_call(jp_fetch, "gives_up", {})
    assert lines[0]["progress"]["message"] == "half way"
    failed = lines[-1]["result"]
    assert failed["is_error"] is True
    assert (failed["error_type"], failed["error"]) == ("ValueError", "the second half is missing")


@on_server_loop
async def test_a_call_without_reports_is_answered_as_plain_json(jp_fetch):
    code, kind, lines = await streamed_call(jp_fetch, "quiet", {"a": 1})
    assert code == 200 and kind.startswith("application/json")
    assert lines[0]["structured"] == 2


@on_server_loop
async def test_invalid_arguments_are_still_a_422_before_anything_runs(jp_fetch):
    code, kind, lines = await streamed_call(jp_fetch, "countdown", {"start": "three"})
    assert code == 422 and kind.startswith("application/json")
    assert lines[0]["error"] == "validation" and lines[0]["errors"][0]["path"] == "$.start"
