"""Start JupyterLab on the quickstart for ``make demo`` and print the URL to open, token
included, once the server answers.

    python scripts/demo.py [--host 127.0.0.1] [--port 8888]

Why a script and not a bare ``jupyter lab``: the address JupyterLab prints is buried in its
log, and when the port is taken it quietly moves to another. Here the port is chosen first
(the asked one, else the next free one), the token is made here, and one line says where to
go. The project's ``.venv/bin`` goes first on PATH, so kernels and what they start
(``%tool mcp add time -- python -m mcp_server_time``) use the project's Python.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "notebooks/01-quickstart.ipynb"
START_DEADLINE_S = 120.0
PORTS_TRIED = 50


def free_port(host: str, wanted: int) -> int:
    """``wanted`` when nothing listens there, else the next free port above it."""
    for port in range(wanted, wanted + PORTS_TRIED):
        with socket.socket() as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
            return port
    raise SystemExit(f"demo: no free port in {wanted}..{wanted + PORTS_TRIED - 1} on {host}")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8888)
    args = parser.parse_args(argv)

    port = free_port(args.host, args.port)
    if port != args.port:
        print(f"demo: port {args.port} is taken; using {port}.", flush=True)
    token = secrets.token_hex(24)
    venv_bin = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--ip={args.host}",
        f"--port={port}",
        "--ServerApp.port_retries=0",  # the port chosen above, or fail: never a silent move
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={ROOT}",
        f"--LabApp.default_url=/lab/tree/{NOTEBOOK}",
    ]
    if hasattr(os, "getuid") and os.getuid() == 0:
        command.append("--allow-root")
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    base = f"http://{shown_host}:{port}"
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + START_DEADLINE_S
        while not answers(f"{base}/api/status?token={token}"):
            if server.poll() is not None:
                print("demo: JupyterLab exited before it was ready (see above).", flush=True)
                return server.returncode or 1
            if time.monotonic() > deadline:
                print(f"demo: JupyterLab did not answer within {START_DEADLINE_S:.0f} s.")
                server.terminate()
                return 1
            time.sleep(0.25)  # polling a starting process
        print(f"\nJupyterLab is ready. Open:\n\n    {base}/lab/tree/{NOTEBOOK}?token={token}\n")
        print("Stop it with Ctrl-C.", flush=True)
        return server.wait()
    except KeyboardInterrupt:
        server.terminate()
        try:
            return server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            return server.wait()


if __name__ == "__main__":
    sys.exit(main())
