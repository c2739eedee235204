"""Calls through the Jupyter server extension on a real Jupyter server (pytest-jupyter):
results, cancellation, per-field errors, and the policy (blocks, grants, approvals)."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import asyncio
import json

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only
from jupyter_rest_fixtures import *  # the registry, the server's config, request helpers

from nexus_jupyter import ToolContext

# -- calls --------------------------------------------------------------------------------


@on_server_loop
async def test_call_returns_the_result_and_its_duration(jp_fetch):
    response = await call(jp_fetch, "multiply", {"a": 6, "b": 7})
    data = json.loads(response.body)
    assert data["structured"] == 42
    assert data["is_error"] is False
    assert data["duration"] >= 0


@on_server_loop
async def test_a_client_that_disconnects_cancels_its_call(jp_fetch, given_registry):
    import threading
    import time as _time

    from tornado.httpclient import HTTPClientError as _ClientError

    started, stopped, sync_stopped = threading.Event(), threading.Event(), threading.Event()

    @tool
    async def slow(seconds: float) -> str:
        """Sleeps, async."""
        started.set()
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            stopped.set()
            raise
        return "finished"

    @tool
    def slow_sync(seconds: float, *, ctx: ToolContext) -> str:
        """Sleeps in a thread, watching for cancellation."""
        end = _time.monotonic() + seconds
        while _time.monotonic() < end:
            if ctx.cancelled:
                sync_stopped.set()
                return "stopped"
            _time.sleep(0.02)
        return "finished"

    given_registry.add(slow)
    given_registry.add(slow_sync)
    for name, flag in (("slow", stopped), ("slow_sync", sync_stopped)):
        body = json.dumps({"arguments": {"seconds": 30}})
        began = _time.monotonic()
        with pytest.raises(_ClientError):  # the client gives up and closes the connection
            await jp_fetch(
                "nexus", "api", "tools", name, "call", method="POST", body=body, request_timeout=0.5
            )
        assert await asyncio.to_thread(flag.wait, 5), f"{name} was not cancelled"
        assert _time.monotonic() - began < 10
    assert started.is_set()
    response = await call(jp_fetch, "multiply", {"a": 6, "b": 7})  # and the server goes on
    assert json.loads(response.body)["structured"] == 42


@on_server_loop
async def test_a_tool_that_cancels_itself_still_gets_an_answer(jp_fetch, given_registry):
    @tool
    async def gives_up() -> str:
        """Raises CancelledError on its own, with the client still waiting."""
        raise asyncio.CancelledError

    given_registry.add(gives_up)
    response = await call(jp_fetch, "gives_up")
    data = json.loads(response.body)
    assert response.code == 200
    assert data["is_error"] is True
    assert data["error_type"] == "CancelledError"
    assert "cancelled" in data["error"]


@on_server_loop
async def test_a_failing_tool_is_a_200_with_the_error(jp_fetch):
    data = json.loads((await call(jp_fetch, "explode")).body)
    assert data["is_error"] is True
    assert data["error"] == "kaboom"
    assert data["error_type"] == "ValueError"


@on_server_loop
async def test_invalid_arguments_come_back_per_field(jp_fetch):
    body = await expect_error(422, call(jp_fetch, "multiply", {"a": "six"}))
    assert body["error"] == "validation"
    paths = {e["path"]: e for e in body["errors"]}
    assert set(paths) == {"$.a", "$.b"}
    assert paths["$.a"]["value"] == "six"


@on_server_loop
async def test_nested_validation_errors_carry_json_paths(jp_fetch):
    items = [{"name": "pen", "qty": 1}, {"name": "ink", "qty": "lots"}]
    body = await expect_error(422, call(jp_fetch, "order", {"items": items}))
    assert [e["path"] for e in body["errors"]] == ["$.items[1].qty"]
    assert body["errors"][0]["loc"] == ["items", 1, "qty"]


@on_server_loop
async def test_blocked_tool_is_a_403(jp_fetch):
    body = await expect_error(403, call(jp_fetch, "nuke"))
    assert body["error"] == "permission_denied"
    assert "blocked" in body["message"]


@on_server_loop
async def test_tool_above_the_rest_grant_is_a_403(jp_fetch):
    body = await expect_error(403, call(jp_fetch, "format_disk", {"device": "sda"}, approved=True))
    assert body["error"] == "permission_denied"
    assert "grant" in body["message"]


@on_server_loop
async def test_ask_tool_needs_approval_then_runs_when_approved(jp_fetch):
    body = await expect_error(409, call(jp_fetch, "wipe", {"path": "/tmp/x"}))
    assert body["error"] == "approval_required"
    assert "approv" in body["message"]
    assert body["why"] is None  # a plain REST client (a token holder) is not told the rule
    # the sidebar of a user who may edit nex.yaml is told why it asks, for its dialog
    sidebar = {"X-Nexus-Face": "sidebar"}
    asked = await expect_error(409, call(jp_fetch, "wipe", {"path": "/tmp/x"}, headers=sidebar))
    assert asked["why"] == "Tool 'wipe' (workspace_write) needs approval: approvals.wipe says ask."
    data = json.loads((await call(jp_fetch, "wipe", {"path": "/tmp/x"}, approved=True)).body)
    assert data["structured"] == "wiped /tmp/x"


@on_server_loop
async def test_bad_arguments_to_an_ask_tool_are_a_422_not_a_409(jp_fetch):
    """The panel asks its user only about a call that could run."""
    body = await expect_error(422, call(jp_fetch, "wipe", {"path": 5}))
    assert [e["path"] for e in body["errors"]] == ["$.path"]
    await expect_error(422, call(jp_fetch, "wipe", {}))


@on_server_loop
async def test_approval_does_not_lift_a_block(jp_fetch):
    await expect_error(403, call(jp_fetch, "nuke", approved=True))
    await expect_error(403, call(jp_fetch, "nuke", approved="always"))


@on_server_loop
async def test_approved_always_stops_asking_for_the_session(jp_fetch):
    await expect_error(409, call(jp_fetch, "wipe", {"path": "/tmp/a"}))
    first = await call(jp_fetch, "wipe", {"path": "/tmp/a"}, approved="always")
    assert json.loads(first.body)["structured"] == "wiped /tmp/a"
    again = await call(jp_fetch, "wipe", {"path": "/tmp/b"})  # no 409 this time
    assert json.loads(again.body)["structured"] == "wiped /tmp/b"


@on_server_loop
async def test_details_say_what_policy_decides_for_a_call_from_the_panel(jp_fetch):
    assert (await get_json(jp_fetch, "tools", "greet"))["call_policy"]["action"] == "allow"
    assert (await get_json(jp_fetch, "tools", "wipe"))["call_policy"]["action"] == "ask"
    blocked = (await get_json(jp_fetch, "tools", "nuke"))["call_policy"]
    assert blocked["action"] == "deny" and "blocked" in blocked["reason"]
    plain = (await get_json(jp_fetch, "tools", "format_disk"))["call_policy"]
    # a plain REST client (a script, an agent with the token) gets no grant hint
    assert plain["action"] == "deny" and "nex.yaml" not in plain["reason"]
    assert "person running this server" in plain["reason"]
    sidebar = {"X-Nexus-Face": "sidebar"}
    above = (await get_json(jp_fetch, "tools", "format_disk", headers=sidebar))["call_policy"]
    assert above["action"] == "deny" and "grant" in above["reason"]
    # worded for the person at the sidebar, who may edit the server's nex.yaml: the levels,
    # and the line that allows it (not "rest callers", not "only the person running ...")
    assert (
        "the JupyterLab sidebar (and the REST API) is granted 'workspace_write'"
        in (above["reason"])
    )
    assert "`grant: {rest: danger_full_access}` in nex.yaml" in above["reason"]
    assert "person running this server" not in above["reason"]


@on_server_loop
async def test_calling_an_unknown_tool_is_a_404(jp_fetch):
    body = await expect_error(404, call(jp_fetch, "multiplyy", {"a": 1}))
    assert "multiply" in body["suggestions"]


@on_server_loop
async def test_a_body_that_is_not_json_is_a_400(jp_fetch):
    response = jp_fetch("nexus", "api", "tools", "multiply", "call", method="POST", body="{")
    body = await expect_error(400, response)
    assert "not JSON" in body["message"]
