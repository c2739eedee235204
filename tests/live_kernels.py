"""A real Jupyter server process with the extension, and real kernels started through its
REST API (tests/serve/test_kernel_tools.py; tests/security/test_shutdown.py uses the command
line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TOKEN = "kernel-tools-test-token"


def server_url(
    runtime: Path, process: subprocess.Popen[bytes], log: Path, timeout: float = 60.0
) -> str:
    """The URL of a Jupyter server started with ``--port=0``, read from the
    ``jpserver-PID.json`` it writes to ``runtime`` as it starts. The server picks the port
    itself, a moment before it listens: the window in which another process could take it is
    inside the server's start, not the seconds between a pick in the test and that start (and
    a server that lost it exits, which this reports, instead of moving to a port the test
    does not know)."""
    info = runtime / f"jpserver-{process.pid}.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the Jupyter server exited early:\n{log.read_text()[-4000:]}")
        try:
            return str(json.loads(info.read_text())["url"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)  # polling a starting process's file, bounded by the deadline
    raise AssertionError(f"{info} did not appear within {timeout} s:\n{log.read_text()[-4000:]}")


@dataclass
class JupyterServer:
    url: str
    root: Path
    runtime: Path
    log: Path
    process: subprocess.Popen[bytes]

    def request(
        self, method: str, path: str, body: Any = None, *, token: str | None = TOKEN
    ) -> tuple[int, Any]:
        """``(status, JSON body or text)`` of one REST request."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if token is not None:
            req.add_header("Authorization", f"token {token}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        try:
            return status, json.loads(raw) if raw else None
        except ValueError:
            return status, raw.decode(errors="replace")

    def tools(self, source: str | None = None) -> list[dict[str, Any]]:
        status, body = self.request("GET", "nexus/api/tools?limit=1000")
        assert status == 200, body
        rows: list[dict[str, Any]] = body["tools"]
        return [r for r in rows if source is None or r["source"] == source]

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[int, Any]:
        return self.request("POST", f"nexus/api/tools/{name}/call", {"arguments": arguments})

    def wait_for(self, check: Callable[[], Any], timeout: float = 30.0, what: str = "") -> Any:
        """Poll ``check`` (a REST question, this is the test's side) until truthy."""
        deadline = time.monotonic() + timeout
        while True:
            value = check()
            if value:
                return value
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = self.log.read_text(errors="replace")[-3000:]
                raise AssertionError(f"timed out waiting for {what or check}\n{tail}")
            time.sleep(0.02)


#: Two notebook tools that need approval: save_note (workspace_write, within the sidebar's
#: default grant) and purge_cache (danger_full_access, above it).
APPROVAL_TOOLS = '''from nexus_jupyter import tool

@tool(permission="workspace_write")
def save_note(text: str) -> str:
    """Pretend to save a note."""
    return f"saved {text}"

@tool(permission="danger_full_access")
def purge_cache(folder: str = "cache") -> str:
    """Pretend to delete a cache folder (danger!)."""
    return f"purged {folder}"
'''


def jupyter_server_command(port: int, token: str, root: Path) -> list[str]:
    """The command line of a Jupyter server on ``127.0.0.1:port`` with the extension (port 0:
    one the server picks, see :func:`server_url`)."""
    return [
        sys.executable,
        "-m",
        "jupyter_server",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.jpserver_extensions={'nexus_jupyter': True}",
    ]


@contextmanager
def jupyter_server(
    tmp_path: Path,
    runtime: Path | None = None,
    *,
    tools_folder: bool = True,
    nex_yaml: str | None = None,
) -> Iterator[JupyterServer]:
    """A server of its own in ``tmp_path``; ``runtime`` shares a runtime dir with others (as
    one user's servers do by default). ``tools_folder=False`` leaves ``tools/dynamic`` out
    of the root (as in a fresh checkout: the first export makes it); ``nex_yaml`` is the
    text of the root's ``nex.yaml``."""
    root = tmp_path / "root"
    root.mkdir(parents=True)
    if nex_yaml is not None:
        (root / "nex.yaml").write_text(nex_yaml, encoding="utf-8")
    if tools_folder:
        (root / "tools" / "dynamic").mkdir(parents=True)
    runtime = runtime or tmp_path / "runtime"
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "NEXUS_VERSIONS_DIR": str(tmp_path / "versions"),
        "HOME": str(tmp_path / "home"),
    }
    env.pop("NEXUS_TOOLS_DIR", None)
    log = tmp_path / "jupyter.log"
    command = jupyter_server_command(0, TOKEN, root)
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        server = JupyterServer(server_url(runtime, process, log), root, runtime, log, process)
        server.wait_for(
            lambda: _answers(server), timeout=60, what="the Jupyter server to answer /api/status"
        )
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(server: JupyterServer) -> bool:
    try:
        status, _ = server.request("GET", "nexus/api/status")
    except OSError:
        return False
    return status == 200


class NotebookKernel:
    """A kernel started by the server for a notebook session, driven like a notebook
    frontend would (execute requests carrying the cell id)."""

    def __init__(self, server: JupyterServer, path: str) -> None:
        from jupyter_client import BlockingKernelClient

        self.server, self.path = server, path
        status, body = server.request(
            "POST",
            "api/sessions",
            {"path": path, "type": "notebook", "name": path, "kernel": {"name": "python3"}},
        )
        assert status == 201, body
        self.session_id = body["id"]
        self.kernel_id = body["kernel"]["id"]
        self.client = BlockingKernelClient()
        self.client.load_connection_file(str(server.runtime / f"kernel-{self.kernel_id}.json"))
        # No heartbeat channel: on a loaded 2-core machine a missed beat makes the client
        # report a live kernel as dead; the server watches the process itself.
        self.client.start_channels(hb=False)
        self.client.wait_for_ready(timeout=60)

    def run(self, code: str, cell_id: str = "cell-1", timeout: float = 60) -> dict[str, Any]:
        """Execute ``code`` as cell ``cell_id``; returns the reply content, raising on an
        error with the traceback."""
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        msg = self.client.session.msg("execute_request", content, metadata={"cellId": cell_id})
        self.client.shell_channel.send(msg)
        while True:
            reply = self.client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                break
        result: dict[str, Any] = reply["content"]
        if result["status"] != "ok":
            raise AssertionError("\n".join(result.get("traceback", [])) or str(result))
        return result

    def restart(self) -> None:
        status, body = self.server.request("POST", f"api/kernels/{self.kernel_id}/restart", {})
        assert status == 200, body
        self.client.wait_for_ready(timeout=60)

    def close(self) -> None:
        self.client.stop_channels()
        self.server.request("DELETE", f"api/sessions/{self.session_id}")


#: A cell defining ``half``, whose own validator (a pydantic ``AfterValidator``, which its JSON
#: schema cannot say) refuses an odd number: "must be even".
HALF_CELL = '''from typing import Annotated

from pydantic import AfterValidator

from nexus_jupyter import tool


def _even(v: int) -> int:
    if v % 2:
        raise ValueError("must be even")
    return v


@tool
def half(n: Annotated[int, AfterValidator(_even)]) -> int:
    """Half of an even number."""
    return n // 2
'''

#: A cell defining ``add`` with docstring ``{doc}``, returning ``(a + b) * {times}``.
ADD_CELL = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int = 0) -> int:
    """{doc}"""
    return (a + b) * {times}
'''
