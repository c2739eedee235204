"""Tool tests and stats over REST, on a real Jupyter server with the server's own registry
(the watched tools folder): save a case, see it beside the file, run it, see the test state
in the rows and on the events socket within a second of a breaking save, and the stats."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only
from tornado.httpclient import HTTPClientError

from nexus_jupyter.sources.tool_tests import read_case_file

ADD = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a {op} b
'''


@pytest.fixture
def tools_dir(jp_root_dir) -> Path:
    path = Path(jp_root_dir) / "tools" / "dynamic"
    path.mkdir(parents=True, exist_ok=True)
    (path / "add.py").write_text(ADD.format(op="+"))
    (Path(jp_root_dir) / "nex.yaml").write_text("search: {mode: keyword}\naudit: false\n")
    return path


@pytest.fixture
def jp_server_config(tools_dir):
    return {"ServerApp": {"jpserver_extensions": {"nexus_jupyter": True}}}


async def get_json(jp_fetch, *parts, **kwargs):
    response = await jp_fetch("nexus", "api", *parts, **kwargs)
    return json.loads(response.body)


async def post_json(jp_fetch, *parts, body):
    response = await jp_fetch("nexus", "api", *parts, method="POST", body=json.dumps(body))
    return response.code, json.loads(response.body)


async def next_change(ws, where, deadline: float) -> dict:
    """The next ``changed`` event ``where`` accepts, before ``deadline`` (monotonic)."""
    while True:
        left = deadline - time.monotonic()
        assert left > 0, "no such event in time"
        message = await asyncio.wait_for(ws.read_message(), left)
        assert message is not None, "the events socket closed"
        event = json.loads(message)
        if event["type"] == "changed" and where(event):
            return event


async def row_of(jp_fetch, name: str) -> dict:
    listing = await get_json(jp_fetch, "tools", params={"q": ""})
    return next(r for r in listing["tools"] if r["name"] == name)


@on_server_loop
async def test_save_a_case_over_rest_and_see_it_beside_the_file(jp_fetch, tools_dir):
    code, body = await post_json(
        jp_fetch, "tools", "add", "tests", body={"arguments": {"a": 1, "b": 2}, "expect": 3}
    )
    assert code == 201
    assert body["saved"] == str(tools_dir / "add.tests.yaml")
    assert [c.expectation.value for c in read_case_file(tools_dir / "add.tests.yaml")] == [3]
    listed = await get_json(jp_fetch, "tools", "add", "tests")
    assert listed["cases"] == [{"tool": "add", "arguments": {"a": 1, "b": 2}, "expect": 3}]
    ran = await post_json(jp_fetch, "tools", "add", "tests", "run", body={})
    assert ran[1]["tests"]["state"] == "passed" and ran[1]["report"]["ok"] is True
    details = await get_json(jp_fetch, "tools", "add")
    assert details["tests"]["state"] == "passed"
    with pytest.raises(HTTPClientError) as info:
        await post_json(jp_fetch, "tools", "add", "tests", body={"arguments": {}, "expcet": 3})
    assert info.value.code == 400
    assert (
        "unknown key 'expcet'. Did you mean 'expect'?"
        in json.loads(info.value.response.body)["message"]
    )
    with pytest.raises(HTTPClientError) as info:
        await post_json(jp_fetch, "tools", "nope", "tests", body={"arguments": {}})
    assert info.value.code == 404


async def a_passing_case(jp_fetch, jp_ws_fetch, tools_dir):
    """Save a case of ``add`` and wait for its row to say passed; returns the events socket."""
    (tools_dir / "add.tests.yaml").write_text(
        "- tool: add\n  arguments: {a: 1, b: 2}\n  expect: 3\n"
    )
    ws = await jp_ws_fetch("nexus", "api", "events")
    deadline = time.monotonic() + 20
    while ((await row_of(jp_fetch, "add"))["tests"] or {}).get("state") != "passed":
        await next_change(ws, lambda e: "add" in e.get("tests", []), deadline)
    return ws


@pytest.mark.timing  # a latency target: runs alone, after the parallel phase
@on_server_loop
async def test_a_breaking_save_turns_the_row_failed_within_a_second_and_a_fix_back(
    jp_fetch, jp_ws_fetch, tools_dir
):
    ws = await a_passing_case(jp_fetch, jp_ws_fetch, tools_dir)
    try:
        saved = time.monotonic()
        (tools_dir / "add.py").write_text(ADD.format(op="-"))
        state = None
        while state != "failed":
            await next_change(ws, lambda e: "add" in e.get("tests", []), saved + 1.0)
            state = (await row_of(jp_fetch, "add"))["tests"]["state"]
        row = await row_of(jp_fetch, "add")
        assert "add.tests.yaml case 1 (line 1)" in row["tests"]["broke"]
        assert "$: expected 3, got -1" in row["tests"]["summary"]
        print(f"\nREST row failed {(time.monotonic() - saved) * 1000:.0f} ms after the save")

        saved = time.monotonic()
        (tools_dir / "add.py").write_text(ADD.format(op="+"))
        while state != "passed":
            await next_change(ws, lambda e: "add" in e.get("tests", []), saved + 1.0)
            state = (await row_of(jp_fetch, "add"))["tests"]["state"]
    finally:
        ws.close()


@pytest.fixture
def not_a_kernel():
    """No kernel-side filter in this process: a notebook test run before in it may have
    loaded the extension into an InteractiveShell that lives on (a kernel drops the line)."""
    monitor = logging.getLogger("nexus_jupyter.core.tooltests.monitor")
    kept = list(monitor.filters)
    for one in kept:
        monitor.removeFilter(one)
    yield
    for one in kept:
        monitor.addFilter(one)


@on_server_loop
async def test_a_broken_test_is_in_the_servers_log_with_its_prefix(
    jp_fetch, jp_ws_fetch, tools_dir, jp_serverapp, caplog, not_a_kernel
):
    ws = await a_passing_case(jp_fetch, jp_ws_fetch, tools_dir)
    try:
        deadline = time.monotonic() + 20
        (tools_dir / "add.py").write_text(ADD.format(op="-"))
        while ((await row_of(jp_fetch, "add"))["tests"] or {}).get("state") != "failed":
            await next_change(ws, lambda e: "add" in e.get("tests", []), deadline)
    finally:
        ws.close()
    server = jp_serverapp.log.name  # the test setup sends the server's log to caplog
    lines = [r.getMessage() for r in caplog.records if r.name == server]
    lines = [line for line in lines if "test broke" in line]
    assert lines, "the server's log does not have the line"
    for line in lines:
        assert line.startswith("nexus_jupyter: tool add: its test broke after a change: failed: ")


@on_server_loop
async def test_stats_of_the_servers_calls(jp_fetch, tools_dir):
    for a in (1, 2, 3):
        await jp_fetch(
            "nexus",
            "api",
            "tools",
            "add",
            "call",
            method="POST",
            body=json.dumps({"arguments": {"a": a, "b": 1}}),
        )
    stats = (await get_json(jp_fetch, "stats"))["tools"]["add"]
    assert stats["calls"] == 3 and stats["errors"] == 0
    assert stats["p50_ms"] > 0 and stats["p95_ms"] >= stats["p50_ms"]
    details = await get_json(jp_fetch, "tools", "add")
    assert details["stats"]["calls"] == 3


@pytest.mark.parametrize(
    ("method", "parts"),
    [
        ("GET", ("tools", "add", "tests")),
        ("POST", ("tools", "add", "tests")),
        ("POST", ("tools", "add", "tests", "run")),
        ("GET", ("stats",)),
    ],
)
@on_server_loop
async def test_the_new_routes_refuse_requests_without_a_token(jp_fetch, tools_dir, method, parts):
    body = json.dumps({"arguments": {"a": 1, "b": 2}, "expect": 3}) if method == "POST" else None
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(
            "nexus", "api", *parts, method=method, body=body, headers={"Authorization": ""}
        )
    assert info.value.code == 403
    assert not (tools_dir / "add.tests.yaml").exists()
