"""The worker process that loads and runs tool files for a source with ``isolation: process``
(``python -m nexus_jupyter.sources.worker``; the parent side is :mod:`.isolation`).

It reads requests from stdin and answers on stdout, one length-prefixed pickle each:

- ``("load", path, text, source, version)`` → ``("loaded", specs, error, line, names,
  offers, helpers)``: the file is run as a module here (see :mod:`.loader`) and kept as
  ``version`` (each load is one: the same text may import an edited helper); ``specs``
  describe its tools (``(spec fields, @tool options, says_all, from_python)``: whether its
  JSON Schema says every check the tool makes, and whether it was derived from a Python
  function, whose objects then take the keys they list only), ``offers`` its
  ``@resource``/``@prompt`` functions and ``helpers`` the modules beside it that it imported;
- ``("call", path, hash, name, arguments, call)`` (``call``: a :class:`CallInfo`) →
  ``("ok", value)``, ``("error", kind, message[, traceback])`` (the traceback of the tool's
  own frames, when any raised), or ``("missing",)`` when this worker has not loaded that
  version of the file (it was restarted): the parent then sends the file and asks again;
- ``("read", path, hash, uri)`` / ``("render", path, hash, name, arguments, call)``: a
  resource's contents or a prompt's messages, answered like a call.
- ``("validate", path, hash, name, arguments)`` → ``("ok", [])``, or ``("ok", errors)`` with
  one ``(loc, message, value)`` per place the tool's own validator refuses (its pydantic
  model: what the tool's JSON Schema cannot say), answered like a call: the parent asks
  before a call is approved, for the tools whose schema does not say every check
  (``specs``' third item, ``False``).

While a call runs, the worker may send events before its answer: ``("progress", current,
total, message)``, ``("log", level, message, logger)`` and ``("summary", line)`` (the call's
one-line description, for tools whose ``summary=`` is a function: it runs here) with no
reply, and ``("ask", key, method, kwargs)`` (``elicit``, ``sample``, ``list_roots``,
``start_task`` of the calling client), to which the parent replies, whenever the client has
answered, ``("reply", key, True, value)`` or ``("reply", key, False, kind, message)``;
several questions of one call may be open at once. So a tool in a worker reports
progress, sees its caller's ``ctx.request`` and reaches the MCP client like a tool in the
server's own process.

A cancelled call is first asked to stop: the parent sends SIGINT, which cancels an async
tool's task (it sees ``CancelledError`` at its next ``await``), trips ``ctx.cancelled`` for a
sync tool that takes a context, and raises ``CancelledError`` in any other sync tool. The
parent kills the worker if the call has not ended within its grace period, and at once for
a timeout. SIGINT while no call runs is ignored.

Whatever a tool prints goes to stderr: stdout is the channel. A tool that ends the process,
loops or holds the GIL costs this worker only; the parent kills and replaces it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import itertools
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

from .worker_protocol import (
    SUMMARY_IN_WORKER,
    VERSIONS_KEPT,
    CallInfo,
    MessageBuffer,
    portable,
    remote_error,
    write_message,
)

__all__ = ["main"]


def _spec_fields(tool: Any) -> dict[str, Any]:
    return {f.name: getattr(tool.spec, f.name) for f in dataclasses.fields(tool.spec)}


def _meta_fields(tool: Any) -> dict[str, Any] | None:
    """The ``@tool`` options of ``tool`` that the parent acts on (summary, task, timeout...),
    as plain values; a summary function stays here (:data:`SUMMARY_IN_WORKER`)."""
    meta = tool.meta
    if meta is None:
        return None
    fields = {f.name: getattr(meta, f.name) for f in dataclasses.fields(meta)}
    if callable(fields.get("summary")):
        fields["summary"] = SUMMARY_IN_WORKER
    return fields


def _offer_fields(offer: Any) -> dict[str, Any]:
    """An offer without its functions (they stay here; the parent forwards reads)."""
    return {
        f.name: getattr(offer, f.name)
        for f in dataclasses.fields(offer)
        if f.name not in ("fn", "forward")
    }


class ParentPipe:
    """The pipes to the parent. The main thread reads the next request itself (no thread
    hop per call); while an async call runs, its event loop watches the pipe too and takes
    the replies to the questions the call asked (several may be open at once, such as an
    ``asyncio.gather`` of two ``ctx.elicit``). Writes are serialised: a tool's threads may
    log too. End of input means the parent went away, and the process ends."""

    def __init__(self, fd_in: int, channel_out: IO[bytes]) -> None:
        self.fd_in = fd_in
        self.channel_out = channel_out
        self._buffer = MessageBuffer()
        self._early: list[Any] = []  # requests that came while a call ran (not expected)
        self._write = threading.Lock()
        self._asks: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._keys = itertools.count(1)

    def _fill(self) -> None:
        data = os.read(self.fd_in, 1 << 16)
        if not data:
            os._exit(0)  # the parent went away: nothing waits for this process any more
        self._buffer.feed(data)

    def next_request(self) -> Any:
        """Wait for the parent's next request (replies to questions given up on are dropped)."""
        if self._early:
            return self._early.pop(0)
        while True:
            while (message := self._buffer.pop()) is not None:
                if message[0] != "reply":
                    return message
                self._answer(message[1], message[2:])
            self._fill()

    def watch(self, loop: asyncio.AbstractEventLoop) -> None:
        """Take the replies to a running call's questions on ``loop`` (until :meth:`unwatch`)."""
        loop.add_reader(self.fd_in, self._readable)

    def unwatch(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.remove_reader(self.fd_in)

    def _readable(self) -> None:
        self._fill()
        while (message := self._buffer.pop()) is not None:
            if message[0] == "reply":
                self._answer(message[1], message[2:])
            else:
                self._early.append(message)

    def send(self, event: tuple[Any, ...]) -> None:
        with self._write:
            write_message(self.channel_out, event)

    async def ask(self, method: str, **kwargs: Any) -> Any:
        """Ask the calling client through the parent; the reply arrives on the call's loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        key = next(self._keys)
        self._asks[key] = (loop, future)
        try:
            self.send(("ask", key, method, kwargs))
            reply = await future
        finally:
            self._asks.pop(key, None)
        if reply[0]:
            return reply[1]
        raise remote_error(reply[1], reply[2])

    def _answer(self, key: int, reply: tuple[Any, ...]) -> None:
        waiting = self._asks.get(key)
        if waiting is None:  # a question given up on (its call was cancelled)
            return
        loop, future = waiting
        with contextlib.suppress(RuntimeError):  # its loop has closed
            loop.call_soon_threadsafe(_settle_future, future, reply)


def _settle_future(future: asyncio.Future[Any], reply: tuple[Any, ...]) -> None:
    if not future.done():
        future.set_result(reply)


class _PipeChannel:
    """The calling client (a :class:`~nexus_jupyter.core.tools.channel.ClientChannel`), as a
    tool in this worker reaches it: through the parent, which holds the real one."""

    def __init__(self, parent: ParentPipe) -> None:
        self.parent = parent

    def log(self, level: str, message: str, logger: str) -> None:
        self.parent.send(("log", level, message, logger))

    async def elicit(self, message: str, schema: dict[str, Any], *, key: str | None = None) -> Any:
        return await self.parent.ask("elicit", message=message, schema=schema, key=key)

    async def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None,
        key: str | None = None,
    ) -> Any:
        return await self.parent.ask(
            "sample", messages=messages, max_tokens=max_tokens, system_prompt=system_prompt, key=key
        )

    async def list_roots(self, *, key: str | None = None) -> Any:
        return await self.parent.ask("list_roots", key=key)

    async def start_task(self) -> None:
        """``ctx.start_task()``: the client that runs this call as a task gets it now."""
        await self.parent.ask("start_task")


class RequestHandler:
    """Runs the requests of the parent: loads files, calls their tools, reads their
    resources and renders their prompts, keeping the last few versions of each file."""

    def __init__(self, parent: ParentPipe) -> None:
        self.parent = parent
        self.files: dict[tuple[str, str], dict[str, Any]] = {}
        self.offers: dict[tuple[str, str], tuple[Any, ...]] = {}
        self.credentials: Any = None
        self.running: _Running | None = None  # the call in progress, for SIGINT

    def interrupt(self, signum: int, frame: Any) -> None:
        """SIGINT from the parent: ask the call in progress to stop (see the module docs)."""
        running = self.running
        if running is not None:
            running.cancel()

    def load(self, path: str, text: str, source: str, version: str) -> tuple[Any, ...]:
        from .loader import load_tool_text

        result = load_tool_text(text, path, source=source)
        # the last few versions stay callable: calls that started before a save, and the
        # last good version while a broken one is shown, still reach their code
        for table in (self.files, self.offers):
            table.pop((path, version), None)  # a reload moves it to the newest place
            older = [k for k in table if k[0] == path][: -(VERSIONS_KEPT - 1)]
            for key in older:
                del table[key]
        self.files[(path, version)] = {t.name: t for t in result.tools}
        self.offers[(path, version)] = result.offers
        specs = [
            (_spec_fields(t), _meta_fields(t), t.checked_by_schema, t.schema_from_python)
            for t in result.tools
        ]
        offers = [(type(o).__name__, _offer_fields(o)) for o in result.offers]
        helpers = tuple(str(h) for h in result.helpers)
        names = tuple(result.names)
        return ("loaded", specs, result.error, result.line, names, offers, helpers)

    def call(
        self, path: str, version: str, name: str, arguments: dict[str, Any], call: CallInfo
    ) -> tuple[Any, ...]:
        tools = self.files.get((path, version))
        if tools is None or name not in tools:
            return ("missing",)
        tool = tools[name]
        summary = tool.meta.summary if tool.meta is not None else None
        if callable(summary):
            from ..core.tools.summary import describe_call, schema_defaults

            defaults = schema_defaults(tool.spec.input_schema)
            line = describe_call(name, summary, arguments, defaults=defaults)
            self.parent.send(("summary", line))
        kwargs = tool.validate(arguments)
        ctx = self._context(name, call) if tool.wants_context else None
        running = _Running(ctx, self.parent)
        self.running = running
        try:
            value = tool.invoke(kwargs, ctx)
            if inspect.isawaitable(value):
                value = running.run(value)
        finally:
            self.running = None
        return ("ok", portable(value))

    def validate(
        self, path: str, version: str, name: str, arguments: dict[str, Any]
    ) -> tuple[Any, ...]:
        """The tool's own verdict on ``arguments``, without running it (see the module docs)."""
        from ..core.errors import ToolValidationError

        tools = self.files.get((path, version))
        if tools is None or name not in tools:
            return ("missing",)
        try:
            tools[name].validate(arguments)
        except ToolValidationError as exc:
            return ("ok", [(list(e.loc), e.message, _plain(e.value)) for e in exc.errors])
        return ("ok", [])

    def read(self, path: str, version: str, uri: str) -> tuple[Any, ...]:
        from ..core.tools.offers import ResourceDef

        for offer in self.offers.get((path, version), ()):
            if isinstance(offer, ResourceDef) and offer.match(uri) is not None:
                return ("ok", asyncio.run(offer.read(uri)))
        return ("missing",)

    def render(
        self, path: str, version: str, name: str, arguments: dict[str, str], call: CallInfo
    ) -> tuple[Any, ...]:
        from ..core.tools.channel import CURRENT_CHANNEL
        from ..core.tools.offers import PromptDef

        for offer in self.offers.get((path, version), ()):
            if isinstance(offer, PromptDef) and offer.name == name:
                # a prompt that takes a ToolContext may ask the client, as a tool does
                token = CURRENT_CHANNEL.set(_PipeChannel(self.parent) if call.channel else None)
                running = _Running(None, self.parent)
                self.running = running
                try:
                    return ("ok", running.run(offer.render(arguments)))
                finally:
                    self.running = None
                    CURRENT_CHANNEL.reset(token)
        return ("missing",)

    def _context(self, name: str, call: CallInfo) -> Any:
        from ..core.policy.credentials import CredentialStore
        from ..core.tools.channel import CURRENT_CHANNEL
        from ..core.tools.context import RequestInfo, ToolContext

        if self.credentials is None:
            self.credentials = CredentialStore()
        request = RequestInfo(*call.request) if call.request is not None else None
        token = CURRENT_CHANNEL.set(_PipeChannel(self.parent) if call.channel else None)
        try:  # the context picks the channel up when it is made
            return ToolContext(
                tool_name=name,
                credentials=self.credentials.view(),
                request=request,
                progress=self._progress if call.progress else None,
            )
        finally:
            CURRENT_CHANNEL.reset(token)

    def _progress(self, current: float, total: float | None, message: str | None) -> None:
        self.parent.send(("progress", current, total, message))


class _Running:
    """The call in progress: how a cancel (SIGINT) reaches it."""

    def __init__(self, ctx: Any, parent: ParentPipe) -> None:
        self.ctx = ctx
        self.parent = parent
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Future[Any] | None = None

    def run(self, awaitable: Any) -> Any:
        """Run an async tool's awaitable on a fresh loop whose task a cancel can reach, and
        which takes the replies to the questions it asks the client."""
        loop = asyncio.new_event_loop()
        self.loop = loop
        self.parent.watch(loop)
        try:
            self.task = loop.create_task(_awaited(awaitable))
            return loop.run_until_complete(self.task)
        finally:
            try:
                self.parent.unwatch(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                self.loop = None
                loop.close()

    def cancel(self) -> None:
        """Runs in the signal handler (the main thread, between two bytecodes)."""
        ctx = self.ctx
        if ctx is not None:  # the token takes a lock the interrupted code may hold
            threading.Thread(target=ctx.cancellation.cancel, daemon=True).start()
        loop, task = self.loop, self.task
        if loop is not None and task is not None:
            loop.call_soon_threadsafe(task.cancel)
        elif ctx is None:  # a sync tool that cannot see a token: stop it where it is
            raise asyncio.CancelledError("the call was cancelled")


def _plain(value: Any) -> Any:
    """A refused value as plain data the parent decodes (its ``repr`` if it is no such)."""
    try:
        return portable(value)
    except Exception:
        return repr(value)


async def _awaited(value: Any) -> Any:
    return await value


def _die_with_parent(parent_pid: int) -> None:
    """Ask Linux to kill this process when the thread that started it ends (the parent's
    spawner thread, which lives as long as the parent), and end now if the parent already
    has: a worker must never outlive its server, even one stuck in a C call that holds the
    GIL or a sync tool that never returns. Elsewhere, end of input ends it between calls."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(0)


def _own_pipes() -> tuple[int, IO[bytes]]:
    """The pipes to the parent, moved off fds 0 and 1 to descriptors that processes the
    tools start do not inherit: fd 0 becomes /dev/null (``input()`` and a child that reads
    its stdin get nothing, never the parent's messages) and fd 1 the stderr (what a child
    prints cannot corrupt the channel). A child then does not keep the pipe open either,
    so the parent sees this worker end when it is killed."""
    channel_in, channel_out = os.dup(0), os.dup(1)  # non-inheritable (PEP 446)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as long as fd 0
    return channel_in, os.fdopen(
        channel_out, "wb"
    )  # buffered: a write interrupted by a signal is resumed


def main() -> None:
    from ..core.policy.credentials import CredentialStore
    from ..core.policy.masking import MaskingStream
    from ..core.tools.tool_traceback import format_tool_traceback, has_tool_frames
    from . import loader  # noqa: F401 - imported before the first request, not during it

    if len(sys.argv) > 1:
        _die_with_parent(int(sys.argv[1]))
    parent = ParentPipe(*_own_pipes())
    worker = RequestHandler(parent)
    worker.credentials = CredentialStore()  # also masks this process's log records
    signal.signal(signal.SIGINT, worker.interrupt)
    # prints of tools must not reach the channel, nor show stored secrets
    sys.stderr = MaskingStream(sys.stderr, worker.credentials.mask)
    sys.stdout = sys.stderr
    handlers: dict[str, Callable[..., tuple[Any, ...]]] = {
        "load": worker.load,
        "call": worker.call,
        "read": worker.read,
        "render": worker.render,
        "validate": worker.validate,
    }
    while True:
        kind, *args = parent.next_request()
        try:
            answer = handlers[kind](*args)
        except BaseException as exc:  # the tool's failure is the answer, not the worker's end
            answer = ("error", type(exc).__name__, str(exc) or type(exc).__name__)
            if has_tool_frames(exc):  # the tool's own frames: the parent's would be ours
                answer += (format_tool_traceback(exc),)
        try:
            parent.send(answer)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            parent.send(
                ("error", "TypeError", f"the result cannot be sent back to the server: {exc}")
            )


if __name__ == "__main__":
    main()
