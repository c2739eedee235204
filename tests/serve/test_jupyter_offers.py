"""The sidebar's resources and prompts on a real Jupyter server (pytest-jupyter) whose
default registry loads a real tool file: ``GET offers``, ``GET resources/read``,
``POST prompts/{name}/render``, their errors, and the live event when a file adds one."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only
from tornado.httpclient import HTTPClientError

NOTES = '''
from typing import Literal
from nexus_jupyter import prompt, resource, tool

@tool
def noop() -> str:
    """Do nothing."""
    return "ok"

@resource("notes://today", mime_type="text/markdown")
def today() -> str:
    """Today's notes."""
    return "# Today\\n- ship it"

@resource("notes://day/{day}")
def day(day: str) -> str:
    """The notes of one day."""
    return f"notes of {day}"

@prompt
def review(code: str, style: Literal["terse", "thorough"] = "terse") -> str:
    """Review a piece of code."""
    return f"Review ({style}):\\n{code}"
'''

EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / "mcp_peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
NODE22 = Path(__file__).resolve().parents[1] / "conformance/node_modules/.bin/node"

LATER = '''
from nexus_jupyter import prompt

@prompt
def summarize(text: str) -> str:
    """Summarize a text."""
    return f"Summarize: {text}"
'''


@pytest.fixture
def jp_server_config(jp_root_dir, request):
    tools = Path(jp_root_dir) / "tools" / "dynamic"
    tools.mkdir(parents=True, exist_ok=True)
    (tools / "notes.py").write_text(NOTES)
    if "mcp_server" in request.node.name:  # the test of an MCP server's offers
        (Path(jp_root_dir) / "nex.yaml").write_text(
            f"mcp:\n  servers:\n    - {{name: everything, command: {NODE22}, "
            f"args: [{EVERYTHING}, stdio]}}\n"
        )
    return {"ServerApp": {"jpserver_extensions": {"nexus_jupyter": True}}}


async def _json(jp_fetch, *parts, **kwargs):
    return json.loads((await jp_fetch("nexus", "api", *parts, **kwargs)).body)


async def _offers_when(jp_fetch, check, deadline: float = 30.0):
    """``GET offers`` once ``check(offers)`` holds (the file loads in the background)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while True:
        offers = await _json(jp_fetch, "offers")
        if check(offers):
            return offers
        assert loop.time() < end, f"offers never matched: {offers}"
        await asyncio.sleep(0.1)  # a file loading in another process: poll, bounded


@on_server_loop
async def test_offers_list_read_and_render(jp_fetch):
    offers = await _offers_when(jp_fetch, lambda o: o["prompts"])
    resources = {r["uri"]: r for r in offers["resources"]}
    assert resources["notes://today"]["mime_type"] == "text/markdown"
    assert resources["notes://today"]["description"] == "Today's notes."
    assert resources["notes://today"]["origin"].startswith("directory:")  # its source
    templates = {t["uri"]: t for t in offers["templates"]}
    assert templates["notes://day/{day}"]["variables"] == ["day"]
    (review,) = offers["prompts"]
    assert review["name"] == "review"
    assert review["arguments"][0] == {"name": "code", "required": True, "description": None}
    assert review["arguments"][1]["required"] is False
    assert review["choices"] == {"style": ["terse", "thorough"]}

    read = await _json(jp_fetch, "resources", "read", params={"uri": "notes://today"})
    assert read["contents"][0]["text"] == "# Today\n- ship it"
    filled = await _json(jp_fetch, "resources", "read", params={"uri": "notes://day/monday"})
    assert filled["contents"][0]["text"] == "notes of monday"

    body = json.dumps({"arguments": {"code": "x = 1", "style": "thorough"}})
    rendered = await _json(jp_fetch, "prompts", "review", "render", method="POST", body=body)
    assert rendered["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Review (thorough):\nx = 1"}}
    ]


async def _error(awaitable):
    with pytest.raises(HTTPClientError) as info:
        await awaitable
    return info.value.code, json.loads(info.value.response.body)


@on_server_loop
async def test_offer_errors_say_what_is_wrong(jp_fetch):
    await _offers_when(jp_fetch, lambda o: o["prompts"])
    code, body = await _error(
        jp_fetch("nexus", "api", "resources", "read", params={"uri": "notes://nope"})
    )
    assert code == 404 and "notes://today" in body["suggestions"]
    code, body = await _error(jp_fetch("nexus", "api", "resources", "read"))
    assert code == 400 and "uri" in body["message"]
    code, body = await _error(
        jp_fetch("nexus", "api", "prompts", "nope", "render", method="POST", body="{}")
    )
    assert code == 404 and body["suggestions"] == ["review"]
    missing = json.dumps({"arguments": {}})
    code, body = await _error(
        jp_fetch("nexus", "api", "prompts", "review", "render", method="POST", body=missing)
    )
    assert code == 400 and "missing code" in body["message"]
    numbers = json.dumps({"arguments": {"code": 1}})
    code, body = await _error(
        jp_fetch("nexus", "api", "prompts", "review", "render", method="POST", body=numbers)
    )
    assert code == 400 and "strings" in body["message"]
    code, _ = await _error(jp_fetch("nexus", "api", "offers", headers={"Authorization": ""}))
    assert code == 403


@on_server_loop
async def test_a_new_prompt_is_announced_on_the_event_stream(jp_fetch, jp_ws_fetch, jp_root_dir):
    await _offers_when(jp_fetch, lambda o: o["prompts"])
    ws = await jp_ws_fetch("nexus", "api", "events")
    try:
        hello = json.loads(await asyncio.wait_for(ws.read_message(), 10))
        assert hello["type"] == "hello"
        (Path(jp_root_dir) / "tools" / "dynamic" / "later.py").write_text(LATER)
        loop = asyncio.get_running_loop()
        end = loop.time() + 30
        while True:
            event = json.loads(await asyncio.wait_for(ws.read_message(), end - loop.time()))
            if event.get("offers"):
                break
        assert event["type"] == "changed" and event["added"] == []
        offers = await _json(jp_fetch, "offers")
        assert {p["name"] for p in offers["prompts"]} == {"review", "summarize"}
    finally:
        ws.close()


@pytest.mark.skipif(
    not EVERYTHING.exists() or not NODE22.exists(),
    reason="server-everything is not installed: run `make npm-deps` (tests/mcp_peers)",
)
@on_server_loop
async def test_an_mcp_servers_resources_and_prompts_read_and_render_through_rest(jp_fetch):
    """Offers of an MCP server that the Jupyter server's nex.yaml names (server-everything,
    a real process): listed with their origin, read and rendered through the server."""
    offers = await _offers_when(
        jp_fetch,
        lambda o: any(p["origin"] == "mcp:everything" for p in o["prompts"]),
        deadline=60,
    )
    prompts = {p["name"]: p for p in offers["prompts"]}
    assert "mcp__everything__simple-prompt" in prompts
    template = "demo://resource/dynamic/text/{resourceId}"
    assert any(t["uri"] == template for t in offers["templates"])
    read = await _json(
        jp_fetch, "resources", "read", params={"uri": "demo://resource/dynamic/text/1"}
    )
    assert read["contents"] and read["contents"][0]["uri"] == "demo://resource/dynamic/text/1"
    rendered = await _json(
        jp_fetch,
        "prompts",
        "mcp__everything__simple-prompt",
        "render",
        method="POST",
        body=json.dumps({"arguments": {}}),
    )
    assert rendered["messages"] and rendered["messages"][0]["role"] == "user"
