"""Tool files run in worker processes (``isolation: process`` in nex.yaml).

In-process, a tool file can end its host (``os._exit`` at import), spin at import on every
save, or hold the GIL in a call so the whole server stops answering. With a
:class:`ProcessIsolation`, a folder's files are loaded and their calls run in
:data:`WORKERS` worker processes (:mod:`.worker`); the registry holds proxy tools with the
same specs. A worker that dies, or is killed because a call timed out or was cancelled, or
an import overran its limit, is replaced by a fresh one on the next request; the worker
reloads the files it needs from the texts kept here.

>>> isolation = ProcessIsolation("directory:demo")     # doctest: +SKIP
>>> result = isolation.load(text, path)                # a LoadResult of proxy tools
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from ..core.errors import ToolUnavailable
from ..core.registry.pools import WorkerPool
from ..core.tools.tool import Tool
from .loader import LoadResult, content_hash
from .worker import read_message, write_message

__all__ = ["WORKERS", "ProcessIsolation"]

#: Worker processes per source (each runs one request at a time).
WORKERS = 2


class _Worker:
    """One worker process and its pipes; used by one thread at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nexus_jupyter.sources.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,  # what tools print and log shows with the server's own stderr
        )
        self.broken = False  # its channel failed: never reused

    @property
    def alive(self) -> bool:
        return not self.broken and self.proc.poll() is None

    def request(self, message: Any) -> Any:
        """Send ``message`` and wait for the answer; ``None`` when the worker ended."""
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        try:
            write_message(self.proc.stdin, message)
            answer = read_message(self.proc.stdout)
        except (BrokenPipeError, OSError, ValueError):  # ValueError: the pipe was closed
            answer = None
        if answer is None:
            self.broken = True
        return answer

    def kill(self) -> None:
        self.broken = True
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class ProcessIsolation:
    """The worker processes of one source: loads files into them, runs calls in them."""

    def __init__(self, source: str, *, workers: int = WORKERS) -> None:
        self.source = source
        self._idle: list[_Worker] = []
        self._slots = threading.BoundedSemaphore(workers)
        self._lock = threading.Lock()
        self._texts: dict[tuple[str, str], str] = {}  # (path, hash) -> text, for restarts
        self._pool = WorkerPool(f"{source} (process workers)", max_running=workers * 4)
        self.restarts = 0
        self._closed = False

    # -- workers --------------------------------------------------------------------------

    def _take(self) -> _Worker:
        self._slots.acquire()
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                worker.kill()
        try:
            return _Worker()
        except BaseException:
            self._slots.release()
            raise

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            if worker.alive and not self._closed:
                self._idle.append(worker)
            else:
                self.restarts += 1
                worker.kill()
        self._slots.release()

    def close(self) -> None:
        """Stop every idle worker (busy ones end with their call)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()

    # -- loading --------------------------------------------------------------------------

    def load(
        self, text: str, path: str | Path, *, source: str = "", timeout: float | None = None
    ) -> LoadResult:
        """Load ``text`` (file ``path``) in a worker; a :class:`LoadResult` of proxy tools.
        An import that overruns ``timeout`` or ends the worker is an error, never a hang."""
        path = Path(path)
        digest = content_hash(text)
        worker = self._take()
        timer = threading.Timer(timeout, worker.kill) if timeout else None
        try:
            if timer is not None:
                timer.daemon = True
                timer.start()
            answer = worker.request(("load", str(path), text, source or self.source))
        finally:
            if timer is not None:
                timer.cancel()
            self._give_back(worker)
        if answer is None:
            code = worker.proc.returncode
            error = (
                f"importing it did not finish within {timeout:g} s; its worker was stopped"
                if code is not None and code < 0 and timeout
                else f"importing it ended its worker process (exit code {code})"
            )
            return LoadResult(path, text, digest, error=error)
        if answer[0] == "error":
            return LoadResult(path, text, digest, error=f"{answer[1]}: {answer[2]}")
        _, specs, error, line, names = answer
        self._texts = {k: v for k, v in self._texts.items() if k[0] != str(path)}
        self._texts[(str(path), digest)] = text
        tools = tuple(self._proxy(str(path), digest, fields) for fields in specs)
        return LoadResult(path, text, digest, tools=tools, error=error, line=line, names=names)

    def _proxy(self, path: str, digest: str, fields: dict[str, Any]) -> Tool:
        name = fields.pop("name")
        description = fields.pop("description")
        schema = fields.pop("input_schema")

        async def handler(arguments: dict[str, Any]) -> Any:
            return await self.call(path, digest, name, arguments)

        return Tool.from_schema(name, description, schema, handler, **fields)

    # -- calling --------------------------------------------------------------------------

    async def call(self, path: str, digest: str, name: str, arguments: dict[str, Any]) -> Any:
        """Run tool ``name`` of file ``path`` (version ``digest``) in a worker. Cancelling
        this (a cancel, a timeout) kills the worker, so the work really stops."""
        busy: list[_Worker] = []
        future = self._pool.run(self._call_blocking, path, digest, name, arguments, busy)
        try:
            answer = await asyncio.shield(future)
        except asyncio.CancelledError:
            for worker in busy:
                worker.kill()  # its pipe closes: the waiting thread returns at once
            raise
        kind = answer[0]
        if kind == "ok":
            return answer[1]
        if kind == "error":
            raise _remote_error(answer[1], answer[2])
        raise ToolUnavailable(
            f"the worker process running {name!r} ended during the call (a crash, os._exit, "
            "or it was stopped); a new one takes the next call"
        )

    def _call_blocking(
        self, path: str, digest: str, name: str, arguments: dict[str, Any], busy: list[_Worker]
    ) -> Any:
        worker = self._take()
        busy.append(worker)
        try:
            answer = worker.request(("call", path, digest, name, arguments))
            if answer == ("missing",):  # a fresh worker: give it the file first
                text = self._texts.get((path, digest))
                if text is None:
                    return ("error", "ToolUnavailable", "this version of the file is gone")
                worker.request(("load", path, text, self.source))
                answer = worker.request(("call", path, digest, name, arguments))
            return answer if answer is not None else ("ended",)
        finally:
            self._give_back(worker)


_REMOTE_KINDS: dict[str, type[Exception]] = {}


def _remote_error(kind: str, message: str) -> Exception:
    """An exception named like the tool's own (``ValueError``...), so results and the audit
    log show the kind the tool raised in its worker."""
    cls = _REMOTE_KINDS.get(kind)
    if cls is None:
        cls = _REMOTE_KINDS.setdefault(kind, type(kind, (Exception,), {"__module__": __name__}))
    return cls(message)
