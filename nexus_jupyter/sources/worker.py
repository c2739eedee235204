"""The worker process that loads and runs tool files for a source with ``isolation: process``
(``python -m nexus_jupyter.sources.worker``; the parent side is :mod:`.isolation`).

It reads requests from stdin and answers on stdout, one length-prefixed pickle each:

- ``("load", path, text, source)`` → ``("loaded", specs, error, line, names, offers)``: the
  file is run as a module here (see :mod:`.loader`); ``specs`` describe its tools and
  ``offers`` its ``@resource``/``@prompt`` functions;
- ``("call", path, hash, name, arguments, call)`` (``call``: a :class:`CallInfo`) →
  ``("ok", value)``, ``("error", kind, message)``, or ``("missing",)`` when this worker has
  not loaded that version of the file (it was restarted): the parent then sends the file
  and asks again;
- ``("read", path, hash, uri)`` / ``("render", path, hash, name, arguments)``: a resource's
  contents or a prompt's messages, answered like a call.

While a call runs, the worker may send events before its answer: ``("progress", current,
total, message)`` and ``("log", level, message, logger)`` (no reply), and ``("ask", method,
kwargs)`` (``elicit``, ``sample``, ``list_roots`` of the calling client), to which the parent
replies ``("reply", True, value)`` or ``("reply", False, kind, message)``. So a tool in a
worker reports progress, sees its caller's ``ctx.request`` and reaches the MCP client like a
tool in the server's own process.

Whatever a tool prints goes to stderr: stdout is the channel. A tool that ends the process,
loops or holds the GIL costs this worker only; the parent kills and replaces it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import pickle
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["VERSIONS_KEPT", "CallInfo", "main", "read_message", "remote_error", "write_message"]

_HEADER = struct.Struct(">I")
#: Versions of one file a worker (and its parent) keep loaded.
VERSIONS_KEPT = 3


def read_message(stream: IO[bytes]) -> Any:
    """The next message, or ``None`` at end of stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        return None
    return pickle.loads(body)


def write_message(stream: IO[bytes], message: Any) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(body)) + body)
    stream.flush()


@dataclass(frozen=True)
class CallInfo:
    """What the worker needs to know of a call besides its arguments: who made it (the
    fields of its :class:`~nexus_jupyter.core.tools.context.RequestInfo`), whether its
    caller can be reached (an MCP client) and whether it reports progress."""

    request: tuple[Any, ...] | None = None  # request_id, principal, session_id, client, caller
    channel: bool = False
    progress: bool = False


_REMOTE_KINDS: dict[str, type[Exception]] = {}


def remote_error(kind: str, message: str) -> Exception:
    """The exception a message from the other side of the pipe stands for: the project's
    own kinds that callers act on (an input-required round, a caller that cannot answer)
    as themselves, any other as a class named like the original (``ValueError``...), so
    results and the audit log show the kind that was raised."""
    from ..core.tools.channel import CallerUnavailable, InputRequired

    known: dict[str, type[Exception]] = {
        "InputRequired": InputRequired,
        "CallerUnavailable": CallerUnavailable,
    }
    cls = known.get(kind) or _REMOTE_KINDS.get(kind)
    if cls is None:
        cls = _REMOTE_KINDS.setdefault(kind, type(kind, (Exception,), {"__module__": __name__}))
    return cls(message)


def _spec_fields(tool: Any) -> dict[str, Any]:
    return {f.name: getattr(tool.spec, f.name) for f in dataclasses.fields(tool.spec)}


def _offer_fields(offer: Any) -> dict[str, Any]:
    """An offer without its functions (they stay here; the parent forwards reads)."""
    return {
        f.name: getattr(offer, f.name)
        for f in dataclasses.fields(offer)
        if f.name not in ("fn", "forward")
    }


class _Parent:
    """The pipe to the parent, for the events a running call sends (see the module docs)."""

    def __init__(self, channel_in: IO[bytes], channel_out: IO[bytes]) -> None:
        self.channel_in = channel_in
        self.channel_out = channel_out

    def send(self, event: tuple[Any, ...]) -> None:
        write_message(self.channel_out, event)

    def ask(self, method: str, **kwargs: Any) -> Any:
        self.send(("ask", method, kwargs))
        reply = read_message(self.channel_in)
        if reply is None:  # the parent went away: nothing is waiting for this call
            os._exit(0)
        if reply[1]:
            return reply[2]
        raise remote_error(reply[2], reply[3])


class _PipeChannel:
    """The calling client (a :class:`~nexus_jupyter.core.tools.channel.ClientChannel`), as a
    tool in this worker reaches it: through the parent, which holds the real one."""

    def __init__(self, parent: _Parent) -> None:
        self.parent = parent

    def log(self, level: str, message: str, logger: str) -> None:
        self.parent.send(("log", level, message, logger))

    async def elicit(self, message: str, schema: dict[str, Any], *, key: str | None = None) -> Any:
        return self.parent.ask("elicit", message=message, schema=schema, key=key)

    async def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None,
        key: str | None = None,
    ) -> Any:
        return self.parent.ask(
            "sample", messages=messages, max_tokens=max_tokens, system_prompt=system_prompt, key=key
        )

    async def list_roots(self, *, key: str | None = None) -> Any:
        return self.parent.ask("list_roots", key=key)


class _Worker:
    def __init__(self, parent: _Parent) -> None:
        self.parent = parent
        self.files: dict[tuple[str, str], dict[str, Any]] = {}
        self.offers: dict[tuple[str, str], tuple[Any, ...]] = {}
        self.credentials: Any = None

    def load(self, path: str, text: str, source: str) -> tuple[Any, ...]:
        from .loader import load_tool_text

        result = load_tool_text(text, path, source=source)
        # the last few versions stay callable: calls that started before a save, and the
        # last good version while a broken one is shown, still reach their code
        for table in (self.files, self.offers):
            table.pop((path, result.hash), None)  # a reload moves it to the newest place
            older = [k for k in table if k[0] == path][: -(VERSIONS_KEPT - 1)]
            for key in older:
                del table[key]
        self.files[(path, result.hash)] = {t.name: t for t in result.tools}
        self.offers[(path, result.hash)] = result.offers
        specs = [_spec_fields(t) for t in result.tools]
        offers = [(type(o).__name__, _offer_fields(o)) for o in result.offers]
        return ("loaded", specs, result.error, result.line, tuple(result.names), offers)

    def call(
        self, path: str, digest: str, name: str, arguments: dict[str, Any], call: CallInfo
    ) -> tuple[Any, ...]:
        tools = self.files.get((path, digest))
        if tools is None or name not in tools:
            return ("missing",)
        tool = tools[name]
        kwargs = tool.validate(arguments)
        ctx = self._context(name, call) if tool.wants_context else None
        value = tool.invoke(kwargs, ctx)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
        return ("ok", value)

    def read(self, path: str, digest: str, uri: str) -> tuple[Any, ...]:
        from ..core.tools.offers import ResourceDef

        for offer in self.offers.get((path, digest), ()):
            if isinstance(offer, ResourceDef) and offer.match(uri) is not None:
                return ("ok", asyncio.run(offer.read(uri)))
        return ("missing",)

    def render(
        self, path: str, digest: str, name: str, arguments: dict[str, str]
    ) -> tuple[Any, ...]:
        from ..core.tools.offers import PromptDef

        for offer in self.offers.get((path, digest), ()):
            if isinstance(offer, PromptDef) and offer.name == name:
                return ("ok", asyncio.run(offer.render(arguments)))
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


async def _awaited(value: Any) -> Any:
    return await value


def main() -> None:
    from ..core.policy.credentials import CredentialStore
    from ..core.policy.masking import MaskingStream

    channel_in, channel_out = sys.stdin.buffer, sys.stdout.buffer
    worker = _Worker(_Parent(channel_in, channel_out))
    worker.credentials = CredentialStore()  # also masks this process's log records
    # prints of tools must not reach the channel, nor show stored secrets
    sys.stderr = MaskingStream(sys.stderr, worker.credentials.mask)
    sys.stdout = sys.stderr
    handlers: dict[str, Callable[..., tuple[Any, ...]]] = {
        "load": worker.load,
        "call": worker.call,
        "read": worker.read,
        "render": worker.render,
    }
    while (message := read_message(channel_in)) is not None:
        kind, *args = message
        try:
            answer = handlers[kind](*args)
        except BaseException as exc:  # the tool's failure is the answer, not the worker's end
            answer = ("error", type(exc).__name__, str(exc) or type(exc).__name__)
        try:
            write_message(channel_out, answer)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            write_message(
                channel_out,
                ("error", "TypeError", f"the result cannot be sent back to the server: {exc}"),
            )


if __name__ == "__main__":
    main()
