"""A real cluster on loopback for tests and ``benchmarks/cluster.py``: Debian ``redis-server``,
N ``nexus-tools serve --cluster`` replica processes (each with its own project and tools
folder, so everything they share goes through Redis) and ``nginx`` round-robin in front.

    with cluster_rig(tmp_path, replicas=3) as rig:
        rig.balancer_url            # http://127.0.0.1:PORT/mcp (nginx)
        rig.replicas[0].url         # one replica directly
        rig.redis.restart(); rig.kill(2)

Every process is started by PID and stopped by PID; nothing touches system services.
"""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from serving import ServeProcess, serve_http  # tests/ is on sys.path (rootdir conftest)

#: Replicas may create and run tools through MCP without a person to ask (test setup only).
# Keyword search: three replicas embedding their tools on 2 cores at start would measure
# the model, not publication (the cluster tests do not search).
NEX_YAML = """\
grant: danger_full_access
approvals:
  create_dynamic_tool: pre_approved
search: {mode: keyword}
"""


def missing_programs() -> list[str]:
    return [p for p in ("redis-server", "nginx") if shutil.which(p) is None]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes] | None, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


class RedisProcess:
    """``redis-server`` in the foreground on a fixed loopback port, without persistence:
    a restart comes back empty, the hardest case for the replicas."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
                "--dir",
                str(self.folder),
                "--logfile",
                "",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        wait_port(self.port, self.proc)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def restart(self, down_s: float = 0.0) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()


class Nginx:
    """nginx round-robin over the replicas, as documented in the README."""

    def __init__(
        self, folder: Path, port: int, backends: list[int], host_header: str = "$http_host"
    ) -> None:
        self.folder, self.port, self.backends = folder, port, backends
        self.host_header = host_header  # what the replicas see (they allow the balancer's)
        self.proc: subprocess.Popen[bytes] | None = None

    def config(self) -> str:
        t = self.folder
        servers = "\n".join(
            f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;" for p in self.backends
        )
        return f"""daemon off;
master_process on;
worker_processes 1;
pid {t}/nginx.pid;
error_log {t}/logs/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {t}/tmp/body;
    proxy_temp_path {t}/tmp/proxy;
    fastcgi_temp_path {t}/tmp/fastcgi;
    uwsgi_temp_path {t}/tmp/uwsgi;
    scgi_temp_path {t}/tmp/scgi;
    upstream replicas {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{self.port};
        location / {{
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host {self.host_header};
            proxy_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
}}
"""

    def start(self) -> None:
        for sub in ("logs", "tmp"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        conf = self.folder / "nginx.conf"
        conf.write_text(self.config())
        error_log = str(self.folder / "logs" / "error.log")
        self.proc = subprocess.Popen(
            ["nginx", "-p", str(self.folder), "-c", str(conf), "-e", error_log],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        wait_port(self.port, self.proc)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@dataclass
class Replica:
    index: int
    project: Path
    served: ServeProcess

    @property
    def proc(self) -> subprocess.Popen[str]:
        return self.served.proc

    @property
    def url(self) -> str:
        return self.served.url

    @property
    def folder(self) -> Path:
        return self.project / "tools" / "dynamic"

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``nexus-tools ARGS`` in a fresh process."""
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from nexus_jupyter.cli import main; sys.exit(main())",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )


@dataclass
class ClusterRig:
    redis: RedisProcess
    replicas: list[Replica]
    nginx: Nginx

    @property
    def balancer_url(self) -> str:
        return f"http://127.0.0.1:{self.nginx.port}/mcp"

    def kill(self, index: int) -> None:
        """SIGKILL one replica: no clean shutdown, like a crashed machine."""
        proc = self.replicas[index].proc
        proc.kill()
        proc.wait(10)


@contextmanager
def cluster_rig(base: Path, replicas: int = 3) -> Iterator[ClusterRig]:
    with ExitStack() as stack:
        redis = RedisProcess(base / "redis")
        redis.start()
        stack.callback(redis.stop)
        balancer_port = free_port()
        started: list[Replica] = []
        for i in range(replicas):
            project = base / f"replica{i}"
            (project / "tools" / "dynamic").mkdir(parents=True, exist_ok=True)
            (project / "nex.yaml").write_text(NEX_YAML)
            extra = ("--cluster", redis.url, "--allow-host", f"127.0.0.1:{balancer_port}")
            served = stack.enter_context(serve_http(project, *extra))
            started.append(Replica(i, project, served))
        nginx = Nginx(base / "nginx", balancer_port, [r.port for r in started])
        nginx.start()
        stack.callback(nginx.stop)
        yield ClusterRig(redis, started, nginx)
