"""The audit log: JSON lines, append-only, safe under concurrent writers, masked."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path

from nexus_jupyter.core.policy.audit import AuditLog


def test_concurrent_writers_never_interleave(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "sub" / "audit.jsonl")
    long_error = "x" * 5000  # longer than a pipe buffer, and capped at 2000

    def write(n: int) -> None:
        for i in range(200):
            log.record(
                tool=f"t{n}",
                principal=None,
                request_id=f"{n}-{i}",
                client="python",
                decision="allow",
                duration=0.001,
                error=long_error if i % 7 == 0 else None,
            )

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "sub" / "audit.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert len(entries) == 1600 == log.written
    assert len({e["request_id"] for e in entries}) == 1600
    assert set(entries[0]) == {
        "time",
        "tool",
        "principal",
        "request_id",
        "client",
        "decision",
        "duration",
        "error",
    }
    assert max(len(e["error"] or "") for e in entries) == 2000
    assert stat.S_IMODE((tmp_path / "sub" / "audit.jsonl").stat().st_mode) == 0o600


def test_errors_go_through_the_masker(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "a.jsonl", masker=lambda text: text.replace("hunter22", "***"))
    log.record(
        tool="t",
        principal="bob",
        request_id="r",
        client="rest",
        decision="deny",
        duration=0.0,
        error="password hunter22 rejected",
    )
    assert log.read()[-1]["error"] == "password *** rejected"
    assert "hunter22" not in (tmp_path / "a.jsonl").read_text()


def test_a_deleted_or_renamed_log_is_recreated_without_losing_lines(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    log = AuditLog(path)
    entry = dict(
        principal=None, request_id=None, client="python", decision="allow", duration=0.0, error=None
    )
    log.record(tool="first", **entry)
    path.unlink()
    log.record(tool="after-delete", **entry)  # at once: the open file is gone
    assert [e["tool"] for e in log.read()] == ["after-delete"]
    path.rename(tmp_path / "audit.1.jsonl")
    log._next_check = 0.0  # as if a second had passed since the last path check
    log.record(tool="after-rename", **entry)
    assert [e["tool"] for e in log.read()] == ["after-rename"]
