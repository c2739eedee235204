"""``nexus-tools serve --transport http`` as a real process in tests: started on a free port,
its URL read from the line it prints, stopped cleanly (exit code 0). Shared by the MCP server,
feature and conformance tests."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def serving_http(*args: str, cwd: Path) -> Iterator[str]:
    """Run ``nexus-tools <args>`` (which must include ``serve --transport http --port 0``)
    in ``cwd``; yields the MCP URL it announces."""
    code = "import sys; from nexus_jupyter.cli import main; sys.exit(main())"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    lines: list[str] = []
    url = None
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("Serving"):
            url = line.rsplit(" ", 1)[1].strip()
            break
    if url is None:
        proc.kill()
        proc.wait(10)
        raise AssertionError("nexus-tools serve did not start:\n" + "".join(lines))
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
    try:
        yield url
    finally:
        proc.terminate()
        assert proc.wait(15) == 0
