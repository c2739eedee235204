"""The plumbing under :class:`~nexus_jupyter.sources.mcp.McpSource`.

- :class:`StderrTail` keeps the last lines a stdio server wrote to stderr (for the status).
- :class:`WatchedTransport` wraps an SDK transport and sets an event when the server's stream
  ends, so a server that exits is noticed at once instead of at the next call; for a stdio
  server whose process exited it says so, with the exit code and its last stderr lines, and
  for one that closed its stdout but kept running, that (the SDK then stops it: the signal
  it ends by is ours, not what went wrong).
- :func:`tool_from_mcp` turns an MCP tool listing entry into a registry :class:`Tool`;
  :func:`result_from_mcp` turns a ``CallToolResult`` into a :class:`ToolResult` (a nexus
  server's refusal of the arguments into the :class:`ToolValidationError` it was there).

The ``mcp`` package is imported lazily by the callers: importing it costs over a second.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..core.errors import FieldError, ToolValidationError
from ..core.tools.result import ToolResult
from ..core.tools.tool import Tool

__all__ = [
    "ClosingTransport",
    "StderrTail",
    "WatchedTransport",
    "describe",
    "is_connection_error",
    "permission_from_annotations",
    "result_from_mcp",
    "tool_from_mcp",
    "without_retry_note",
]


class StderrTail:
    """A pipe whose write end becomes a server's stderr; a thread keeps its last lines.

    The SDK hands ``errlog`` to the subprocess as its stderr, so it must be a real file
    descriptor; reading it on a thread keeps a chatty server from blocking on a full pipe.
    """

    def __init__(self, max_lines: int = 40, on_line: Callable[[str], Any] | None = None) -> None:
        self.lines: deque[str] = deque(maxlen=max_lines)
        self.count = 0  # lines read so far, whatever the tail still holds
        self.last_read = 0.0  # time.monotonic() of the last line read
        self._on_line = on_line
        read_fd, write_fd = os.pipe()
        self.writer = os.fdopen(write_fd, "w", encoding="utf-8", errors="replace")
        self._reader = os.fdopen(read_fd, "r", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._pump, name="mcp-stderr", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            for line in self._reader:
                text = line.rstrip("\n")
                self.lines.append(text)
                self.count += 1
                self.last_read = time.monotonic()
                if self._on_line is not None:
                    self._on_line(text)
        except (OSError, ValueError):
            pass  # the pipe was closed under us: nothing more to read
        finally:
            self._reader.close()

    def tail(self, n: int | None = None) -> list[str]:
        lines = list(self.lines)
        return lines if n is None else lines[-n:]

    def since(self, count: int) -> list[str]:
        """The lines read after the first ``count`` (those the tail still holds)."""
        lines = list(self.lines)
        return lines[max(0, len(lines) - (self.count - count)) :]

    async def settle(self, quiet: float = 0.05, limit: float = 0.5) -> None:
        """Wait until no line came for ``quiet`` seconds (at least that, at most ``limit``):
        what a process wrote just before it exited is read by then."""
        for _ in range(max(1, round(limit / quiet))):
            await asyncio.sleep(quiet)
            if time.monotonic() - self.last_read >= quiet:
                return

    def close(self) -> None:
        """Close our write end; the reader thread ends once the server's copy closes too."""
        try:
            self.writer.close()
        except OSError:
            pass


class _WatchedReadStream:
    """A read stream that reports end-of-stream (the server exited or dropped)."""

    def __init__(self, inner: Any, ended: Callable[[], None]) -> None:
        self._inner = inner
        self._ended = ended
        self.last_context = None

    async def receive(self) -> Any:
        import anyio

        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended()
            raise
        self.last_context = getattr(self._inner, "last_context", None)
        return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class WatchedTransport:
    """An SDK transport (async context manager of ``(read, write)``) whose ``closed`` event
    is set when the server's side of the stream ends. ``stderr`` is the tail a stdio
    server writes to; :meth:`ended` then says how its process ended."""

    def __init__(self, inner: Any, stderr: StderrTail | None = None) -> None:
        self._inner = inner
        self._stderr = stderr
        self._stderr_mark = 0
        self.closed = asyncio.Event()
        self.end_of_stream = False  # the server's side ended (not our own close)
        self.process: Any = None  # a stdio server's process, once started
        #: its stream ended while its process still ran (the SDK stops it as we close)
        self.outlived_stream = False

    async def __aenter__(self) -> tuple[Any, Any]:
        self._stderr_mark = self._stderr.count if self._stderr is not None else 0
        read, write = await self._inner.__aenter__()
        self.process = _spawned_process(self._inner)
        return _WatchedReadStream(read, self._end_of_stream), write

    def _end_of_stream(self) -> None:
        self.end_of_stream = True
        self.closed.set()

    async def __aexit__(self, *exc: Any) -> bool | None:
        self.closed.set()
        try:
            if self.end_of_stream and self.process is not None:
                self.outlived_stream = await _still_running(self.process)
        finally:  # cancelled while looking: the server is still stopped
            result = await self._inner.__aexit__(*exc)
        return result

    async def ended(self, reason: str, lines: int = 3) -> str:
        """Why the session ended: ``reason``, unless the server's stream ended because its
        process exited; then that, with the exit code (or signal) and the last ``lines``
        lines it wrote to stderr. Said once per process."""
        process, self.process = self.process, None
        if process is None or not self.end_of_stream:
            return reason
        for _ in range(50):  # the SDK reaps it as the session closes: 1 s at most
            if process.returncode is not None:
                break
            await asyncio.sleep(0.02)
        code = process.returncode
        if code is None:
            return reason
        try:
            signal_name = signal.Signals(-code).name if code < 0 else ""
        except ValueError:
            signal_name = str(-code)
        closed = "the server closed its output (stdout) while its process kept running"
        if self.outlived_stream and -code in (signal.SIGTERM, signal.SIGKILL):
            # the SDK's stop after the stream ended (stdin closed, then SIGTERM, SIGKILL)
            text = f"{closed}, so the process was stopped ({signal_name})"
        elif self.outlived_stream and code >= 0:
            text = f"{closed}; stopped, it exited with code {code}"
        elif signal_name:
            text = f"the server process was ended by signal {signal_name}"
        else:
            text = f"the server process exited with code {code}"
        if self._stderr is not None:
            await self._stderr.settle()
            wrote = [line for line in self._stderr.since(self._stderr_mark) if line.strip()]
            if wrote:
                text += "; the last lines of its stderr: " + " | ".join(wrote[-lines:])
        return text


#: How long a process whose output ended is given to finish exiting before it counts as
#: still running: its descriptors close a moment before its exit can be seen.
EXIT_GRACE_S = 0.25


async def _still_running(process: Any, grace: float = EXIT_GRACE_S) -> bool:
    """Whether ``process`` (a child of ours) is still running ``grace`` seconds from now at
    the latest (``False`` as soon as it has exited). Its exit is looked at without reaping
    it: the event loop's child watcher does that, and sets ``returncode``."""
    for _ in range(max(1, round(grace / 0.01))):
        if _exited(process):
            return False
        await asyncio.sleep(0.01)
    return not _exited(process)


def _exited(process: Any) -> bool:
    if process.returncode is not None:
        return True
    waitid = getattr(os, "waitid", None)
    if waitid is None:  # no way to peek here: the returncode says it
        return False
    try:
        found = waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped already: it exited
        return True
    except OSError:
        return False
    return found is not None


def _spawned_process(transport: Any) -> Any:
    """The process a stdio transport started (``None`` for other transports).

    The SDK's ``stdio_client`` does not hand its process out: it is a local of that
    generator, which stays suspended inside the ``async with`` while the transport is open.
    It is looked up there, read-only, by its name (``process``, as the SDK calls it) and
    what it is (a ``pid`` and a ``returncode``); an SDK that keeps it elsewhere only means
    the exit code is not reported.
    """
    frame = getattr(getattr(transport, "gen", None), "ag_frame", None)
    value = frame.f_locals.get("process") if frame is not None else None
    if hasattr(value, "pid") and hasattr(value, "returncode"):
        return value
    return None


def permission_from_annotations(annotations: Mapping[str, Any] | None) -> str:
    """``readOnlyHint`` -> ``read_only``; ``destructiveHint`` -> ``danger_full_access``;
    anything else -> ``workspace_write`` (the MCP defaults assume a tool may write)."""
    ann = annotations or {}
    if ann.get("readOnlyHint") is True:
        return "read_only"
    if ann.get("destructiveHint") is True:
        return "danger_full_access"
    return "workspace_write"


_UNANNOTATED = "MCP default (the server does not say the tool is read-only or not destructive)"


def declares_harmless(annotations: Mapping[str, Any]) -> bool:
    """Whether an MCP server said its tool is read-only or not destructive. MCP's default
    for ``destructiveHint`` is true, so a tool without these hints asks for approval unless
    nex.yaml's approvals say otherwise (secure by default)."""
    return annotations.get("readOnlyHint") is True or annotations.get("destructiveHint") is False


def tool_from_mcp(
    remote: Any, handler: Callable[..., Awaitable[Any]], *, origin: str, timeout: float | None
) -> Tool:
    """A registry tool for one entry of an MCP server's ``tools/list`` answer.

    Raises :class:`~nexus_jupyter.core.errors.ToolDefinitionError` for a name or schema the
    registry cannot hold (the caller records it in the source status)."""
    annotations: dict[str, Any] = {}
    if remote.annotations is not None:
        annotations = remote.annotations.model_dump(by_alias=True, mode="json", exclude_none=True)
    schema = dict(remote.input_schema or {})
    schema.setdefault("type", "object")
    display: dict[str, Any] = {}
    if remote.title:
        display["title"] = remote.title
    if remote.icons:
        display["icons"] = [
            i.model_dump(by_alias=True, mode="json", exclude_none=True) for i in remote.icons
        ]
    approval = None
    if not declares_harmless(annotations):
        approval = {"action": "ask", "rules": [], "label": _UNANNOTATED}
    execution = getattr(remote, "execution", None)
    task_support = getattr(execution, "task_support", None) or "forbidden"
    return Tool.from_schema(
        remote.name,
        remote.description or (annotations.get("title") or ""),
        schema,
        handler,
        output_schema=remote.output_schema,
        annotations=annotations,
        display=display,
        task_support=task_support,
        permission=permission_from_annotations(annotations),
        approval=approval,
        origin=origin,
        timeout=timeout,
        validate=True,
    )


_NAMED_ERROR = re.compile(r"^([A-Za-z_][\w.]*): (.*)$", re.DOTALL)


def _traceback_block(meta: Mapping[str, Any]) -> bool:
    return bool(meta.get("nexus-jupyter/traceback") or meta.get("nexus_jupyter/traceback"))


def _said_error(result: Any) -> tuple[str, str] | None:
    """A nexus server's failed call: ``(class name, message)`` from the result's ``_meta``
    (``nexus-jupyter/error``), which its text words for an agent."""
    said = (getattr(result, "meta", None) or {}).get("nexus-jupyter/error")
    if not isinstance(said, Mapping):
        return None
    kind, message = said.get("type"), said.get("message")
    if not isinstance(kind, str) or not isinstance(message, str) or not kind:
        return None
    return kind, message


#: ``_meta`` key of a nexus server's refusal of a call's arguments: its field errors
#: (``FieldError.to_dict()`` each; :mod:`nexus_jupyter.serve.mcp_bridge`), in both spellings.
_FIELD_ERRORS_KEYS = ("nexus-jupyter/fieldErrors", "nexus_jupyter/fieldErrors")


def _refused_arguments(tool_name: str, result: Any) -> ToolValidationError | None:
    """A nexus server's refusal of the arguments (a live kernel's validator, which this
    registry's schema cannot express) as the :class:`ToolValidationError` it was there."""
    meta = getattr(result, "meta", None) or {}
    found = next((meta[k] for k in _FIELD_ERRORS_KEYS if isinstance(meta.get(k), list)), None)
    errors = []
    for said in found or ():
        if not isinstance(said, Mapping) or not isinstance(said.get("message"), str):
            continue
        loc = said.get("loc")
        parts = tuple(p for p in loc if isinstance(p, str | int)) if isinstance(loc, list) else ()
        errors.append(FieldError(parts, said["message"], said.get("value")))
    if not errors:
        return None
    return ToolValidationError(tool_name, errors, where_it_runs=True)


def result_from_mcp(tool_name: str, result: Any) -> ToolResult:
    """A :class:`ToolResult` for an MCP ``CallToolResult``. Raises the
    :class:`ToolValidationError` a nexus server answered with (its field errors in
    ``_meta``): the call was refused there, before the tool ran."""
    blocks = [b.model_dump(by_alias=True, mode="json", exclude_none=True) for b in result.content]
    if result.is_error:
        refused = _refused_arguments(tool_name, result)
        if refused is not None:
            raise refused
        # A nexus server sends the tool's traceback in a block of its own (mcp_bridge).
        # (``nexus_jupyter/traceback``: a nexus server of an earlier release)
        traces = [b for b in blocks if _traceback_block(b.get("_meta") or {})]
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text" and b not in traces]
        message = "\n".join(t for t in texts if t) or "the MCP server reported an error"
        error_type = "McpToolError"
        said = _said_error(result)
        named = _NAMED_ERROR.match(message) if traces and said is None else None
        if said is not None:  # a nexus server: the tool's own type and message
            error_type, message = said
        elif named:  # a nexus server of an earlier release wrote "ZeroDivisionError: ..."
            error_type, message = named.group(1), named.group(2)
        failed = ToolResult.from_parts(
            tool_name, content=blocks, error=message, error_type=error_type
        )
        failed.traceback = "\n".join(str(b.get("text", "")) for b in traces) or None
        return failed
    return ToolResult.from_parts(tool_name, content=blocks, structured=result.structured_content)


class ClosingTransport:
    """Enter an SDK transport and close the httpx client we gave it afterwards (and call
    ``release``, e.g. to free a sign-in callback port)."""

    def __init__(self, inner: Any, http: Any, release: Callable[[], Any] | None = None) -> None:
        self._inner, self._http, self._release = inner, http, release

    async def __aenter__(self) -> Any:
        return await self._inner.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self._inner.__aexit__(*exc)
        finally:
            await self._http.aclose()
            if self._release is not None:
                self._release()


def is_connection_error(exc: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        return exc.error.code == CONNECTION_CLOSED
    return isinstance(exc, ConnectionError | OSError) or type(exc).__module__.startswith("httpx")


def describe(exc: BaseException, connect_timeout: float = 60.0) -> str:
    """One line for an exception, unwrapping anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e, connect_timeout) for e in exc.exceptions)
    if isinstance(exc, TimeoutError):
        return f"no answer within {connect_timeout:g} s"
    if isinstance(exc, FileNotFoundError | PermissionError) and exc.filename:
        # starting a stdio server failed (its command, or the folder it runs in): say which
        problem = "was not found" if isinstance(exc, FileNotFoundError) else "cannot be run"
        return (
            f"{exc.filename!r} {problem} when starting the server: install it, or correct this "
            "server's command (or cwd) where it was added (nex.yaml's mcp.servers; or, for one "
            "added with `%tool mcp add`, remove it with `%tool mcp remove` and add it again)"
        )
    if isinstance(exc, KeyError | IndexError):  # their str() is just the bare key
        return f"{type(exc).__name__}: {exc!r}"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


#: How an MCP source's error ends while it tries again (:mod:`.mcp`): "; reconnecting" or
#: "; reconnecting in 0.25 s".
_RETRY_NOTE = re.compile(r"; reconnecting( in [0-9.]+ s)?$")


def without_retry_note(error: str) -> str:
    """A source's error without the note that it is trying again (for a face that says
    that in its own words, or exits before it would)."""
    return _RETRY_NOTE.sub("", error)
