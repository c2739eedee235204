"""Many users on JupyterHub: a real hub (``jupyterhub`` from PyPI, its configurable-http-proxy
from npm) spawns real single-user servers with the nexus extension; agents reach each user's
``/nexus/mcp`` through the hub's proxy with hub-issued API tokens, and only their own.
Beside the hub runs a team-wide ``nexus-tools serve --cluster --auth tokens`` (a real
redis-server): a tool published to the team reaches alice's own server, whose nex.yaml names
the team server with her team token, and runs there as alice.

The hub runs as this (root) user with ``SimpleLocalProcessSpawner`` (no system accounts) and
the ``dummy`` authenticator; users, servers and tokens are made through the hub's REST API
with a service token, as an admin would.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp
import pytest
from serving import INIT, serve_http  # tests/ is on sys.path (rootdir conftest)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

PROXY = Path(__file__).resolve().parents[1] / "jupyterhub/node_modules/.bin/configurable-http-proxy"
REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 120.0

HELLO = '''from nexus_jupyter import ToolContext, tool


@tool
def whose_server(ctx: ToolContext) -> str:
    """Name the user whose server runs this and the principal of the call."""
    import os
    return f"{os.environ['JUPYTERHUB_USER']} as {ctx.request.principal_name}"
'''


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _skip_reason() -> str | None:
    try:
        import jupyterhub  # noqa: F401
    except ImportError:
        return "jupyterhub is not installed: pip install -e '.[test]'"
    if not PROXY.exists():
        return "configurable-http-proxy is not installed: run `make npm-deps` (tests/jupyterhub)"
    if shutil.which("node") is None:
        return "node is not installed (configurable-http-proxy runs on it)"
    return None


SHARED = '''from nexus_jupyter import tool


@tool(permission="read_only")  # declared: alice's server trusts readOnlyHint, not a default
def team_greeting(name: str) -> str:
    """Greet someone on behalf of the team."""
    return f"hello {name}, from the team"
'''


class Hub:
    def __init__(self, url: str, admin_token: str) -> None:
        self.url, self.admin_token = url, admin_token
        self.team_url: str | None = None  # the team-wide serve beside the hub
        self.cluster_url: str | None = None

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"token {self.admin_token}"}
        return httpx.request(
            method, f"{self.url}hub/api/{path}", headers=headers, timeout=30, **kwargs
        )

    def start_servers(self, *users: str) -> None:
        """Create ``users``, spawn their servers (at once), and wait until the proxy routes
        to each."""
        for user in users:
            assert self.api("POST", f"users/{user}").status_code in (201, 409)
            started = self.api("POST", f"users/{user}/server")
            assert started.status_code in (201, 202), started.text
        deadline = time.monotonic() + DEADLINE_S
        waiting = list(users)
        while waiting:  # spawning processes, not registry events: poll the hub, bounded
            model = self.api("GET", f"users/{waiting[0]}").json()
            if model.get("servers", {}).get("", {}).get("ready"):
                waiting.pop(0)
                continue
            assert time.monotonic() < deadline, f"{waiting[0]}'s server never got ready: {model}"
            time.sleep(0.25)

    def token_for(self, user: str) -> str:
        """A hub API token of ``user`` that may reach their server (what an agent is given)."""
        made = self.api(
            "POST",
            f"users/{user}/tokens",
            json={"note": "agent", "scopes": [f"access:servers!user={user}"]},
        )
        assert made.status_code == 201, made.text
        return str(made.json()["token"])


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    reason = _skip_reason()
    if reason is not None:
        sys.stderr.write(f"\n{'!' * 78}\nJUPYTERHUB TEST SKIPPED: {reason}\n{'!' * 78}\n")
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("hub")
    homes = work / "homes"
    for user in ("alice", "bob"):
        tools = homes / user / "tools" / "dynamic"
        tools.mkdir(parents=True)
        (tools / "whose_server.py").write_text(HELLO)
    with ExitStack() as beside:
        team = _team_beside_the_hub(beside, work) if shutil.which("redis-server") else None
        if team is not None:  # alice's server uses the team's tools with her team token
            (homes / "alice" / "nex.yaml").write_text(
                "mcp:\n  servers:\n    - name: team\n"
                f"      url: {team['url']}\n"
                f"      headers: {{Authorization: 'Bearer {team['alice_token']}'}}\n"
            )
        yield from _run_hub(work, homes, team)


def _team_beside_the_hub(stack: ExitStack, work: Path) -> dict[str, str]:
    """redis-server and ``nexus-tools serve --cluster URL --auth tokens`` (API tokens in
    Redis), and a team token for alice."""
    from cluster.rig import RedisProcess, run_cli

    redis = RedisProcess(work / "redis")
    redis.start()
    stack.callback(redis.stop)
    team_dir = work / "team"
    team_dir.mkdir()
    served = stack.enter_context(
        serve_http(team_dir, "--root", str(team_dir), "--cluster", redis.url, "--auth", "tokens")
    )
    made = run_cli("tokens", "create", "alice", "--token-file", redis.url)
    assert made.returncode == 0, made.stderr
    return {"url": served.url, "cluster": redis.url, "alice_token": made.stdout.strip()}


def _run_hub(work: Path, homes: Path, team: dict[str, str] | None) -> Iterator[Hub]:
    port, hub_port, api_port = _free_port(), _free_port(), _free_port()
    admin_token = secrets.token_hex(16)
    env = {
        **os.environ,
        "ADMIN_TOKEN": admin_token,
        "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(16),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    env.pop("JUPYTERHUB_API_TOKEN", None)
    config = work / "jupyterhub_config.py"
    config.write_text(
        f"""
import os, sys
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{str(PROXY)!r}]
c.ConfigurableHTTPProxy.should_start = True
c.JupyterHub.db_url = "sqlite:///{work}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{work}/cookie_secret"
c.JupyterHub.pid_file = "{work}/hub.pid"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{homes}/{{username}}"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.args = ["--allow-root", "--ServerApp.jpserver_extensions={{'nexus_jupyter': True}}"]
c.Spawner.env_keep = ["PATH", "PYTHONPATH", "LANG", "LC_ALL"]
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# a user's server that has not ended 3 s after SIGINT gets SIGTERM (the teardown's wait)
c.LocalProcessSpawner.interrupt_timeout = 3
c.LocalProcessSpawner.term_timeout = 3
c.JupyterHub.services = [{{"name": "admin-bot", "api_token": os.environ["ADMIN_TOKEN"]}}]
c.JupyterHub.load_roles = [{{
    "name": "admin-bot",
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
    "services": ["admin-bot"],
}}]
"""
    )
    log = work / "hub.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=work,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/"
    hub = Hub(url, admin_token)
    if team is not None:
        hub.team_url, hub.cluster_url = team["url"], team["cluster"]
    try:
        deadline = time.monotonic() + DEADLINE_S
        while True:  # a starting process: poll it, bounded
            assert process.poll() is None, f"the hub exited:\n{log.read_text()[-4000:]}"
            try:
                if httpx.get(f"{url}hub/api/", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, (
                f"the hub never answered:\n{log.read_text()[-4000:]}"
            )
            time.sleep(0.25)
        hub.start_servers("alice", "bob")
        yield hub
    finally:
        for user in ("alice", "bob"):
            try:
                hub.api("DELETE", f"users/{user}/server")
            except httpx.HTTPError:
                pass
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@asynccontextmanager
async def _agent(url: str, token: str, mode: str) -> AsyncIterator[mcp.Client]:
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"token {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        async with mcp.Client(streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
            yield client


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_each_user_reaches_their_own_server_with_a_hub_token(hub: Hub, mode: str) -> None:
    for user in ("alice", "bob"):
        url = f"{hub.url}user/{user}/nexus/mcp"
        async with _agent(url, hub.token_for(user), mode) as agent:
            names = {t.name for t in (await agent.list_tools()).tools}
            assert "whose_server" in names and "read" in names
            result = await agent.call_tool("whose_server", {})
            assert not result.is_error, result
            assert result.content[0].text == f"{user} as {user}"  # type: ignore[union-attr]


def test_another_users_token_or_none_is_refused(hub: Hub) -> None:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    alice_mcp = f"{hub.url}user/alice/nexus/mcp"
    statuses = {}
    for who, token in (("bob", hub.token_for("bob")), ("nobody", None), ("forged", "x" * 32)):
        extra = {"Authorization": f"token {token}"} if token else {}
        answer = httpx.post(
            alice_mcp, content=json.dumps(INIT), headers={**headers, **extra}, timeout=30
        )
        statuses[who] = answer.status_code
    assert all(not 200 <= s < 300 for s in statuses.values()), statuses
    assert statuses["bob"] == 403, statuses  # authenticated by the hub, but not alice's server


async def test_a_tool_published_to_the_team_serve_reaches_alices_server(
    hub: Hub, tmp_path: Path
) -> None:
    if hub.cluster_url is None:
        pytest.skip("redis-server is not installed: run `make cluster-deps` (Debian)")
    from cluster.rig import run_cli

    shared = tmp_path / "team_greeting.py"
    shared.write_text(SHARED)
    published = run_cli("publish", str(shared), "--cluster", hub.cluster_url)
    assert published.returncode == 0, published.stderr
    url = f"{hub.url}user/alice/nexus/mcp"
    async with _agent(url, hub.token_for("alice"), "auto") as agent:
        deadline = time.monotonic() + 60
        while True:  # the team server announces it; alice's server relists: poll, bounded
            names = {t.name for t in (await agent.list_tools(cache_mode="refresh")).tools}
            if "mcp__team__team_greeting" in names:
                break
            assert time.monotonic() < deadline, sorted(names)
            await asyncio.sleep(0.25)
        result = await agent.call_tool("mcp__team__team_greeting", {"name": "bob"})
        assert not result.is_error, result
        assert result.content[0].text == "hello bob, from the team"  # type: ignore[union-attr]
    from nexus_jupyter.cluster import ClusterAddress, ClusterStore

    store = ClusterStore(ClusterAddress.parse(hub.cluster_url))
    try:
        deadline = time.monotonic() + 10
        while True:  # the team server sends its audit records in batches: poll, bounded
            calls = [r for r in await store.audit(last=1000) if r["tool"] == "team_greeting"]
            if calls or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
    finally:
        await store.close()
    assert [c["principal"] for c in calls] == ["alice"], calls  # her team token's name
