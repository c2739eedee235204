"""The official MCP Inspector's CLI (npm ``@modelcontextprotocol/inspector``, a client built on
the TypeScript SDK) against a live ``nexus-tools serve --transport http`` serving
``examples/conformance``: a native image tool, a resource, a prompt and a task-capable tool,
each without error."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving import serve_http  # tests/ is on sys.path (rootdir conftest)

TESTS = Path(__file__).resolve().parents[1]
INSPECTOR = TESTS / "inspector/node_modules/@modelcontextprotocol/inspector"
LAUNCHER = INSPECTOR / "clients/launcher/build/index.js"
NODE22 = TESTS / "conformance/node_modules/.bin/node"
FIXTURES = TESTS.parent / "examples" / "conformance"

pytestmark = pytest.mark.skipif(
    not LAUNCHER.exists() or not NODE22.exists(),
    reason="the MCP Inspector or Node 22 is not installed: run `make npm-deps` "
    "(npm ci in tests/inspector and tests/conformance)",
)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    project = tmp_path_factory.mktemp("inspector-project")
    extra = ("--root", str(project), "--dir", str(FIXTURES))
    with serve_http(project, *extra, clean_stop=True) as served:
        yield served.url


def inspect(url: str, home: Path, *args: str) -> Any:
    """``mcp-inspector --cli URL ARGS``: its JSON answer (it exits non-zero on any error)."""
    env = {**os.environ, "HOME": str(home), "PATH": f"{NODE22.parent}:{os.environ['PATH']}"}
    done = subprocess.run(
        [str(NODE22), str(LAUNCHER), "--cli", url, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=home,
    )
    assert done.returncode == 0, f"{args}: rc {done.returncode}\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout)


def test_image_tool_resource_prompt_and_task_tool(url: str, tmp_path: Path) -> None:
    image = inspect(url, tmp_path, "--method", "tools/call", "--tool-name", "test_image_content")
    (block,) = image["content"]
    assert block["type"] == "image" and block["mimeType"] == "image/png" and block["data"]
    assert "structuredContent" not in image and not image.get("isError")

    read = inspect(url, tmp_path, "--method", "resources/read", "--uri", "test://static-text")
    assert read["contents"][0]["text"] == "This is the content of the static text resource."

    got = inspect(url, tmp_path, "--method", "prompts/get", "--prompt-name", "test_simple_prompt")
    assert got["messages"][0]["content"]["text"] == "This is a simple prompt for testing."

    task_tool = inspect(
        url,
        tmp_path,
        "--method",
        "tools/call",
        "--tool-name",
        "slow_compute",
        "--tool-arg",
        "seconds=1",
        "--tool-arg",
        "label=inspected",
    )
    assert task_tool["content"][0]["text"] == "computed inspected in 1 s"

    listing = inspect(url, tmp_path, "--method", "tools/list")
    names = {t["name"] for t in listing["tools"]}
    assert {"test_image_content", "slow_compute", "greet"} <= names
