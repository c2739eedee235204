"""Finding: eight cancelled calls of a sync tool that sleeps kept their threads; after that
``read``, ``ls``, ``tool_search`` and every sync tool timed out, over MCP and REST, until
``kill -9``.

Now each source has its own bounded worker pool and a call given up on frees its slot: after
8 cancelled and 8 timed-out sleeping calls, the built-ins (and the sleeping tool itself)
still answer, over a real ``nexus-tools serve`` and a real Jupyter server.
"""

# ruff: noqa: F403, F405 -- the pytest-jupyter fixtures come in with a star import
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from jupyter_fixtures import *
from serving import call_text, mcp_client, serve_http

from nexus_jupyter import Registry

pytestmark = pytest.mark.e2e

SLEEPERS = '''import time

from nexus_jupyter import tool


@tool
def sleeper(seconds: float = 3600) -> str:
    """Sleep, ignoring every cancel."""
    time.sleep(seconds)
    return "woke"


@tool(timeout=0.3)
def slow_sleeper(seconds: float = 3600) -> str:
    """Sleep past its own timeout."""
    time.sleep(seconds)
    return "woke"
'''
STUCK = 8
ANSWER_S = 5.0


def plant(root: Path) -> None:
    folder = root / "tools" / "dynamic"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sleepers.py").write_text(SLEEPERS)
    (root / "notes.txt").write_text("hello\n")


async def test_stuck_calls_do_not_starve_the_server_over_mcp(tmp_path: Path) -> None:
    plant(tmp_path)
    with serve_http(tmp_path) as server:
        async with mcp_client(server.url) as client:
            await call_text(client, "tool_search", {"query": "warm up"})  # loads the index
            calls = [asyncio.ensure_future(client.call_tool("sleeper", {})) for _ in range(STUCK)]
            await asyncio.sleep(0.5)
            for call in calls:
                call.cancel()  # the SDK sends notifications/cancelled
            await asyncio.gather(*calls, return_exceptions=True)
            timed_out = await asyncio.gather(
                *(call_text(client, "slow_sleeper", {}) for _ in range(STUCK))
            )
            assert all(is_error and "timed out" in text for is_error, text in timed_out)
            answered, slowest = 0, 0.0
            for name, arguments in [
                ("read", {"path": "notes.txt"}),
                ("ls", {}),
                ("tool_search", {"query": "sleep"}),
                ("grep", {"pattern": "hello"}),
                ("sleeper", {"seconds": 0}),  # the stuck tool's own source still answers
            ]:
                started = time.perf_counter()
                is_error, text = await asyncio.wait_for(
                    call_text(client, name, arguments), ANSWER_S
                )
                took = time.perf_counter() - started
                slowest = max(slowest, took)
                assert not is_error, (name, text)
                answered += 1
    print(
        f"\nMCP after {STUCK} cancelled + {STUCK} timed-out calls: answered={answered}/5 "
        f"slowest={slowest * 1000:.0f} ms"
    )


@pytest.fixture
def jp_server_config(jp_root_dir: Path) -> dict[str, object]:
    plant(Path(jp_root_dir))
    return nexus_server_config(lambda root: Registry.default(root=root, mcp=False))


@on_server_loop
async def test_stuck_calls_do_not_starve_the_server_over_rest(jp_fetch: object) -> None:
    answers = await asyncio.gather(
        *(rest_call(jp_fetch, "slow_sleeper", {}) for _ in range(STUCK * 2))
    )
    assert all(json.loads(text)["error_type"] == "TimeoutError" for _, text in answers), answers
    answered = 0
    for name, arguments in [
        ("read", {"path": "notes.txt"}),
        ("ls", {}),
        ("tool_search", {"query": "sleep"}),
        ("slow_sleeper", {"seconds": 0}),
    ]:
        status, text = await asyncio.wait_for(rest_call(jp_fetch, name, arguments), ANSWER_S)
        assert status == 200 and json.loads(text)["is_error"] is False, (name, text)
        answered += 1
    print(f"\nREST after {STUCK * 2} timed-out calls: answered={answered}/4")
