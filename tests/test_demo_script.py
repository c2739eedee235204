"""``make demo``'s launcher (scripts/demo.py) with a real JupyterLab: it prints the URL with
its token once the server answers, moves to a free port when the asked one is taken, and puts
the project's ``.venv/bin`` first on the PATH the server (and so its kernels) run with."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parent.parent
READY_DEADLINE_S = 120.0


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_demo_prints_the_real_url_on_a_free_port_with_the_venv_first(tmp_path: Path) -> None:
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    taken = busy.getsockname()[1]
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "PATH": "/usr/bin:/bin",  # the venv is not on PATH, as in a plain shell
    }
    demo = subprocess.Popen(
        [sys.executable, str(REPO / "scripts" / "demo.py"), "--port", str(taken)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert demo.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + READY_DEADLINE_S
        url = None
        while url is None and time.monotonic() < deadline:
            line = demo.stdout.readline()
            assert line, f"the launcher ended early: {lines}"
            lines.append(line)
            found = re.search(r"(http://127\.0\.0\.1:(\d+)/lab/tree/\S+\?token=(\w+))", line)
            if found:
                url = found
        assert url is not None, lines
        assert f"port {taken} is taken" in "".join(lines)
        port, token = int(url.group(2)), url.group(3)
        assert port != taken
        status = f"http://127.0.0.1:{port}/api/status?token={token}"
        with urllib.request.urlopen(status, timeout=5) as response:
            assert response.status == 200
        with urllib.request.urlopen(url.group(1), timeout=10) as response:
            assert response.status == 200  # the printed link opens the quickstart
        (server,) = _children(demo.pid)
        environ = Path(f"/proc/{server}/environ").read_bytes().split(b"\0")
        path = next(v for v in environ if v.startswith(b"PATH=")).decode()[5:]
        assert path.split(os.pathsep)[0] == str(Path(sys.executable).parent)
    finally:
        demo.send_signal(signal.SIGINT)
        try:
            demo.wait(timeout=30)
        except subprocess.TimeoutExpired:
            demo.kill()
            demo.wait()
        busy.close()
