"""API tokens on a cluster: made once with ``nexus-tools tokens``, accepted by every replica
(real ``serve --auth tokens --cluster`` processes), revoked everywhere within a second."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx2
from rig import run_cli
from serving import INIT, serve_http

from nexus_jupyter.cluster.tokens import REFRESH_S


def tokens(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("tokens", *args)


def status_with(url: str, secret: str) -> int:
    headers = {
        "Authorization": f"Bearer {secret}",
        "Accept": "application/json, text/event-stream",
    }
    return httpx2.post(url, json=INIT, headers=headers, timeout=10).status_code


def test_a_token_made_once_works_on_every_replica_until_revoked(
    redis_url: str, tmp_path: Path
) -> None:
    url = redis_url + "?prefix=tokens"
    made = tokens("create", "alice", "--token-file", url)
    assert made.returncode == 0, made.stderr
    secret = made.stdout.strip()
    assert secret.startswith("nxt_")
    listed = tokens("list", "--token-file", url, "--json")
    assert '"alice"' in listed.stdout and secret not in listed.stdout  # never shown again
    again = tokens("create", "alice", "--token-file", url)
    assert again.returncode == 1 and "exists already" in again.stderr
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    # b names its cluster in nex.yaml instead of --cluster; it has no token file, so it can
    # only accept alice's token through the cluster
    (tmp_path / "b" / "nex.yaml").write_text(f"cluster: {url}\n")
    with (
        serve_http(tmp_path / "a", "--cluster", url, "--auth", "tokens") as first,
        serve_http(tmp_path / "b", "--auth", "tokens") as second,
    ):
        for served in (first, second):
            assert status_with(served.url, secret) == 200
            assert status_with(served.url, "nxt_forged") == 401
        assert tokens("revoke", "alice", "--token-file", url).returncode == 0
        time.sleep(REFRESH_S + 0.2)
        for served in (first, second):
            assert status_with(served.url, secret) == 401
