"""A kernel that announced itself before its Jupyter server's kernel manager lists it: Jupyter
emits the kernel's "start" event from inside ``start_kernel``, before ``MultiKernelManager``
adds the kernel, so the start event on the server's own event logger links the announcement
without asking the kernel manager; an announcement of a kernel nobody here started stays
alone. A real Jupyter server's kernel manager, session manager and event logger, and a real
kernel endpoint (the MCP server a kernel runs) serving a tool."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_events import EventLogger
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only

from nexus_jupyter import Registry, tool
from nexus_jupyter.serve.jupyter_kernels import ANNOUNCE_PREFIX, KERNEL_ACTIONS, KernelSources
from nexus_jupyter.serve.kernel_endpoint import KernelEndpoint


@tool
def whoami() -> str:
    """Which kernel answers."""
    return "the early kernel"


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {}  # a plain server: its parts, not the extension, are what the test drives


@pytest.fixture
def announced(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A kernel id no kernel manager knows, and its announcement in a runtime dir, pointing
    at a real kernel endpoint (this process stands in for the kernel's pid)."""
    kernel = Registry(search="keyword")
    kernel.add(whoami)
    endpoint = KernelEndpoint(kernel, "s3cret")
    kernel_id = str(uuid.uuid4())
    runtime = tmp_path / "announcements"
    runtime.mkdir()
    path = runtime / f"{ANNOUNCE_PREFIX}{kernel_id}.json"
    body = {"kernel_id": kernel_id, "url": endpoint.url, "secret": "s3cret", "pid": os.getpid()}
    path.write_text(json.dumps(body))
    yield kernel_id, path
    endpoint.stop()
    kernel.close()


def _start_event(kernel_id: str) -> dict[str, Any]:
    return {
        "kernel_id": kernel_id,
        "kernel_name": "python3",
        "action": "start",
        "status": "success",
        "msg": f"Kernel {kernel_id} was started.",
    }


async def _listed(registry: Registry, name: str, deadline: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while name not in registry.names():
        assert loop.time() < end, f"{name} not listed within {deadline} s: {registry.names()}"
        await asyncio.sleep(0.05)


@on_server_loop
async def test_a_start_event_of_this_server_links_an_earlier_announcement(
    jp_serverapp: Any, announced: tuple[str, Path]
) -> None:
    kernel_id, path = announced
    app = jp_serverapp
    registry = Registry(search="keyword")
    kernels = KernelSources(
        registry, path.parent, app.session_manager, app.kernel_manager, app.event_logger
    )
    try:
        assert kernel_id not in app.kernel_manager  # not (yet) a kernel of this server
        await kernels._on_file(path)  # the announcement's file event: left alone
        assert kernels.sources == {}
        # the same event from another server's event logger says nothing about this server
        await kernels.on_kernel_action(EventLogger(), KERNEL_ACTIONS, _start_event(kernel_id))
        assert kernels.sources == {}

        await kernels.on_kernel_action(app.event_logger, KERNEL_ACTIONS, _start_event(kernel_id))
        assert list(kernels.sources) == [kernel_id]
        await _listed(registry, "whoami")  # the kernel's tools, from its endpoint
        assert (await registry.call("whoami", {})).structured == "the early kernel"
        await kernels._on_file(path)  # a later file event keeps it: the kernel is ours
        assert list(kernels.sources) == [kernel_id]

        shutdown = {**_start_event(kernel_id), "action": "shutdown"}
        await kernels.on_kernel_action(app.event_logger, KERNEL_ACTIONS, shutdown)
        assert kernels.sources == {} and "whoami" not in registry.names()
        await kernels._on_file(path)  # shut down: no longer this server's kernel
        assert kernels.sources == {}
    finally:
        await kernels.stop()
        registry.close()


async def _named(kernels: KernelSources, kernel_id: str, name: str, deadline: float) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while (source := kernels.sources.get(kernel_id)) is None or source.name != name:
        seen = source.name if source is not None else None
        assert loop.time() < end, f"not named {name} within {deadline} s: {seen}"
        await asyncio.sleep(0.05)


@on_server_loop
async def test_a_kernel_linked_before_its_session_is_named_after_its_notebook_once_it_has_one(
    jp_serverapp: Any, tmp_path: Path
) -> None:
    """Jupyter saves a notebook's session only after its kernel started: a kernel linked by
    its start event is ``kernel:<id>`` at first, and takes its notebook's name as soon as the
    session manager holds that session."""
    app = jp_serverapp
    kernel_id = await app.kernel_manager.start_kernel(kernel_name="python3")
    served = Registry(search="keyword")
    served.add(whoami)
    endpoint = KernelEndpoint(served, "s3cret")
    runtime = tmp_path / "announcements"
    runtime.mkdir()
    path = runtime / f"{ANNOUNCE_PREFIX}{kernel_id}.json"
    body = {"kernel_id": kernel_id, "url": endpoint.url, "secret": "s3cret", "pid": os.getpid()}
    path.write_text(json.dumps(body))
    registry = Registry(search="keyword")
    kernels = KernelSources(
        registry, runtime, app.session_manager, app.kernel_manager, app.event_logger
    )
    try:
        await kernels.on_kernel_action(app.event_logger, KERNEL_ACTIONS, _start_event(kernel_id))
        assert kernels.sources[kernel_id].name == f"kernel:{kernel_id}"  # no session yet
        await _listed(registry, "whoami")

        await app.session_manager.save_session(
            "session-1",
            path="work/early.ipynb",
            name="early.ipynb",
            type="notebook",
            kernel_id=kernel_id,
        )
        await _named(kernels, kernel_id, "kernel:work/early.ipynb", deadline=10.0)
        await _listed(registry, "whoami")
        assert registry.get("whoami").spec.source == "kernel:work/early.ipynb"
        kernel_sources = [s.name for s in registry.sources() if s.kind == "kernel"]
        assert kernel_sources == ["kernel:work/early.ipynb"]  # the early name is gone
    finally:
        await kernels.stop()
        registry.close()
        endpoint.stop()
        served.close()
        await app.kernel_manager.shutdown_kernel(kernel_id, now=True)
