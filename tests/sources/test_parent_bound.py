"""An MCP server started through the parent-bound exec wrapper (a Python process) starts
with the signal dispositions it would have had started directly: Python ignores SIGPIPE
and SIGXFSZ at startup, and an ignored signal stays ignored across ``exec``."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys

import pytest

from nexus_jupyter.sources.parent_bound import parent_bound

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the wrapper is Linux only"
)


def ignored_signals(command: str, args: list[str]) -> int:
    """The ignored-signal mask (``SigIgn`` in ``/proc/<pid>/status``) of the process that
    ``command args`` became, which prints its own status."""
    status = subprocess.run([command, *args], capture_output=True, text=True, check=True).stdout
    line = next(line for line in status.splitlines() if line.startswith("SigIgn:"))
    return int(line.split()[1], 16)


def test_a_wrapped_server_starts_with_the_signals_it_would_have_had_directly() -> None:
    cat = shutil.which("cat")
    assert cat is not None
    command, args = parent_bound("cat", ["/proc/self/status"])
    assert command == sys.executable  # it went through the wrapper

    wrapped = ignored_signals(command, args)

    assert wrapped == ignored_signals(cat, ["/proc/self/status"])
    assert wrapped & (1 << (signal.SIGPIPE - 1)) == 0, "SIGPIPE is ignored in the wrapped server"
    assert wrapped & (1 << (signal.SIGXFSZ - 1)) == 0, "SIGXFSZ is ignored in the wrapped server"
