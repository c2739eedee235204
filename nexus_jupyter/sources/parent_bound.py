"""On Linux, the MCP servers a source starts (stdio processes) end with the process that
started them, even one killed with SIGKILL, which cannot stop its children itself.

The MCP SDK spawns a server with no hook to run in the child before ``exec``, so the server
is started through a small exec wrapper: a Python process that asks the kernel to send it
SIGTERM when its parent ends (``prctl(PR_SET_PDEATHSIG)``, kept across ``exec``) and then
becomes the server with ``execvp``: same pid, same pipes, nothing left in between.

- SIGTERM, not SIGKILL: a launcher (``npx``, ``uvx``, ``docker run``) passes it on to the
  server it started, where SIGKILL would leave that one running. A server that ignores
  SIGTERM outlives its parent's death as before.
- The signal comes when the *thread* that started the process ends. The SDK starts it on
  the registry's background loop thread, which runs until the registry is closed (after
  the sources stopped their servers), so it never fires early.
- A parent that ended before the wrapper asked is noticed (its parent pid changed): the
  wrapper exits instead of starting an orphan.
- Python ignores SIGPIPE and SIGXFSZ at startup, and an ignored signal stays ignored
  across ``exec``: the wrapper sets both back to their default first, so the server starts
  as it would have without it (a server that writes to a closed pipe ends, as it expects).

Elsewhere (macOS, Windows) the command runs as given: a server outlives a parent killed
outright (a normal stop, or SIGTERM to ``nexus-tools serve``, still stops it).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence

__all__ = ["parent_bound"]

#: Run as ``python -I -S -c WRAPPER PARENT_PID COMMAND ARG...`` (standard library only).
WRAPPER = r"""import ctypes, os, signal, sys
parent, command = int(sys.argv[1]), sys.argv[2:]
PR_SET_PDEATHSIG = 1
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
    sys.stderr.write("nexus-jupyter: cannot bind the MCP server to its parent; it runs anyway\n")
if os.getppid() != parent:
    sys.exit(1)
for ignored_by_python in (signal.SIGPIPE, signal.SIGXFSZ):
    signal.signal(ignored_by_python, signal.SIG_DFL)
try:
    os.execvp(command[0], command)
except OSError as exc:
    sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
    sys.exit(127)
"""


def parent_bound(
    command: str, args: Sequence[str], env: Mapping[str, str] | None = None
) -> tuple[str, list[str]]:
    """``(command, args)`` that start ``command args`` bound to this process (see the
    module docs): the wrapper on Linux, else ``command`` and ``args`` as they are. A command
    not found on ``env``'s PATH (or this process's) is left as it is too, so starting it
    fails the usual way, with the message that says to install it."""
    if not sys.platform.startswith("linux") or not sys.executable:
        return command, list(args)
    path = (env or {}).get("PATH", os.environ.get("PATH"))
    if shutil.which(command, path=path) is None:
        return command, list(args)
    wrapper = ["-I", "-S", "-c", WRAPPER, str(os.getpid()), command, *args]
    return sys.executable, wrapper
