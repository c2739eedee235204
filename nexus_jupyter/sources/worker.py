"""The worker process that loads and runs tool files for a source with ``isolation: process``
(``python -m nexus_jupyter.sources.worker``; the parent side is :mod:`.isolation`).

It reads requests from stdin and answers on stdout, one length-prefixed pickle each:

- ``("load", path, text, source)`` → ``("loaded", specs, error, line, names)``: the file is
  run as a module here (see :mod:`.loader`); ``specs`` describe its tools;
- ``("call", path, hash, name, arguments)`` → ``("ok", value)``, ``("error", kind, message)``,
  or ``("missing",)`` when this worker has not loaded that version of the file (it was
  restarted): the parent then sends the file and asks again.

Whatever a tool prints goes to stderr: stdout is the channel. A tool that ends the process,
loops or holds the GIL costs this worker only; the parent kills and replaces it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import pickle
import struct
import sys
from typing import IO, Any

__all__ = ["main", "read_message", "write_message"]

_HEADER = struct.Struct(">I")


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


def _spec_fields(tool: Any) -> dict[str, Any]:
    return {f.name: getattr(tool.spec, f.name) for f in dataclasses.fields(tool.spec)}


class _Worker:
    def __init__(self) -> None:
        self.files: dict[tuple[str, str], dict[str, Any]] = {}
        self.credentials: Any = None

    def load(self, path: str, text: str, source: str) -> tuple[Any, ...]:
        from .loader import load_tool_text

        result = load_tool_text(text, path, source=source)
        # one version per file: the newest replaces the ones before
        self.files = {k: v for k, v in self.files.items() if k[0] != path}
        self.files[(path, result.hash)] = {t.name: t for t in result.tools}
        specs = [_spec_fields(t) for t in result.tools]
        return ("loaded", specs, result.error, result.line, tuple(result.names))

    def call(self, path: str, digest: str, name: str, arguments: dict[str, Any]) -> tuple[Any, ...]:
        tools = self.files.get((path, digest))
        if tools is None or name not in tools:
            return ("missing",)
        tool = tools[name]
        kwargs = tool.validate(arguments)
        ctx = self._context(name) if tool.wants_context else None
        value = tool.invoke(kwargs, ctx)
        if inspect.isawaitable(value):
            value = asyncio.run(_awaited(value))
        return ("ok", value)

    def _context(self, name: str) -> Any:
        from ..core.policy.credentials import CredentialStore
        from ..core.tools.context import ToolContext

        if self.credentials is None:
            self.credentials = CredentialStore()
        return ToolContext(tool_name=name, credentials=self.credentials.view())


async def _awaited(value: Any) -> Any:
    return await value


def main() -> None:
    from ..core.policy.credentials import CredentialStore
    from ..core.policy.masking import MaskingStream

    channel_in, channel_out = sys.stdin.buffer, sys.stdout.buffer
    worker = _Worker()
    worker.credentials = CredentialStore()  # also masks this process's log records
    # prints of tools must not reach the channel, nor show stored secrets
    sys.stderr = MaskingStream(sys.stderr, worker.credentials.mask)
    sys.stdout = sys.stderr
    while (message := read_message(channel_in)) is not None:
        kind, *args = message
        try:
            answer = worker.load(*args) if kind == "load" else worker.call(*args)
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
