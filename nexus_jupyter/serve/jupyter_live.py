"""Wiring of the live parts of the server extension: kernels as sources of the server's
registry (:mod:`.jupyter_kernels`) and ``/nexus/mcp`` (:mod:`.jupyter_mcp`)."""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["LiveKernels", "start_live_kernels"]

log = logging.getLogger(__name__)


class LiveKernels:
    """What :func:`start_live_kernels` started, to stop it when the server stops."""

    def __init__(self, kernels: Any, endpoint: Any) -> None:
        self.kernels, self.endpoint = kernels, endpoint

    async def stop(self) -> None:
        if self.kernels is not None:
            await self.kernels.stop()
        if self.endpoint is not None:
            await self.endpoint.stop()


def start_live_kernels(serverapp: Any, registry: Any) -> LiveKernels:
    """Follow the kernels' announcements and serve ``/nexus/mcp``; both start on the
    server's loop once it runs."""
    from jupyter_server.utils import url_path_join
    from tornado.ioloop import IOLoop

    from .jupyter_kernels import CONTENTS_ACTIONS, KERNEL_ACTIONS, KernelSources
    from .jupyter_mcp import McpEndpoint, McpHandler

    web_app = serverapp.web_app
    endpoint = McpEndpoint(registry)
    web_app.settings["nexus_mcp"] = endpoint
    route = url_path_join(web_app.settings["base_url"], "nexus", "mcp")
    web_app.add_handlers(".*$", [(route, McpHandler)])
    runtime_dir = getattr(serverapp.kernel_manager, "connection_dir", None) or serverapp.runtime_dir
    kernels = KernelSources(
        registry,
        runtime_dir,
        serverapp.session_manager,
        serverapp.kernel_manager,
        getattr(serverapp, "event_logger", None),  # where the listeners below are added
    )
    for schema_id, listener, what in (
        (KERNEL_ACTIONS, kernels.on_kernel_action, "kernel restarts"),
        (CONTENTS_ACTIONS, kernels.on_contents_action, "renamed notebooks"),
    ):
        try:
            serverapp.event_logger.add_listener(schema_id=schema_id, listener=listener)
        except Exception:  # an old jupyter_server without these events: announcements only
            log.exception("nexus_jupyter: cannot follow %s", what)
    loop = IOLoop.current()
    loop.add_callback(endpoint.start)
    loop.add_callback(kernels.start)
    return LiveKernels(kernels, endpoint)
