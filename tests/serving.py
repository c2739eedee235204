"""A real ``nexus-tools serve --transport http`` process for tests (security, MCP server,
features, aggregation, conformance), and an MCP client session against it (``tests/`` is on
sys.path through the rootdir conftest)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types

START_DEADLINE_S = 60.0
#: An earlier-protocol ``initialize`` request (opens a stateful session).
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def stdio_params(project: Path, *args: str) -> Any:
    """The ``StdioServerParameters`` of ``python -m nexus_jupyter.serve.cli_serve *args`` in
    ``project`` (for ``mcp.Client``), with this environment (the SDK passes on only a few
    variables: the code under test would not be found)."""
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        cwd=str(project),
        args=["-m", "nexus_jupyter.serve.cli_serve", *args],
        env=dict(os.environ),
    )


@dataclass
class ServeProcess:
    proc: subprocess.Popen[str]
    url: str
    output: list[str] = field(default_factory=list)  # stdout and stderr, as they came


@contextmanager
def serve_http(
    project: Path, *extra: str, env: dict[str, str] | None = None, clean_stop: bool = False
) -> Iterator[ServeProcess]:
    """``python -m nexus_jupyter.serve.cli_serve --transport http --port 0`` in ``project``.
    With ``clean_stop``, it is ended with SIGTERM and must exit with code 0 (it was still
    alive, and shut down cleanly); otherwise it is killed."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nexus_jupyter.serve.cli_serve",
            "--transport",
            "http",
            "--port",
            "0",
            *extra,
        ],
        cwd=project,
        stdout=subprocess.PIPE,  # what tools print, with the log on stderr: one stream
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    lines: list[str] = []
    url = None
    timer = threading.Timer(START_DEADLINE_S, proc.kill)
    timer.start()
    for line in proc.stdout:
        lines.append(line)
        if "Serving" in line:
            url = line.rsplit(" ", 1)[1].strip()
            break
    timer.cancel()
    assert url, "the server did not start:\n" + "".join(lines)
    stream = proc.stdout

    def drain() -> None:
        for rest in stream:
            lines.append(rest)

    threading.Thread(target=drain, daemon=True).start()
    served = ServeProcess(proc, url, lines)
    try:
        yield served
    finally:
        if clean_stop:
            proc.terminate()
            assert proc.wait(10) == 0, "".join(lines[-20:])
        elif proc.poll() is None:
            proc.kill()
        proc.wait(10)


@contextmanager
def serve_tool_file(project: Path, name: str, source: str) -> Iterator[str]:
    """The URL of :func:`serve_http` serving ``project/tools``, which holds one tool file
    ``name`` with ``source``."""
    folder = project / "tools"
    folder.mkdir()
    (folder / name).write_text(source)
    with serve_http(project, "--root", str(project), "--dir", str(folder)) as served:
        yield served.url


@asynccontextmanager
async def mcp_client(url: str) -> AsyncIterator[mcp.Client]:
    async with mcp.Client(url, mode="legacy") as client:
        yield client


def result_text(result: types.CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def call_text(client: mcp.Client, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """``(is_error, text)`` of one MCP call."""
    result = await client.call_tool(name, arguments)
    return bool(result.is_error), result_text(result)
