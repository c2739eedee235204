"""pytest-jupyter's fixtures for modules that start a real Jupyter server: a module takes
them with ``from jupyter_fixtures import *`` (imported rather than registered as a plugin, so
its autouse fixtures serve those modules only; see tests/serve/test_jupyter_extension.py)."""

# ruff: noqa: F401
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from jupyter_core.utils import ensure_event_loop
from pytest_jupyter.jupyter_core import (
    echo_kernel_spec,
    jp_asyncio_loop,
    jp_config_dir,
    jp_data_dir,
    jp_env_config_path,
    jp_env_jupyter_path,
    jp_environ,
    jp_home_dir,
    jp_kernel_dir,
    jp_runtime_dir,
    jp_system_config_path,
    jp_system_jupyter_path,
)
from pytest_jupyter.jupyter_server import (
    jp_argv,
    jp_auth_header,
    jp_base_url,
    jp_configurable_serverapp,
    jp_extension_environ,
    jp_fetch,
    jp_http_port,
    jp_logging_stream,
    jp_nbconvert_templates,
    jp_root_dir,
    jp_server_cleanup,
    jp_serverapp,
    jp_template_dir,
    jp_web_app,
    jp_ws_fetch,
)
from pytest_jupyter.pytest_tornasync import (
    http_server,
    http_server_client,
    http_server_port,
    io_loop,
)


def nexus_server_config(factory: Callable[[str], Any]) -> dict[str, Any]:
    """A ``jp_server_config`` that loads the extension with the registry ``factory(root)``
    makes (a callable: config values are deep-copied, a registry holds locks and threads)."""
    return {
        "ServerApp": {
            "jpserver_extensions": {"nexus_jupyter": True},
            "tornado_settings": {"nexus_registry_factory": factory},
        }
    }


def on_server_loop(test: Callable[..., Any]) -> Callable[..., Any]:
    """Run an async test on pytest-jupyter's loop, where the server and its client live."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> Any:
        return ensure_event_loop(prefer_selector_loop=True).run_until_complete(
            test(*args, **kwargs)
        )

    return run


async def rest_call(fetch: Any, name: str, arguments: dict[str, Any]) -> tuple[int, str]:
    """``(HTTP status, body text)`` of ``POST /nexus/api/tools/<name>/call``."""
    from tornado.httpclient import HTTPClientError

    body = json.dumps({"arguments": arguments})
    try:
        response = await fetch("nexus", "api", "tools", name, "call", method="POST", body=body)
    except HTTPClientError as exc:
        text = exc.response.body.decode() if exc.response is not None else ""
        return exc.code, text
    return response.code, response.body.decode()


async def next_event(
    ws: Any, kind: str = "changed", deadline: float = 10.0, where: Callable[[Any], bool] = bool
) -> dict[str, Any]:
    """The next message of ``kind`` on the events socket ``ws`` that satisfies ``where``, or
    fail at the deadline."""
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while True:
        remaining = end - loop.time()
        if remaining <= 0:
            raise AssertionError(f"no {kind!r} event within {deadline} s")
        message = await asyncio.wait_for(ws.read_message(), remaining)
        assert message is not None, "the events socket closed"
        event: dict[str, Any] = json.loads(message)
        if event["type"] == kind and where(event):
            return event
