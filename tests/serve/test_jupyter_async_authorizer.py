"""A Jupyter authorizer whose ``is_authorized`` is a coroutine (jupyter_server allows it):
the sidebar's caller is who the awaited answer says, not the owner by a truthy coroutine."""

# ruff: noqa: F403, F405 -- tests take the star-imported pytest-jupyter fixtures
from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from jupyter_fixtures import *  # pytest-jupyter's fixtures, for this module only
from jupyter_server.auth.authorizer import Authorizer

from nexus_jupyter import Registry, tool
from nexus_jupyter.core.policy.policy import Policy


@tool(permission="danger_full_access")
def format_disk(device: str) -> str:
    """Format a disk."""
    return f"formatted {device}"


class ReadOnlyAsyncAuthorizer(Authorizer):
    """Everything but writing the server's files, answered by a coroutine."""

    async def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        return not (action == "write" and resource == "contents")


@pytest.fixture
def jp_server_config():
    def factory(root: str) -> Registry:
        reg = Registry(search="keyword", policy=Policy())
        reg.add(format_disk)
        return reg

    config = nexus_server_config(factory)
    config["ServerApp"]["authorizer_class"] = ReadOnlyAsyncAuthorizer
    return config


@on_server_loop
async def test_a_user_an_async_authorizer_denies_contents_writes_is_not_the_owner(jp_fetch):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a coroutine never awaited
        response = await jp_fetch(
            "nexus", "api", "tools", "format_disk", headers={"X-Nexus-Face": "sidebar"}
        )
    reason = json.loads(response.body)["call_policy"]["reason"]
    assert "grant: {rest:" not in reason
    assert "person running this server" in reason
