"""The Jupyter server extension on a real Jupyter server (pytest-jupyter): every route, auth,
XSRF, search and filters, calls, per-field errors, policy, and live events."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only
from pydantic import BaseModel
from tornado.httpclient import HTTPClientError

from nexus_jupyter import Registry, Tool, ToolContext, tool
from nexus_jupyter.core.policy.policy import Policy

EVENT_DEADLINE_S = 10.0


# -- a registry with known tools and the real policy ----------------------------------------


class Item(BaseModel):
    name: str
    qty: int


@tool(categories=["math"], capabilities=["arithmetic"])
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool(categories=["text"])
def greet(name: str, times: int = 1) -> str:
    """Say hello to someone, a number of times."""
    return " ".join([f"Hello, {name}!"] * times)


@tool(categories=["shop"])
def order(items: list[Item]) -> int:
    """Count the items of an order."""
    return sum(i.qty for i in items)


@tool(permission="workspace_write")
def nuke() -> str:
    """Destroy everything."""
    return "boom"


@tool(permission="danger_full_access")
def format_disk(device: str) -> str:
    """Format a disk."""
    return f"formatted {device}"


@tool(permission="workspace_write")
def wipe(path: str) -> str:
    """Wipe a folder."""
    return f"wiped {path}"


@tool
def explode() -> None:
    """Always fails."""
    raise ValueError("kaboom")


def make_registry() -> Registry:
    # The real policy: rules from nex.yaml's shape; REST clients are granted workspace_write.
    policy = Policy(
        rules=[{"tool": "nuke", "action": "blocked"}, {"tool": "wipe", "action": "ask"}]
    )
    reg = Registry(search="keyword", policy=policy)
    for fn in (multiply, greet, order, nuke, wipe, explode, format_disk):
        reg.add(fn)
    return reg


@pytest.fixture
def given_registry(request):
    """The registry handed to the server; ``None`` makes the server build its own."""
    param = getattr(request, "param", "scripted")
    if param is None:
        yield None
        return
    reg = make_registry()
    yield reg
    reg.close()


@pytest.fixture
def root_files(request) -> dict[str, str]:
    """Files written into the server's root before it starts (parametrize indirectly)."""
    return getattr(request, "param", {})


@pytest.fixture
def tools_dir(jp_root_dir, root_files) -> Path:
    path = Path(jp_root_dir) / "tools" / "dynamic"
    path.mkdir(parents=True, exist_ok=True)
    for rel, text in root_files.items():
        (Path(jp_root_dir) / rel).write_text(text)
    return path


@pytest.fixture
def jp_server_config(given_registry, tools_dir):
    # A factory, not the registry: config values are deep-copied (functions are kept as is).
    settings = {}
    if given_registry is not None:
        settings["nexus_registry_factory"] = lambda root: given_registry
    return {
        "ServerApp": {
            "jpserver_extensions": {"nexus_jupyter": True},
            "tornado_settings": settings,
        }
    }


async def get_json(jp_fetch, *parts, **kwargs):
    response = await jp_fetch("nexus", "api", *parts, **kwargs)
    return json.loads(response.body)


async def call(jp_fetch, name, arguments=None, approved=False):
    body = json.dumps({"arguments": arguments or {}, "approved": approved})
    return await jp_fetch("nexus", "api", "tools", name, "call", method="POST", body=body)


async def expect_error(status, awaitable):
    with pytest.raises(HTTPClientError) as info:
        await awaitable
    assert info.value.code == status, info.value.response.body if info.value.response else ""
    body = info.value.response.body if info.value.response is not None else b""
    return json.loads(body) if body else None


# -- auth ---------------------------------------------------------------------------------


def _routes() -> list[tuple[str, tuple[str, ...]]]:
    """Every HTTP route the extension serves, with each method its handler answers (the
    tool-name part filled in): a new route cannot be left out of the auth test."""
    from tornado.websocket import WebSocketHandler

    from nexus_jupyter.serve.jupyter_handlers import handlers

    routes = []
    for pattern, handler in handlers("/", lambda *parts: "/".join(p.strip("/") for p in parts)):
        if issubclass(handler, WebSocketHandler):
            continue  # the events socket: test_events_socket_refuses_connections_without_a_token
        parts = tuple("multiply" if "(" in p else p for p in pattern.split("/")[2:])
        for method in ("get", "post", "put", "delete"):
            if method in handler.__dict__:
                routes.append((method.upper(), parts))
    return routes


ROUTES = _routes()


@pytest.mark.parametrize(("method", "parts"), ROUTES)
@on_server_loop
async def test_every_route_refuses_requests_without_a_token(jp_fetch, method, parts):
    body = json.dumps({"arguments": {"a": 1, "b": 2}}) if method == "POST" else None
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(
            "nexus", "api", *parts, method=method, body=body, headers={"Authorization": ""}
        )
    assert info.value.code == 403


@on_server_loop
async def test_events_socket_refuses_connections_without_a_token(jp_ws_fetch):
    with pytest.raises(HTTPClientError) as info:
        await jp_ws_fetch("nexus", "api", "events", headers={"Authorization": ""})
    assert info.value.code == 403


async def _login_cookie(jp_fetch) -> str:
    """Authenticate once with the token; the server answers with its login cookie."""
    response = await jp_fetch("nexus", "api", "status")
    cookies = [c.split(";", 1)[0] for c in response.headers.get_list("Set-Cookie")]
    login = [c for c in cookies if c.startswith("username-")]
    assert login, f"no login cookie in {cookies}"
    return login[0]


@on_server_loop
async def test_cookie_authenticated_post_without_xsrf_is_refused(jp_fetch):
    # Token-authenticated requests skip XSRF by design (a token is not sent by a browser on
    # its own); a browser session is cookie-authenticated, and there XSRF must hold.
    cookie = await _login_cookie(jp_fetch)
    headers = {"Authorization": "", "Cookie": cookie}
    data = await get_json(jp_fetch, "tools", headers=headers)  # cookie alone is enough for GET
    assert data["total"] > 0
    body = json.dumps({"arguments": {"a": 2, "b": 3}})
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch(
            "nexus", "api", "tools", "multiply", "call", method="POST", body=body, headers=headers
        )
    assert info.value.code == 403
    assert b"XSRF" in info.value.response.body or b"_xsrf" in info.value.response.body


@on_server_loop
async def test_cookie_authenticated_post_with_xsrf_token_runs(jp_fetch):
    cookie = await _login_cookie(jp_fetch)
    headers = {"Authorization": "", "Cookie": f"{cookie}; _xsrf=abc123", "X-XSRFToken": "abc123"}
    body = json.dumps({"arguments": {"a": 2, "b": 3}})
    response = await jp_fetch(
        "nexus", "api", "tools", "multiply", "call", method="POST", body=body, headers=headers
    )
    assert json.loads(response.body)["structured"] == 6


# -- catalog ------------------------------------------------------------------------------


@on_server_loop
async def test_list_returns_every_tool_sorted_with_badges(jp_fetch):
    data = await get_json(jp_fetch, "tools")
    names = [t["name"] for t in data["tools"]]
    assert names == sorted(names)
    assert {"multiply", "greet", "order", "nuke", "wipe", "explode"} <= set(names)
    row = next(t for t in data["tools"] if t["name"] == "format_disk")
    assert row["permission"] == "danger_full_access"
    assert row["source"] == "notebook"
    assert row["status"] == "ok"
    assert row["shadowed"] == []
    assert data["total"] == len(names)


@on_server_loop
async def test_a_shadowed_tool_is_listed_under_its_source(jp_fetch, given_registry):
    from nexus_jupyter.core.registry.source import MutableSource

    builtin = MutableSource("test-builtin", "builtin")
    builtin.put(Tool.from_function(multiply))
    given_registry.add_source(builtin)
    data = await get_json(jp_fetch, "tools", params={"q": "multiply"})
    rows = [(t["name"], t["source"], t["shadowed_by"], t["shadowed"]) for t in data["tools"]]
    assert rows[:2] == [
        ("multiply", "notebook", None, ["test-builtin"]),
        ("multiply", "test-builtin", "notebook", []),
    ]
    details = await get_json(jp_fetch, "tools", "multiply")
    assert [s["source"] for s in details["shadowed"]] == ["test-builtin"]


@on_server_loop
async def test_search_ranks_the_matching_tool_first(jp_fetch):
    data = await get_json(jp_fetch, "tools", params={"q": "multiply integers"})
    assert data["tools"][0]["name"] == "multiply"
    assert data["tools"][0]["score"] is not None


@on_server_loop
async def test_search_naming_a_service_without_tools_says_so(jp_fetch):
    data = await get_json(jp_fetch, "tools", params={"q": "multiply the numbers in PayPal"})
    assert data["tools"] == [] and data["unserved"] == ["PayPal"]
    found = await get_json(jp_fetch, "tools", params={"q": "multiply integers"})
    assert found["unserved"] == [] and found["searched_for"] == "multiply integers"
    typo = await get_json(jp_fetch, "tools", params={"q": "mulitply integers"})
    assert typo["searched_for"] == "multiply integers" and typo["tools"][0]["name"] == "multiply"


@on_server_loop
async def test_search_with_no_match_suggests_close_names(jp_fetch):
    data = await get_json(jp_fetch, "tools", params={"q": "multiplyy"})
    if not data["tools"]:
        assert "multiply" in data["suggestions"]
    else:
        assert data["tools"][0]["name"] == "multiply"


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"category": "math"}, {"multiply"}),
        ({"capability": "arithmetic"}, {"multiply"}),
        ({"permission": "danger_full_access"}, {"format_disk"}),
        ({"permission": "workspace_write"}, {"wipe", "nuke"}),
        ({"q": "hello", "category": "text"}, {"greet"}),
    ],
)
@on_server_loop
async def test_filters_narrow_the_list(jp_fetch, params, expected):
    data = await get_json(jp_fetch, "tools", params=params)
    assert {t["name"] for t in data["tools"]} == expected


@on_server_loop
async def test_paging_with_offset_and_limit(jp_fetch):
    everything = await get_json(jp_fetch, "tools")
    page = await get_json(jp_fetch, "tools", params={"offset": 2, "limit": 2})
    assert [t["name"] for t in page["tools"]] == [t["name"] for t in everything["tools"][2:4]]
    assert page["total"] == everything["total"]


@on_server_loop
async def test_bad_filter_values_are_a_400(jp_fetch):
    body = await expect_error(400, jp_fetch("nexus", "api", "tools", params={"limit": "x"}))
    assert "limit" in body["message"]


@on_server_loop
async def test_details_have_schema_status_and_versions(jp_fetch):
    data = await get_json(jp_fetch, "tools", "greet")
    assert data["name"] == "greet"
    assert data["input_schema"]["properties"]["name"]["type"] == "string"
    assert data["input_schema"]["required"] == ["name"]
    assert data["status"] == "ok"
    assert data["versions"][0]["version"] == data["version"]
    assert data["versions"][0]["current"] is True


@on_server_loop
async def test_unknown_tool_is_a_404_with_suggestions(jp_fetch):
    body = await expect_error(404, jp_fetch("nexus", "api", "tools", "gret"))
    assert body["error"] == "not_found"
    assert "greet" in body["suggestions"]


@on_server_loop
async def test_status_lists_sources(jp_fetch):
    data = await get_json(jp_fetch, "status")
    assert "notebook" in [s["name"] for s in data["sources"]]
    assert data["tools"] >= 6


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
    above = (await get_json(jp_fetch, "tools", "format_disk"))["call_policy"]
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


# -- live events --------------------------------------------------------------------------


@on_server_loop
async def test_events_announce_a_tool_added_from_another_thread(jp_ws_fetch, given_registry):
    ws = await jp_ws_fetch("nexus", "api", "events")
    try:
        hello = await next_event(ws, "hello")
        assert hello["tools"] >= 6

        @tool
        def shout(text: str) -> str:
            """Shout the text."""
            return text.upper()

        # Registry events fire on the thread that made the change, not the server's loop.
        threading.Thread(target=given_registry.add, args=(shout,)).start()
        event = await next_event(ws)
        assert event["added"] == ["shout"]
        assert event["removed"] == []
    finally:
        ws.close()


@pytest.mark.parametrize("given_registry", [None], indirect=True)
@on_server_loop
async def test_events_deliver_a_tool_file_saved_in_the_watched_folder(
    jp_fetch, jp_ws_fetch, tools_dir
):
    ws = await jp_ws_fetch("nexus", "api", "events")
    try:
        await next_event(ws, "hello")
        (tools_dir / "multiply_tool.py").write_text(
            "from nexus_jupyter import tool\n\n"
            '@tool(categories=["math"])\n'
            "def multiply(a: int, b: int) -> int:\n"
            '    """Multiply two integers."""\n'
            "    return a * b\n"
        )
        event = await next_event(ws, where=lambda e: "multiply" in e["added"])
        assert event["type"] == "changed"
        data = json.loads((await call(jp_fetch, "multiply", {"a": 3, "b": 4})).body)
        assert data["structured"] == 12

        # A broken save keeps the last good tool and shows the error in status.
        (tools_dir / "multiply_tool.py").write_text("def broken(:\n")
        loop = asyncio.get_running_loop()
        end = loop.time() + EVENT_DEADLINE_S
        while True:
            # Each status change is announced; the one we want names the broken file.
            await next_event(ws, where=lambda e: e["sources"], deadline=end - loop.time())
            status = await get_json(jp_fetch, "status")
            folder = next(s for s in status["sources"] if s["kind"] == "directory")
            if folder["error"]:
                break
        assert "multiply_tool.py" in folder["error"]
        data = json.loads((await call(jp_fetch, "multiply", {"a": 2, "b": 5})).body)
        assert data["structured"] == 10, "the last good version must stay live"
        # the sidebar's row and details say the live tool is stale, and why
        row = next(
            t for t in (await get_json(jp_fetch, "tools"))["tools"] if t["name"] == "multiply"
        )
        assert row["stale"].startswith("stale: multiply_tool.py failed to reload (")
        assert (await get_json(jp_fetch, "tools", "multiply"))["stale"] == row["stale"]
    finally:
        ws.close()


@pytest.mark.parametrize("given_registry", [None], indirect=True)
@pytest.mark.parametrize("root_files", [{"nex.yaml": "approvals: [oops\n"}], indirect=True)
@on_server_loop
async def test_a_broken_nex_yaml_still_serves_the_tools_folder_and_says_why(jp_fetch, tools_dir):
    status = await get_json(jp_fetch, "status")
    config = next(s for s in status["sources"] if s["name"] == "nex.yaml")
    assert "invalid YAML" in config["error"]
    assert any(s["kind"] == "directory" for s in status["sources"])


@pytest.mark.parametrize("given_registry", [None], indirect=True)
@on_server_loop
async def test_tools_filter_by_toolset_and_calls_carry_their_summary(jp_fetch):
    data = await get_json(jp_fetch, "tools", params={"toolset": "files"})
    assert {t["name"] for t in data["tools"]} == {"read", "ls", "glob", "grep", "write", "edit"}
    assert {t["toolset"] for t in data["tools"]} == {"files"}
    response = await call(jp_fetch, "ls", {"path": "."})
    assert json.loads(response.body)["summary"] == "Listing ."
    status = await get_json(jp_fetch, "status")  # the sidebar's toolset filter reads these
    rows = {r["toolset"]: r for r in status["toolsets"]}
    assert rows["shell"]["tools"] == ["bash"] and rows["shell"]["enabled"] is True
    assert rows["files"]["origin"] == "builtin"
