"""Live kernel tools: a real Jupyter server, real kernels started through its REST API, the
tools their cells define reached over REST and over ``/nexus/mcp``."""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from live_kernels import TOKEN, JupyterServer, NotebookKernel, jupyter_server

pytestmark = pytest.mark.timeout(300)

LOAD = "%load_ext nexus_jupyter\nlimit = 7"
GET_LIMIT = '''from nexus_jupyter import tool

@tool
def get_limit() -> int:
    """The notebook's current limit."""
    return limit
'''
GET_LIMIT_TWICE = GET_LIMIT.replace("return limit", "return 2 * limit").replace(
    "current limit", "limit, doubled"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    with jupyter_server(tmp_path_factory.mktemp("jupyter")) as srv:
        yield srv


def _linked(server: JupyterServer, notebook: str) -> bool:
    status, body = server.request("GET", "nexus/api/status")
    return status == 200 and any(s["name"] == f"kernel:{notebook}" for s in body["sources"])


def _open(server: JupyterServer, notebook: str) -> NotebookKernel:
    kernel = NotebookKernel(server, notebook)
    kernel.run(LOAD, "load")
    server.wait_for(lambda: _linked(server, notebook), what=f"kernel:{notebook} to link")
    return kernel


def _row(server: JupyterServer, source: str, name: str) -> dict[str, Any] | None:
    return next((r for r in server.tools(source) if r["name"] == name), None)


@pytest.mark.timing  # a latency target: runs alone, after the parallel phase
def test_cell_tool_is_live_in_the_server(server: JupyterServer) -> None:
    kernel = _open(server, "live.ipynb")
    try:
        kernel.run(GET_LIMIT, "define")
        start = time.monotonic()
        row = server.wait_for(lambda: _row(server, "kernel:live.ipynb", "get_limit"), 5)
        listed_after = time.monotonic() - start
        assert listed_after < 1.0, f"listed {listed_after:.2f} s after the cell ran"
        assert row["origin"] == "cell:define"
        assert row["notebook"] == "live.ipynb"
        assert row["source_kind"] == "kernel"

        status, body = server.call("get_limit", {})
        assert status == 200, body
        assert body["structured"] == 7
        kernel.run("limit = 11", "other")  # a global changed by another cell
        assert server.call("get_limit", {})[1]["structured"] == 11

        old_version = row["version"]
        kernel.run(GET_LIMIT_TWICE, "define")
        start = time.monotonic()
        server.wait_for(
            lambda: (
                (_row(server, "kernel:live.ipynb", "get_limit") or {}).get("version")
                not in (None, old_version)
            ),
            5,
        )
        updated_after = time.monotonic() - start
        assert updated_after < 1.0, f"updated {updated_after:.2f} s after the re-run"
        assert server.call("get_limit", {})[1]["structured"] == 22

        kernel.run("del get_limit", "delete")
        server.wait_for(lambda: _row(server, "kernel:live.ipynb", "get_limit") is None, 5)
        kernel.run(GET_LIMIT, "define")
        server.wait_for(lambda: _row(server, "kernel:live.ipynb", "get_limit"), 5)

        kernel.restart()
        server.wait_for(lambda: not server.tools("kernel:live.ipynb"), 10, "tools to leave")
        assert not _linked(server, "live.ipynb")
        status, body = server.call("get_limit", {})
        assert status == 404, body
    finally:
        kernel.close()


def test_a_renamed_notebook_renames_its_kernel_source(server: JupyterServer) -> None:
    """Renaming a notebook (or its folder) while its kernel runs, as JupyterLab does it
    (the file through the contents API, then the session): the kernel's tools follow the
    new path, so the sidebar keeps them in the notebook's group and "Go to cell" opens it."""
    (server.root / "drafts").mkdir()
    (server.root / "drafts" / "Untitled.ipynb").write_text("{}")
    kernel = _open(server, "drafts/Untitled.ipynb")
    try:
        kernel.run(GET_LIMIT.replace("get_limit", "draft_limit"), "define")
        server.wait_for(lambda: _row(server, "kernel:drafts/Untitled.ipynb", "draft_limit"), 15)
        before = "drafts/Untitled.ipynb"
        for old, new, notebook in (
            ("drafts/Untitled.ipynb", "drafts/analysis.ipynb", "drafts/analysis.ipynb"),
            ("drafts", "final", "final/analysis.ipynb"),  # the folder that holds it
        ):
            status, body = server.request("PATCH", f"api/contents/{old}", {"path": new})
            assert status == 200, body
            status, body = server.request(
                "PATCH", f"api/sessions/{kernel.session_id}", {"path": notebook}
            )
            assert status == 200, body
            row = server.wait_for(
                lambda n=notebook: _row(server, f"kernel:{n}", "draft_limit"),
                10,
                f"the tool to follow the notebook to {notebook}",
            )
            assert row["notebook"] == notebook and row["origin"] == "cell:define"
            assert f"kernel:{before}" not in _kernel_sources(server)
            before = notebook
        assert server.call("draft_limit", {})[1]["structured"] == 7
    finally:
        kernel.close()


def _kernel_sources(server: JupyterServer) -> list[str]:
    status, body = server.request("GET", "nexus/api/status")
    assert status == 200, body
    return [s["name"] for s in body["sources"] if s["name"].startswith("kernel:")]


SQLITE = '''import sqlite3, threading
from nexus_jupyter import tool

conn = sqlite3.connect(":memory:")  # made on the kernel's main thread: only usable there
conn.execute("create table t (n int)")
conn.executemany("insert into t values (?)", [(1,), (2,), (3,)])

@tool
def row_total() -> int:
    """Sum of the rows, through the connection another cell opened."""
    return conn.execute("select sum(n) from t").fetchone()[0]

@tool(threadsafe=True)
def where_am_i() -> str:
    """The thread this call runs on."""
    return threading.current_thread().name
'''


def test_sqlite_tool_runs_on_the_kernel_main_thread(server: JupyterServer) -> None:
    kernel = _open(server, "db.ipynb")
    try:
        kernel.run(SQLITE, "db")
        server.wait_for(lambda: _row(server, "kernel:db.ipynb", "where_am_i"), 15)
        status, body = server.call("row_total", {})
        assert status == 200, body
        assert body["structured"] == 6, body
        # a thread-safe tool may run on a worker
        assert server.call("where_am_i", {})[1]["structured"] != "MainThread"
        # In the kernel: the form submits the call to the registry's loop and returns; a
        # blocking call_sync with a deadline, on the main thread, runs right there.
        kernel.run(
            "import asyncio, nexus_jupyter\n"
            "r = nexus_jupyter.registry()\n"
            "fut = r.loop.submit(r.call('row_total', {}, timeout=10))\n",
            "form",
        )
        kernel.run("res = await asyncio.wait_for(asyncio.wrap_future(fut), 10)", "await")
        kernel.run("assert res.value == 6, res", "check")
        kernel.run("assert r.call_sync('row_total', {}, timeout=5).value == 6", "sync")
        result = asyncio.run(_mcp_call(server, "row_total", {}))
        assert result == (False, "6")
    finally:
        kernel.close()


async def _mcp_client_call(
    server: JupyterServer, token: str | None, name: str, arguments: dict[str, Any]
) -> tuple[list[str], tuple[bool, str]]:
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"token {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(server.url + "nexus/mcp", http_client=http)
        async with mcp.Client(transport, mode="legacy") as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            result = await client.call_tool(name, arguments)
            text = " ".join(getattr(b, "text", "") for b in result.content)
            return listed, (bool(result.is_error), text)


async def _mcp_call(server: JupyterServer, name: str, arguments: dict[str, Any]) -> Any:
    return (await _mcp_client_call(server, TOKEN, name, arguments))[1]


def test_agents_reach_kernel_tools_on_nexus_mcp(server: JupyterServer) -> None:
    kernel = _open(server, "agent.ipynb")
    try:
        kernel.run(GET_LIMIT.replace("get_limit", "agent_limit"), "define")
        server.wait_for(lambda: _row(server, "kernel:agent.ipynb", "agent_limit"), 15)
        listed, (is_error, text) = asyncio.run(_mcp_client_call(server, TOKEN, "agent_limit", {}))
        assert "agent_limit" in listed and "read" in listed  # kernel tools and the server's own
        assert (is_error, text) == (False, "7")
        assert asyncio.run(_list_changed_reaches_agent(server, kernel)) == "agent_more"
        for token in (None, "wrong-token"):
            headers = {"Authorization": f"token {token}"} if token else {}
            status = _post_status(server.url + "nexus/mcp", headers)
            assert status in (401, 403), status
    finally:
        kernel.close()


async def _list_changed_reaches_agent(server: JupyterServer, kernel: NotebookKernel) -> str:
    """Connected to /nexus/mcp, an agent hears of a tool a cell defines and can call it."""
    import httpx2
    import mcp
    import mcp_types as types
    from mcp.client.streamable_http import streamable_http_client

    changed = asyncio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(getattr(message, "root", message), types.ToolListChangedNotification):
            changed.set()

    headers = {"Authorization": f"token {TOKEN}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(server.url + "nexus/mcp", http_client=http)
        async with mcp.Client(transport, mode="legacy", message_handler=on_message) as client:
            await client.list_tools()
            code = GET_LIMIT.replace("get_limit", "agent_more")
            await asyncio.to_thread(kernel.run, code, "more")
            await asyncio.wait_for(changed.wait(), 10)
            names = [t.name for t in (await client.list_tools()).tools]
            return "agent_more" if "agent_more" in names else f"not listed: {names}"


def _post_status(url: str, headers: dict[str, str]) -> int:

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers=headers)
    req.add_header("Content-Type", "application/json")
    req.add_header("Accept", "application/json, text/event-stream")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_announcement_is_private_and_goes_with_the_kernel(server: JupyterServer) -> None:
    kernel = _open(server, "private.ipynb")
    announcement = server.runtime / f"nexus-kernel-{kernel.kernel_id}.json"
    try:
        assert announcement.stat().st_mode & 0o077 == 0
        url = json.loads(announcement.read_text())["url"]
        assert _post_status(url, {}) == 401  # the kernel's endpoint wants its secret
    finally:
        kernel.close()
    server.wait_for(lambda: not Path(announcement).exists(), 15, "the announcement to go")
    server.wait_for(lambda: not _linked(server, "private.ipynb"), 10, "the source to go")


def test_serve_aggregates_a_jupyter_server(server: JupyterServer, tmp_path: Path) -> None:
    """``nexus-tools serve --jupyter URL --token T``: an agent of the CLI server sees and
    calls a cell's tool (with its own return type, not wrapped twice)."""
    from serving import serve_http

    kernel = _open(server, "cli.ipynb")
    try:
        kernel.run(GET_LIMIT.replace("get_limit", "cli_limit"), "define")
        server.wait_for(lambda: _row(server, "kernel:cli.ipynb", "cli_limit"), 15)
        project = tmp_path / "project"
        (project / "tools" / "dynamic").mkdir(parents=True)
        env = {"HOME": str(tmp_path / "home"), "NEXUS_VERSIONS_DIR": str(tmp_path / "v")}
        with serve_http(project, "--jupyter", server.url, "--token", TOKEN, env=env) as served:
            result = asyncio.run(_cli_call(served.url))
        assert result == (False, "7", {"result": 7})
    finally:
        kernel.close()


async def _cli_call(url: str) -> tuple[bool, str, Any]:
    import mcp

    async with mcp.Client(url, mode="legacy") as client:
        for _ in range(300):  # the Jupyter source connects in the background
            if "cli_limit" in [t.name for t in (await client.list_tools()).tools]:
                break
            await asyncio.sleep(0.05)
        result = await client.call_tool("cli_limit", {})
        text = " ".join(getattr(b, "text", "") for b in result.content)
        return bool(result.is_error), text, result.structured_content


def test_serve_jupyter_needs_a_token(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_TOKEN"}
    done = subprocess.run(
        [sys.executable, "-m", "nexus_jupyter.serve.cli_serve", "--jupyter", "http://x:1/"],
        cwd=tmp_path,
        env={**env, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "needs the server's token" in done.stderr


def test_serve_jupyter_says_a_refused_token(server: JupyterServer, tmp_path: Path) -> None:
    """A wrong --token: the operator is told the Jupyter server refused it, in the server's
    own words, and how to find the right one; not the nex.yaml advice of an MCP server."""
    from serving import serve_http

    project = tmp_path / "project"
    (project / "tools" / "dynamic").mkdir(parents=True)
    env = {"HOME": str(tmp_path / "home"), "NEXUS_VERSIONS_DIR": str(tmp_path / "v")}
    with serve_http(project, "--jupyter", server.url, "--token", "wrong", env=env) as served:

        def said() -> str | None:
            return next((ln for ln in served.output if "refused the token" in ln), None)

        server.wait_for(said, 30, "serve to say the token was refused")
    line = said() or ""
    base = server.url.rstrip("/")
    assert f"Jupyter server {base}: HTTP 403: the Jupyter server refused the token given " in line
    assert "given with --token (" in line
    assert "it says: The token sent is not this Jupyter server's token" in line
    assert "`jupyter server list`" in line and "--token T" in line
    assert "nex.yaml" not in line and "oauth" not in line


SLOW = '''import asyncio
from nexus_jupyter import ToolContext, tool

state = {"cancelled": False}

@tool
async def slow_step(ctx: ToolContext) -> str:
    """Report half the work done, then wait."""
    await ctx.progress(1, 2, "half way")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        state["cancelled"] = True
        raise
    return "done"
'''


def test_progress_and_cancel_reach_the_kernel(server: JupyterServer) -> None:
    kernel = _open(server, "slow.ipynb")
    try:
        kernel.run(SLOW, "slow")
        server.wait_for(lambda: _row(server, "kernel:slow.ipynb", "slow_step"), 15)
        progress = asyncio.run(_call_then_cancel(server))
        assert progress == [(1.0, 2.0, "half way")]

        def cancelled_in_kernel() -> bool:
            try:
                kernel.run("assert state['cancelled']", "check")
            except AssertionError:
                return False
            return True

        server.wait_for(cancelled_in_kernel, 15, "the kernel's task to be cancelled")
    finally:
        kernel.close()


async def _call_then_cancel(server: JupyterServer) -> list[tuple[float, float | None, str | None]]:
    """Call slow_step over /nexus/mcp, and give up once its progress arrived."""
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    seen: list[tuple[float, float | None, str | None]] = []
    halfway = asyncio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))
        halfway.set()

    headers = {"Authorization": f"token {TOKEN}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(server.url + "nexus/mcp", http_client=http)
        async with mcp.Client(transport, mode="legacy") as client:
            call = asyncio.ensure_future(
                client.call_tool("slow_step", {}, progress_callback=on_progress)
            )
            await asyncio.wait_for(halfway.wait(), 15)
            call.cancel()  # the SDK sends notifications/cancelled
            with contextlib.suppress(asyncio.CancelledError):
                await call
    return seen


def test_nexus_mcp_follows_jupyter_auth(server: JupyterServer) -> None:
    """Token (``token`` or ``Bearer``) or cookie + XSRF; a cookie without XSRF, or nothing,
    is refused before the MCP layer."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "auth-test", "version": "1"},
        },
    }

    said: list[str] = []

    def post(opener: Any, headers: dict[str, str]) -> int:
        req = urllib.request.Request(
            server.url + "nexus/mcp",
            data=json.dumps(initialize).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **headers,
            },
        )
        try:
            with opener.open(req, timeout=10) as resp:
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            said.append(json.loads(exc.read())["message"])
            return int(exc.code)

    plain = urllib.request.build_opener()
    assert post(plain, {}) == 403
    # an agent is told how to get in, not about a browser's XSRF cookie
    assert "needs the Jupyter server's token" in said[-1] and "Authorization: token" in said[-1]
    assert post(plain, {"Authorization": "token not-the-token"}) == 403
    assert "is not this Jupyter server's token" in said[-1]
    listen = urllib.request.Request(
        server.url + "nexus/mcp", headers={"Accept": "text/event-stream"}
    )
    with pytest.raises(urllib.error.HTTPError) as refused:  # GET: the listen stream
        plain.open(listen, timeout=10)
    assert refused.value.code == 403
    assert "needs the Jupyter server's token" in json.loads(refused.value.read())["message"]
    assert post(plain, {"Authorization": f"Bearer {TOKEN}"}) == 200
    assert post(plain, {"Authorization": f"token {TOKEN}"}) == 200
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    browser.open(server.url + f"api/status?token={TOKEN}", timeout=10).read()  # the login
    browser.open(server.url + "login", timeout=10).read()  # a page sets the _xsrf cookie
    xsrf = [c.value for c in jar if c.name == "_xsrf"]
    assert xsrf, [c.name for c in jar]
    assert post(browser, {}) == 403  # the cookie alone: Jupyter's XSRF rule
    assert "_xsrf" in said[-1]
    assert post(browser, {"X-XSRFToken": xsrf[0]}) == 200


def test_a_kernel_that_loads_the_extension_itself_relinks_after_restart(tmp_path: Path) -> None:
    """With ``nexus_jupyter`` in the kernel's IPython config the restarted kernel announces
    itself again at once: the old process's tools leave, the new process stays linked."""
    with jupyter_server(tmp_path) as server:
        profile = tmp_path / "home" / ".ipython" / "profile_default"
        profile.mkdir(parents=True)
        (profile / "ipython_kernel_config.py").write_text(
            "c.InteractiveShellApp.extensions = ['nexus_jupyter']\n"
        )
        kernel = NotebookKernel(server, "auto.ipynb")
        try:
            server.wait_for(lambda: _linked(server, "auto.ipynb"), what="the first link")
            kernel.run("limit = 3", "set")
            kernel.run(GET_LIMIT, "define")
            server.wait_for(lambda: _row(server, "kernel:auto.ipynb", "get_limit"), 15)
            assert server.call("get_limit", {})[1]["structured"] == 3
            kernel.restart()
            server.wait_for(lambda: not server.tools("kernel:auto.ipynb"), 15, "tools to go")
            server.wait_for(lambda: _linked(server, "auto.ipynb"), what="the new process")
            kernel.run("limit = 5", "set")
            kernel.run(GET_LIMIT, "define")
            server.wait_for(lambda: _row(server, "kernel:auto.ipynb", "get_limit"), 15)
            assert server.call("get_limit", {})[1]["structured"] == 5
        finally:
            kernel.close()
