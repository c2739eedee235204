"""The MCP client's messages on this process's stdin, read on a daemon thread.

The SDK's ``stdio_server`` reads stdin with ``anyio.wrap_file``: each line is a blocking
read on one of anyio's worker threads, which Python joins at exit. While the client keeps
stdin open, a server told to stop (SIGTERM) then waits for a line that never comes
(``serve`` was ended by its 3.5 s timer, exit code 1). :func:`claimed_stdin` reads on a
daemon thread instead, which nothing waits for; like the SDK's own claim, it points fd 0
at the null device while serving (a tool or a child process reading stdin gets EOF, not
the protocol) and puts it back after.

A line that is not a JSON-RPC message gets its error answer here (the SDK's reader drops
it, leaving the client waiting): ``-32700`` for a line that is not JSON, ``-32600`` for JSON
that is not a JSON-RPC 2.0 message (with its ``id`` when it has one), each saying what was
wrong; serving goes on. Blank lines are skipped. A line is parsed once, by the SDK's reader,
which hands the server one item per line, in order: a message, or the exception a line that
failed raised. :meth:`StdinLines.answering` wraps what the server reads, and only for such
an exception looks at its line again (:func:`malformed`) to word the answer.

The end of input is passed on only once every request read before it was answered or
cancelled (or :data:`EOF_ANSWER_WAIT_S` went by, longer when ``serve`` lets the first
``tools/list`` wait longer for its MCP servers): ``printf '...' | nexus-tools serve`` gets
an answer to each of its requests, not "Connection closed", and a client that closes stdin
right after its last request still reads the answer on stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import Counter, deque
from collections.abc import Iterator
from typing import Any, Self

__all__ = [
    "EOF_ANSWER_WAIT_S",
    "AnsweredReads",
    "StdinLines",
    "TrackedWrites",
    "claimed_stdin",
    "malformed",
]

#: How long the end of input waits for the answers to the requests read before it.
EOF_ANSWER_WAIT_S = 3.0

#: How a client's line is to be sent, said when one is not JSON.
_HOW = "Send each JSON-RPC 2.0 message as one line of JSON (UTF-8, no newline inside it)."


def malformed(line: str) -> Any:
    """The JSON-RPC error answer (a ``JSONRPCError``) for a line that is not a JSON-RPC
    message, ``None`` for one that is."""
    import mcp_types as types
    import pydantic_core
    from pydantic import ValidationError

    try:
        message = pydantic_core.from_json(line)
    except ValueError as exc:
        return _error(types.PARSE_ERROR, f"Parse error: the line is not JSON ({exc}). {_HOW}")
    try:
        types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError:
        pass
    else:
        return None
    request_id = message.get("id") if isinstance(message, dict) else None
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    return _error(
        types.INVALID_REQUEST,
        f"Invalid Request: the line is JSON but not a JSON-RPC 2.0 message: {_wrong(message)}. "
        'A request looks like {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}.',
        request_id,
    )


def _wrong(message: Any) -> str:
    """What keeps ``message`` (valid JSON) from being a JSON-RPC message."""
    if not isinstance(message, dict):
        return "a message is a JSON object (batches are not part of MCP)"
    if message.get("jsonrpc") != "2.0":
        return 'its "jsonrpc" must be "2.0"'
    if "method" in message:
        if not isinstance(message["method"], str):
            return '"method" must be a string'
        if "params" in message and not isinstance(message["params"], dict):
            return '"params" must be a JSON object'
        if "id" in message and not isinstance(message["id"], int | str):
            return '"id" must be a string or an integer'
        return "a field has the wrong type"
    return (
        'it needs "method" (a request or notification), or "id" with "result" or "error" '
        "(a response)"
    )


def _error(code: int, text: str, request_id: Any = None) -> Any:
    import mcp_types as types

    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=text)
    )


class StdinLines:
    """Lines of a file descriptor as an async iterator (what ``stdio_server(stdin=...)``
    iterates), read on a daemon thread and handed to the event loop that iterates."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: asyncio.Queue[str | None] | None = None
        self._thread: threading.Thread | None = None
        #: the lines handed on whose item the server has not read yet: kept from the first
        #: line, which the SDK's reader may take before :meth:`answering` is called
        self._handed: deque[str] = deque()

    def answering(
        self, read_stream: Any, write_stream: Any, *, eof_wait: float = EOF_ANSWER_WAIT_S
    ) -> tuple[AnsweredReads, TrackedWrites]:
        """``read_stream`` and ``write_stream`` (the SDK transport's, fed from and writing
        to stdio) as the server is to use them: a malformed line is answered on
        ``write_stream`` instead of passed on, and the end of input waits for the answers to
        the requests read before it, for at most ``eof_wait`` s (see the module docstring)."""
        writes = TrackedWrites(write_stream)
        reads = AnsweredReads(read_stream, write_stream, self._handed, writes, eof_wait)
        return reads, writes

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
        while True:
            line = await self._queue.get()
            if line is None:
                self._queue.put_nowait(None)  # another read also ends
                raise StopAsyncIteration
            if not line.strip():
                continue
            self._handed.append(line)
            return line


class _Wrapped:
    """A stream wrapped around the SDK's (``_inner``): closing, and ``async with``, are its."""

    _inner: Any

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class AnsweredReads(_Wrapped):
    """The server's read stream over :class:`StdinLines`: the SDK's items, less those of
    malformed lines, which get their JSON-RPC error answer (see the module's docstring)."""

    def __init__(
        self,
        inner: Any,
        answers: Any,
        handed: deque[str],
        writes: TrackedWrites | None = None,
        eof_wait: float = EOF_ANSWER_WAIT_S,
    ) -> None:
        self._inner = inner
        self._answers = answers
        self._handed = handed
        self._writes = writes
        self._eof_wait = eof_wait

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item (the SDK's dispatcher reads it)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        import anyio

        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                if self._writes is not None:
                    await self._writes.all_answered(self._eof_wait)
                raise
            line = self._handed.popleft() if self._handed else None
            if not isinstance(item, Exception):
                if self._writes is not None:
                    self._writes.asked(item)
                return item
            if line is None:
                return item
            error = malformed(line)
            if error is None:  # the SDK refused what we cannot name: it logs it
                return item
            from mcp.shared.message import SessionMessage

            await self._answers.send(SessionMessage(error))

    def __aiter__(self) -> AnsweredReads:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


class TrackedWrites(_Wrapped):
    """The server's write stream, noting which of the requests read were answered (a
    request its client cancelled is never answered: it no longer counts)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._open: Counter[Any] = Counter()  # ids of requests read and not answered yet
        self._changed = asyncio.Event()

    def asked(self, item: Any) -> None:
        """``item`` is a message the server is about to read: a request to answer, or the
        cancel of one."""
        import mcp_types
        from mcp.shared.dispatcher import coerce_request_id
        from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params

        message = getattr(item, "message", None)
        if isinstance(message, mcp_types.JSONRPCRequest):
            self._open[coerce_request_id(message.id)] += 1
        elif (
            isinstance(message, mcp_types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
        ):
            cancelled = cancelled_request_id_from_params(message.params)
            if cancelled is not None:
                self._settled(coerce_request_id(cancelled))

    def _settled(self, request_id: Any) -> None:
        if self._open[request_id] > 1:
            self._open[request_id] -= 1
        else:
            self._open.pop(request_id, None)
        self._changed.set()

    async def all_answered(self, timeout: float) -> None:
        """Return once every request read was answered, or after ``timeout`` s."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._open and loop.time() < deadline:
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), deadline - loop.time())

    async def send(self, item: Any) -> None:
        import mcp_types
        from mcp.shared.dispatcher import coerce_request_id

        message = getattr(item, "message", None)
        await self._inner.send(item)
        if not isinstance(message, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
            return
        if message.id is not None:  # (an error answered to a line with no id)
            self._settled(coerce_request_id(message.id))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


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
