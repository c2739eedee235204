"""A REST call that asks for progress (``"progress": true``) gets the tool's reports in its
answer while the tool runs, then the result, on a real Jupyter server (pytest-jupyter): a
client that reads slowly holds one waiting report on the server, not all of them; a failure
after the first report is the stream's last line; a client that leaves cancels the call."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import threading
from typing import Any

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only
from tornado.httpclient import HTTPClientError
from waiting import until

from nexus_jupyter import Registry, ToolContext, ToolUnavailable, tool

WAIT_S = 10.0
#: set by the test once it has read a progress line: the tool finishes only then
released = threading.Event()
#: set by ``floods`` once it made its last report
flooded = threading.Event()
#: set by ``waits`` when its call is cancelled
cancelled = threading.Event()
#: the server's loop (the test's): ``floods`` lets it run once after each report
server_loop: list[asyncio.AbstractEventLoop] = []
MEGABYTE = "x" * (1 << 20)


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


@tool
def floods(steps: int, *, ctx: ToolContext) -> int:
    """Reports a megabyte a step, as fast as the server takes them."""
    for step in range(steps):
        ctx.progress(step + 1, steps, f"{step + 1:04d} {MEGABYTE}")
        # the server's loop runs once before the next report: it could send each one
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0), server_loop[0]).result(WAIT_S)
    flooded.set()
    return steps


@tool
def loses_its_worker(*, ctx: ToolContext) -> None:
    """Reports; then its registry fails the call (see ``FailsAfterReporting``)."""
    ctx.progress(1, 2, "half way")


@tool
def breaks_the_server(*, ctx: ToolContext) -> None:
    """Reports; then its registry fails with a bug (see ``FailsAfterReporting``)."""
    ctx.progress(1, 2, "half way")


@tool
def waits(*, ctx: ToolContext) -> str:
    """Reports, then waits until its call is cancelled."""
    ctx.progress(1, None, "waiting")
    assert ctx.cancellation is not None
    ctx.cancellation.on_cancel(cancelled.set)
    return "cancelled" if cancelled.wait(WAIT_S) else "never cancelled"


class FailsAfterReporting(Registry):
    """A registry whose calls of two tools fail after the tool ran (and reported): what a
    source that loses its worker mid-call, or a bug on the server, does. The core turns a
    tool's own exceptions into a failed result, so only the registry can raise this late."""

    failures = {
        "loses_its_worker": lambda: ToolUnavailable("the worker of 'loses_its_worker' went away"),
        "breaks_the_server": lambda: RuntimeError("a bug on the server"),
    }

    def call(self, name: str, arguments: Any = None, **options: Any) -> Any:
        made = super().call(name, arguments, **options)
        failure = self.failures.get(name)
        if failure is None:
            return made

        async def then_fail() -> Any:
            await made
            raise failure()

        return then_fail()


@pytest.fixture
def jp_server_config():
    def make(root: str) -> Registry:
        reg = FailsAfterReporting(search="keyword")
        for fn in (countdown, gives_up, quiet, floods, loses_its_worker, breaks_the_server, waits):
            reg.add(fn)
        return reg

    for event in (released, flooded, cancelled):
        event.clear()
    server_loop.clear()
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


async def _open_call(
    port: int, base_url: str, auth: dict[str, str], name: str, arguments: dict
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A progress call on a raw connection whose receive buffer is tiny, so the client takes
    only what it reads (it reads nothing until the test says)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    reader, writer = await asyncio.open_connection(sock=sock)
    body = json.dumps({"arguments": arguments, "progress": True}).encode()
    head = [
        f"POST {base_url}nexus/api/tools/{name}/call HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        *(f"{key}: {value}" for key, value in auth.items()),
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
    await writer.drain()
    return reader, writer


@on_server_loop
async def test_a_client_that_reads_slowly_holds_one_waiting_report_not_all(
    jp_fetch, jp_http_port, jp_base_url, jp_auth_header
):
    await jp_fetch("nexus", "api", "status")  # the server is up
    server_loop.append(asyncio.get_running_loop())
    steps = 40  # 40 MB of reports, if the server kept them all
    reader, writer = await _open_call(
        jp_http_port, jp_base_url, jp_auth_header, "floods", {"steps": steps}
    )
    try:
        await until(flooded.is_set, "the tool's last report")
        answer = await asyncio.wait_for(reader.read(), WAIT_S)  # now the client reads it all
    finally:
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200")
    sent = [int(n) for n in re.findall(rb'"message": "(\d{4}) x', answer)]
    # what the connection could hold while the client did not read (about 4 MB), not 40
    assert 0 < len(sent) <= 10, len(sent)
    assert sent == sorted(sent) and sent[0] == 1  # the first went at once; newer ones later
    result = json.loads(answer[answer.index(b'{"result"') :].split(b"\n", 1)[0])
    assert result["result"]["structured"] == steps


@on_server_loop
async def test_a_refusal_after_a_report_ends_the_stream_with_its_error_body(jp_fetch):
    code, kind, lines = await streamed_call(jp_fetch, "loses_its_worker", {})
    assert code == 200 and kind.startswith("application/x-ndjson")  # sent with the report
    assert lines[0] == {"progress": {"current": 1, "total": 2, "message": "half way"}}
    assert lines[-1] == {
        "error": "unavailable",
        "message": "the worker of 'loses_its_worker' went away",
        "status": 503,
    }


@on_server_loop
async def test_a_server_failure_after_a_report_is_the_streams_last_line(jp_fetch, caplog):
    code, _, lines = await streamed_call(jp_fetch, "breaks_the_server", {})
    assert code == 200 and lines[0]["progress"]["message"] == "half way"
    last = lines[-1]
    assert (last["error"], last["status"]) == ("internal", 500)
    assert "RuntimeError: a bug on the server" in last["message"]
    assert "server's log has the traceback" in last["message"]
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in errors] == [
        "nexus_jupyter: the call of 'breaks_the_server' failed after it reported"
    ]  # logged once, with its traceback; not "Cannot send error response after headers"
    assert errors[0].exc_info is not None and errors[0].exc_info[0] is RuntimeError


@on_server_loop
async def test_a_client_that_leaves_mid_stream_cancels_the_call_quietly(
    jp_fetch, jp_http_port, jp_base_url, jp_auth_header, caplog
):
    await jp_fetch("nexus", "api", "status")
    reader, writer = await _open_call(jp_http_port, jp_base_url, jp_auth_header, "waits", {})
    seen = b""
    while b'"progress"' not in seen:
        chunk = await asyncio.wait_for(reader.read(4096), WAIT_S)
        assert chunk, "the server closed before the first report"
        seen += chunk
    writer.close()  # the tab closed, the network dropped, Cancel was clicked
    await until(cancelled.is_set, "the call to be cancelled")
    # the call's result (its answer to no one) is not an error in the server's log
    await jp_fetch("nexus", "api", "status")
    problems = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert problems == []
