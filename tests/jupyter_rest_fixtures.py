"""The Jupyter server extension's tests' setup (test_jupyter_extension.py and
test_jupyter_rest_calls.py take it with ``from jupyter_rest_fixtures import *``): a registry
of known tools under the real policy, handed to a real Jupyter server, and the requests the
tests send it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel
from tornado.httpclient import HTTPClientError

from nexus_jupyter import Registry, tool
from nexus_jupyter.core.policy.policy import Policy

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


async def call(jp_fetch, name, arguments=None, approved=False, headers=None):
    body = json.dumps({"arguments": arguments or {}, "approved": approved})
    return await jp_fetch(
        "nexus", "api", "tools", name, "call", method="POST", body=body, headers=headers or {}
    )


async def expect_error(status, awaitable):
    with pytest.raises(HTTPClientError) as info:
        await awaitable
    assert info.value.code == status, info.value.response.body if info.value.response else ""
    body = info.value.response.body if info.value.response is not None else b""
    return json.loads(body) if body else None
