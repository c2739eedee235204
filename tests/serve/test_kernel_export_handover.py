"""An exported tool is handed over from a kernel to the server's tools folder without a gap:
when a kernel's listing drops a tool whose file an export wrote into a folder the server
watches, the server loads that file before it lets go of the kernel's tool, whether or not
its watcher has seen the file yet.

Real parts: the kernel's MCP endpoint (:class:`KernelEndpoint`, as a kernel runs it) serving
a notebook tool, the server's :class:`KernelSources` following its announcement, and the
server's tools folder as a :class:`DirectorySource` whose watcher is told to wait a minute
before it reports a change (so only the hand-over can bring the file in time)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from waiting import until

from nexus_jupyter import Registry, tool
from nexus_jupyter.serve.jupyter_kernels import ANNOUNCE_PREFIX, KernelSources
from nexus_jupyter.serve.kernel_endpoint import KernelEndpoint
from nexus_jupyter.sources.directory import DirectorySource

NOTEBOOK = "notebooks/demo.ipynb"
HELLO_FILE = '''from nexus_jupyter import tool


@tool
def hello(name: str) -> str:
    """Greet someone (from the file)."""
    return f"Hello from the file, {name}!"
'''


@tool
def hello(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


class _Sessions:
    """The one session of the test's kernel (what Jupyter's session manager would list)."""

    def __init__(self, kernel_id: str) -> None:
        self.kernel_id = kernel_id

    async def list_sessions(self) -> list[dict[str, Any]]:
        return [{"kernel": {"id": self.kernel_id}, "path": NOTEBOOK}]


async def test_a_tool_dropped_by_its_kernel_comes_from_the_exported_file_at_once(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "root" / "tools" / "dynamic"
    folder.mkdir(parents=True)
    kernel = Registry(search="keyword")
    kernel.add(hello)
    endpoint = KernelEndpoint(kernel, "s3cret")
    kernel_id = str(uuid.uuid4())
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    body = {"kernel_id": kernel_id, "url": endpoint.url, "secret": "s3cret", "pid": os.getpid()}
    (runtime / f"{ANNOUNCE_PREFIX}{kernel_id}.json").write_text(json.dumps(body))

    server = Registry(search="keyword")
    # a watcher that reports a change only after a minute of quiet: it will not bring the file
    server.add_source(DirectorySource(folder, step_ms=60_000, debounce_ms=120_000))
    removed: list[str] = []
    server.subscribe(lambda change: removed.extend(change.removed))
    kernels = KernelSources(server, runtime, _Sessions(kernel_id))
    kernels.start()
    try:
        await until(lambda: "hello" in server.names(), "the kernel's hello")
        assert server.get("hello").spec.source == f"kernel:{NOTEBOOK}"

        # What `%tool export hello` does in the kernel: write the file, then drop the tool.
        (folder / "hello.py").write_text(HELLO_FILE)
        kernel.remove("hello")

        def from_file() -> bool:
            return "hello" in server.names() and server.get("hello").spec.source_kind == (
                "directory"
            )

        await until(from_file, "hello to come from the file")
        result = await server.call("hello", {"name": "Ada"})
        assert result.structured == "Hello from the file, Ada!"
        assert "hello" not in removed  # never missing from the server's registry
    finally:
        await kernels.stop()
        server.close()
        endpoint.stop()
        kernel.close()
