"""The Jupyter server extension on a real Jupyter server (pytest-jupyter): every route's
auth and XSRF, the catalog (search, filters, paging, details, status), and live events. Calls,
per-field errors and policy: test_jupyter_rest_calls.py."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import asyncio
import json
import threading

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only
from jupyter_rest_fixtures import *  # the registry, the server's config, request helpers
from tornado.httpclient import HTTPClientError

from nexus_jupyter import Tool

EVENT_DEADLINE_S = 10.0


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
