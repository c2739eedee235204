"""The messages between a server and its worker processes (:mod:`.worker`, :mod:`.isolation`).

Each message is a length-prefixed pickle. The server trusts what it sends; what a worker
sends is decoded with :func:`decode_from_worker`, which builds only plain data (the
containers and scalars pickle knows without a lookup) and the few classes of
:data:`WORKER_CLASSES`: a tool that returned an object whose unpickling runs code would
otherwise run that code in the server. So a worker turns a tool's value into plain data
before it answers (:func:`portable`).

>>> buffer = MessageBuffer()
>>> buffer.feed(encode(("ok", {"a": [1, 2]})))
>>> buffer.pop()
('ok', {'a': [1, 2]})
"""

from __future__ import annotations

import io
import pickle
import struct
from dataclasses import dataclass
from typing import IO, Any

__all__ = [
    "SUMMARY_IN_WORKER",
    "VERSIONS_KEPT",
    "WORKER_CLASSES",
    "CallInfo",
    "MessageBuffer",
    "UnreadableMessage",
    "decode_from_worker",
    "encode",
    "portable",
    "remote_error",
    "write_message",
]

_HEADER = struct.Struct(">I")
#: Versions of one file a worker (and its parent) keep loaded.
VERSIONS_KEPT = 3
#: What ``meta["summary"]`` says when the tool's summary is a function: it stays in the
#: worker, which sends the line of each call (a ``("summary", line)`` event).
SUMMARY_IN_WORKER = "<function in the worker>"
#: The only classes a worker's message may name: content a tool returns (images, audio,
#: resources, links) and a prompt's arguments.
WORKER_CLASSES = frozenset(
    {
        ("nexus_jupyter.core.tools.content", "Image"),
        ("nexus_jupyter.core.tools.content", "Audio"),
        ("nexus_jupyter.core.tools.content", "EmbeddedResource"),
        ("nexus_jupyter.core.tools.content", "ResourceLink"),
        ("nexus_jupyter.core.tools.offers", "PromptArgument"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "bytearray"),
    }
)


class UnreadableMessage(Exception):
    """A worker sent something the server will not decode (a class it does not allow, or
    bytes that are not a message)."""


class _WorkerUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in WORKER_CLASSES:
            raise UnreadableMessage(f"a worker's message names {module}.{name}, which is refused")
        return super().find_class(module, name)


def decode_from_worker(body: bytes) -> Any:
    """A worker's message: plain data and :data:`WORKER_CLASSES` only."""
    try:
        return _WorkerUnpickler(io.BytesIO(body)).load()
    except UnreadableMessage:
        raise
    except Exception as exc:
        raise UnreadableMessage(f"a worker sent bytes that are not a message ({exc})") from None


def encode(message: Any) -> bytes:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


def write_message(stream: IO[bytes], message: Any) -> None:
    stream.write(encode(message))
    stream.flush()


class MessageBuffer:
    """Bytes read from a pipe (``os.read``, whole or in pieces), cut into messages; the
    server's buffers decode with :func:`decode_from_worker` (``from_worker=True``)."""

    def __init__(self, *, from_worker: bool = False) -> None:
        self._data = bytearray()
        self._decode = decode_from_worker if from_worker else pickle.loads

    def feed(self, data: bytes) -> None:
        self._data += data

    def pop(self) -> Any:
        """The next whole message, or ``None`` until more bytes come. A message that cannot
        be decoded is dropped and raises :class:`UnreadableMessage` (the rest stays)."""
        data = self._data
        if len(data) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(data)
        end = _HEADER.size + size
        if len(data) < end:
            return None
        body = bytes(data[_HEADER.size : end])
        del data[:end]
        return self._decode(body)


def portable(value: Any) -> Any:
    """``value`` as a worker sends it: content (images, audio, resources, links, and lists
    of them with text) as is, anything else as plain JSON data, as its structured result
    would be (a pydantic model or a dataclass of the tool's own becomes a dict)."""
    from ..core.tools.content import content_blocks
    from ..core.tools.result import ToolResult, to_structured

    if isinstance(value, ToolResult):
        value = value.value
    if value is None or isinstance(value, str | int | float | bool | bytes):
        return value
    if content_blocks(value) is not None:
        return value
    return to_structured(value)


@dataclass(frozen=True)
class CallInfo:
    """What the worker needs to know of a call besides its arguments: who made it (the
    fields of its :class:`~nexus_jupyter.core.tools.context.RequestInfo`), whether its
    caller can be reached (an MCP client) and whether it reports progress."""

    request: tuple[Any, ...] | None = None  # request_id, principal, session_id, client, caller
    channel: bool = False
    progress: bool = False


_REMOTE_KINDS: dict[str, type[Exception]] = {}


def remote_error(kind: str, message: str, traceback: str | None = None) -> Exception:
    """The exception a message from the other side of the pipe stands for: the project's
    own kinds that callers act on (an input-required round, a caller that cannot answer)
    as themselves, any other as a class named like the original (``ValueError``...), so
    results and the audit log show the kind that was raised. ``traceback``: the tool's
    own frames as formatted over there, which its result shows instead of ours here."""
    from ..core.tools.channel import CallerUnavailable, InputRequired
    from ..core.tools.tool_traceback import TOLD_TRACEBACK

    known: dict[str, type[Exception]] = {
        "InputRequired": InputRequired,
        "CallerUnavailable": CallerUnavailable,
    }
    cls = known.get(kind) or _REMOTE_KINDS.get(kind)
    if cls is None:
        cls = _REMOTE_KINDS.setdefault(kind, type(kind, (Exception,), {"__module__": __name__}))
    error = cls(message)
    if traceback:
        setattr(error, TOLD_TRACEBACK, traceback)
    return error
