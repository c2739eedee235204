"""The MCP client's messages on this process's stdin, read on a daemon thread.

The SDK's ``stdio_server`` reads stdin with ``anyio.wrap_file``: each line is a blocking
read on one of anyio's worker threads, which Python joins at exit. While the client keeps
stdin open, a server told to stop (SIGTERM) then waits for a line that never comes
(``serve`` was ended by its 3.5 s timer, exit code 1). :func:`claimed_stdin` reads on a
daemon thread instead, which nothing waits for; like the SDK's own claim, it points fd 0
at the null device while serving (a tool or a child process reading stdin gets EOF, not
the protocol) and puts it back after.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["StdinLines", "claimed_stdin"]


class StdinLines:
    """Lines of a file descriptor as an async iterator (what ``stdio_server(stdin=...)``
    iterates), read on a daemon thread and handed to the event loop that iterates."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: asyncio.Queue[str | None] | None = None
        self._thread: threading.Thread | None = None

    def _pump(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
        def put(item: str | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody reads any more
                loop.call_soon_threadsafe(queue.put_nowait, item)

        try:
            with open(self._fd, encoding="utf-8", errors="replace", closefd=False) as lines:
                for line in lines:
                    put(line)
        except (OSError, ValueError):
            pass  # the descriptor was closed under us: the same as the end of input
        put(None)

    def __aiter__(self) -> StdinLines:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._thread = threading.Thread(
                target=self._pump,
                args=(asyncio.get_running_loop(), self._queue),
                name="mcp-stdin",
                daemon=True,
            )
            self._thread.start()
        return self

    async def __anext__(self) -> str:
        assert self._queue is not None
        line = await self._queue.get()
        if line is None:
            self._queue.put_nowait(None)  # another read also ends
            raise StopAsyncIteration
        return line


@contextlib.contextmanager
def claimed_stdin() -> Iterator[Any]:
    """Stdin's lines (:class:`StdinLines`) while fd 0 points at the null device (POSIX)."""
    import fcntl

    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield StdinLines(private)
    finally:
        os.dup2(private, 0)
        # the daemon thread may still be reading it: closing is left to the process's end
