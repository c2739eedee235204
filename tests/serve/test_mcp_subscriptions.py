"""``resources/subscribe`` on ``nexus-tools serve`` (a real process, the real SDK client at
2025-11-25): a resource of a tool file announces ``notifications/resources/updated`` when the
file is saved again, an upstream server's (server-everything, a real process) when that
server says so, and an unknown URI is refused."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from serving import serve_http  # tests/ is on sys.path (rootdir conftest)

TESTS = Path(__file__).resolve().parents[1]
EVERYTHING = TESTS / "mcp_peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE22 = TESTS / "conformance/node_modules/.bin/node"
NODE = str(NODE22) if NODE22.exists() else shutil.which("node")

#: the handshake-era methods this file tests (2026-07-28 clients follow via listen)
pytestmark = pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")

NOTES = '''
from nexus_jupyter import resource


@resource("notes://today")
def today() -> str:
    """Today's notes."""
    return "{text}"


@resource("notes://{{day}}/summary")
def summary(day: str) -> str:
    """A day's summary."""
    return "{text} on " + day
'''


class Watcher:
    """The notifications the client got: updated URIs, list changes."""

    def __init__(self) -> None:
        self.updated: asyncio.Queue[str] = asyncio.Queue()
        self.list_changed = asyncio.Event()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.put_nowait(str(message.params.uri))
        elif isinstance(message, types.ResourceListChangedNotification):
            self.list_changed.set()

    async def next_update(self) -> str:
        return await asyncio.wait_for(self.updated.get(), 20)


async def test_a_saved_tool_file_updates_its_subscribed_resources(tmp_path: Path) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "notes.py").write_text(NOTES.format(text="first"))
    extra = ("--root", str(tmp_path), "--dir", str(folder))
    with serve_http(tmp_path, *extra, clean_stop=True) as served:
        watcher = Watcher()
        async with mcp.Client(
            served.url, mode="legacy", message_handler=watcher.on_message
        ) as client:
            caps = client.server_capabilities
            assert caps is not None and caps.resources is not None and caps.resources.subscribe
            with pytest.raises(mcp.MCPError) as unknown:
                await client.subscribe_resource("nope://x")
            assert unknown.value.error.code == -32002
            assert "nope://x" in unknown.value.error.message
            await client.subscribe_resource("notes://today")
            await client.subscribe_resource("notes://monday/summary")  # through a template
            (folder / "notes.py").write_text(NOTES.format(text="second"))
            got = {await watcher.next_update(), await watcher.next_update()}
            assert got == {"notes://today", "notes://monday/summary"}
            read = await client.read_resource("notes://today")
            assert read.contents[0].text == "second"  # type: ignore[union-attr]
            # unsubscribed: the next save tells only the summary's subscriber
            await client.unsubscribe_resource("notes://today")
            (folder / "notes.py").write_text(NOTES.format(text="third"))
            assert await watcher.next_update() == "notes://monday/summary"
            await asyncio.sleep(0.5)  # not a timing assertion: nothing else may have come
            assert watcher.updated.empty()


@pytest.mark.skipif(
    not EVERYTHING.exists() or NODE is None,
    reason="server-everything is not installed: run `make npm-deps` (npm ci in tests/mcp_peers)",
)
async def test_an_upstream_update_reaches_the_subscribed_session(tmp_path: Path) -> None:
    (tmp_path / "nex.yaml").write_text(
        f"mcp:\n  servers:\n    - {{name: everything, command: {NODE}, "
        f"args: [{EVERYTHING}, stdio]}}\n"
    )
    extra = ("--root", str(tmp_path), "--config", str(tmp_path / "nex.yaml"))
    with serve_http(tmp_path, *extra, clean_stop=True) as served:
        watcher = Watcher()
        async with mcp.Client(
            served.url, mode="legacy", message_handler=watcher.on_message
        ) as client:
            uris: list[str] = []
            for _ in range(300):  # the upstream connects in the background
                listing = await client.list_resources(cache_mode="refresh")
                uris = [str(r.uri) for r in listing.resources if str(r.uri).startswith("demo://")]
                if uris:
                    break
                await asyncio.sleep(0.1)
            assert uris
            await client.subscribe_resource(uris[0])
            toggled = await client.call_tool("mcp__everything__toggle-subscriber-updates", {})
            assert not toggled.is_error
            assert await watcher.next_update() == uris[0]  # as nexus lists it
            await client.call_tool("mcp__everything__toggle-subscriber-updates", {})
