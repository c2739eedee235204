"""The events socket names the tools called since it last looked, whoever called them (the
sidebar's form, REST, an MCP client of the same server), so an open tool's call counts follow."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only

from nexus_jupyter import Registry, tool


@tool
def double(n: int) -> int:
    """Double a number."""
    return 2 * n


@tool
def halve(n: int) -> float:
    """Halve a number."""
    return n / 2


@pytest.fixture
def given_registry() -> Iterator[Registry]:
    reg = Registry(search="keyword")
    reg.add(double)
    reg.add(halve)
    yield reg
    reg.close()


@pytest.fixture
def jp_server_config(given_registry: Registry) -> dict[str, Any]:
    return nexus_server_config(lambda root: given_registry)


@on_server_loop
async def test_a_call_from_outside_the_sidebar_is_announced(
    jp_ws_fetch: Any, jp_fetch: Any, given_registry: Registry
) -> None:
    given_registry.call_sync("halve", {"n": 4})  # before anyone listens: not announced
    ws = await jp_ws_fetch("nexus", "api", "events")
    try:
        await next_event(ws, "hello")
        # A call made on another thread, as an MCP client's or the CLI's call of this registry
        # would be: nothing but the hub's look at the counts can tell the browser.
        caller = threading.Thread(target=given_registry.call_sync, args=("double", {"n": 2}))
        caller.start()
        event = await next_event(ws, "calls")
        caller.join(5)
        assert event["tools"] == ["double"]
        # A refused call counts too (the calls line shows refusals).
        status, _ = await rest_call(jp_fetch, "double", {"n": "two"})
        assert status == 422
        event = await next_event(ws, "calls")
        assert event["tools"] == ["double"]
        stats = json.loads((await jp_fetch("nexus", "api", "tools", "double")).body)["stats"]
        assert (stats["calls"], stats["refused"]) == (1, 1)
    finally:
        ws.close()
