"""What a live kernel reported of a tool leaves the Jupyter server with the tool: once the
kernel's listing drops a tool, the server counts none of the notebook's calls of it, and
keeps no test status for it. Real parts: the kernel's MCP endpoint (:class:`KernelEndpoint`,
as a kernel runs it, with the ``_meta`` a kernel's listing carries) and the server's
:class:`KernelSources` following its announcement."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from waiting import until

from nexus_jupyter import Registry, tool
from nexus_jupyter.core.tools.kernel_listing import CALLS_META_KEY, TESTS_META_KEY
from nexus_jupyter.serve.jupyter_kernels import ANNOUNCE_PREFIX, KernelSources
from nexus_jupyter.serve.kernel_endpoint import KernelEndpoint

NOTEBOOK = "notebooks/counts.ipynb"


@tool
def kept(x: int) -> int:
    """Stays in the notebook."""
    return x


@tool
def dropped(x: int) -> int:
    """Leaves the notebook (its cell is deleted, or it is exported)."""
    return x


class _Sessions:
    def __init__(self, kernel_id: str) -> None:
        self.kernel_id = kernel_id

    async def list_sessions(self) -> list[dict[str, Any]]:
        return [{"kernel": {"id": self.kernel_id}, "path": NOTEBOOK}]


def _reported(name: str) -> dict[str, Any]:
    """What a kernel's listing says of a tool the notebook called twice and tests."""
    figures = {"calls": 2, "errors": 0, "refused": 1}
    status = {"state": "passed", "summary": "1 passed"}
    return {CALLS_META_KEY: figures, TESTS_META_KEY: {"status": status, "cases": []}}


async def test_a_tool_that_leaves_the_kernels_listing_leaves_its_counts(tmp_path: Path) -> None:
    kernel = Registry(search="keyword")
    kernel.add(kept)
    kernel.add(dropped)
    endpoint = KernelEndpoint(kernel, "s3cret", tool_meta=_reported)
    kernel_id = str(uuid.uuid4())
    body = {"kernel_id": kernel_id, "url": endpoint.url, "secret": "s3cret", "pid": os.getpid()}
    (tmp_path / f"{ANNOUNCE_PREFIX}{kernel_id}.json").write_text(json.dumps(body))
    server = Registry(search="keyword")
    kernels = KernelSources(server, tmp_path, _Sessions(kernel_id))
    kernels.start()
    try:
        await until(lambda: {"kept", "dropped"} <= set(server.names()), "the kernel's tools")
        source = server.source(f"kernel:{NOTEBOOK}")
        assert source.call_counts() == {"kept": (2, 1), "dropped": (2, 1)}
        assert set(source.tests_digest()) == {"kept", "dropped"}

        kernel.remove("dropped")  # the kernel relists without it
        await until(lambda: "dropped" not in server.names(), "dropped to leave the server")
        assert source.call_counts() == {"kept": (2, 1)}  # what the events socket reports
        assert set(source.tests_digest()) == {"kept"}
    finally:
        await kernels.stop()
        server.close()
        endpoint.stop()
        kernel.close()
