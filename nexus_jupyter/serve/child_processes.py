"""The last word on the processes ``nexus-tools serve`` started: when serve ends, however it
ends, :func:`end_children` ends every child process still running.

The sources stop their own processes as the registry closes (an MCP server the SDK way,
a worker by its pipe); this sweep is for what is left: a stop cut short by a signal, a
source that failed to stop, a command-line tool still running. It looks the children up
from the operating system (``/proc`` on Linux, ``pgrep -P`` elsewhere), so a process
started by any part of serve is found without that part handing it over. A child that
leads its own process group (an MCP server, a command-line tool: both start a new session)
is ended with its whole group, which holds what it started in turn.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

__all__ = ["child_pids", "end_children"]

#: How long the children have after SIGTERM before SIGKILL.
GRACE_S = 0.5


def child_pids(parent: int | None = None) -> list[int]:
    """The pids of the live child processes of ``parent`` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    proc = Path("/proc")
    if (proc / "self" / "stat").exists():
        found = []
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # it exited meanwhile
                continue
            # pid (comm) state ppid ...: comm may hold spaces and parentheses
            fields = stat[stat.rfind(")") + 2 :].split()
            if len(fields) > 1 and int(fields[1]) == parent and fields[0] != "Z":
                found.append(int(entry.name))
        return sorted(found)
    try:
        out = subprocess.run(
            ["pgrep", "-P", str(parent)], capture_output=True, text=True, timeout=5
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return sorted(int(word) for word in out.split() if word.isdigit())


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid and pid != os.getpgrp()
    except OSError:
        return False


def _signal(pid: int, signum: int, group: bool) -> None:
    """Send ``signum`` to ``pid``, or to its whole process group when it leads one."""
    with contextlib.suppress(OSError):
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)


def _running(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running. An exit is looked at without reaping: the part of
    serve that started the process reaps it (an event loop's child watcher, ``Popen``)."""
    running = []
    for pid in pids:
        if not hasattr(os, "waitid"):  # macOS before Python 3.13: a zombie still counts
            with contextlib.suppress(OSError):
                os.kill(pid, 0)
                running.append(pid)
            continue
        try:
            exited = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped already
            continue
        except OSError:
            exited = None
        if exited is None:
            running.append(pid)
    return running


def end_children(grace: float = GRACE_S, *, spare: frozenset[int] = frozenset()) -> list[int]:
    """End every child process of this one but those in ``spare`` (the ones it had before
    serving began: a wrapper's sidecar, the host's own when serve runs in process): SIGTERM
    (to its group when it leads one), then SIGKILL to those still running ``grace`` seconds
    later. Returns the pids it ended."""
    pids = [pid for pid in child_pids() if pid not in spare]
    if not pids:
        return []
    groups = {pid for pid in pids if _leads_group(pid)}
    for pid in pids:
        _signal(pid, signal.SIGTERM, pid in groups)
    deadline = time.monotonic() + grace
    running = _running(pids)
    while running and time.monotonic() < deadline:
        time.sleep(0.02)
        running = _running(running)
    # a group outlives its leader: what the leader started is ended all the same
    for pid in set(running) | groups:
        _signal(pid, signal.SIGKILL, pid in groups)
    deadline = time.monotonic() + grace
    while running and time.monotonic() < deadline:
        time.sleep(0.02)
        running = _running(running)
    return pids
