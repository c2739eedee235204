"""How ``nexus-tools serve`` stops on SIGTERM (what service managers, test harnesses and
MCP clients send) or Ctrl-C: the same clean way as when the client goes away.

- while starting: the start is abandoned (:class:`StartAbandoned` out of whatever was
  running, once it is out of the standard library's own code), then serve cleans up and
  exits 0;
- while serving: the serving task is cancelled (no exception in the middle of anything),
  sessions close, serve cleans up and exits 0;
- while cleaning up (closing the registry, stopping MCP servers): nothing is cut short.

If the clean stop takes longer than :data:`FORCED_EXIT_S` after the signal, or a second
signal comes, the child processes are ended and the process exits with code 1, saying which
of the two it was. Once serve has returned (run inside another program, which goes on),
that timer is cancelled.

A signal sent to the process may reach any of its threads. Python runs the handler in the
main thread at its next step, and a main thread blocked in a call (a tool file's import
that sleeps, the event loop's ``select``) takes no step until that call returns, which
may be never. So every caught signal is also written to a pipe
(:func:`signal.set_wakeup_fd`) that a thread of ours reads: when the main thread has not
handled a stop signal within :data:`NUDGE_AFTER_S`, that thread sends it a SIGALRM of its
own, which interrupts a sleep or a ``select`` and lets the handler run; if that does not
help within a second (a call that retries through signals), the process is ended
:data:`FORCED_EXIT_S` after the signal as above.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import sysconfig
import threading
import time
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

from .child_processes import child_pids, end_children

__all__ = ["FORCED_EXIT_S", "ServeStop", "StartAbandoned"]

T = TypeVar("T")

#: After the signal, how long a clean stop may take before the process is ended regardless
#: (a tool file's import stuck in a loop, a thread that never returns).
FORCED_EXIT_S = 3.5

#: How long a stop while starting waits for the main thread to leave the standard library's
#: own code (:meth:`ServeStop._abandon`), trying again every :data:`RETRY_S`; after that
#: (a thread blocked in a wait there) the start is abandoned wherever it is.
DEFER_LIMIT_S = 0.3
RETRY_S = 0.01

#: How long a stop signal may wait for the main thread to handle it before that thread is
#: interrupted (see the module docstring).
NUDGE_AFTER_S = 0.05

_PATHS = sysconfig.get_paths()
_STDLIB = (os.path.join(_PATHS["stdlib"], ""), "<frozen ")
_PACKAGES = tuple(os.path.join(_PATHS[key], "") for key in ("purelib", "platlib"))


class StartAbandoned(BaseException):
    """A stop signal came while serve was starting: raised out of whatever the main thread
    was running, and caught by ``serve`` (exit code 0).

    Not ``KeyboardInterrupt``: one that leaves code run by a string ``exec`` (as
    ``dataclasses`` does while a module is imported) marks the interpreter, and under
    ``python -m`` it then ends by SIGINT (exit -2) however serve returned; and code that
    handles Ctrl-C by itself (a tool file's import, a subprocess wait) must not take this
    for its own.
    """


class ServeStop:
    """The signal handling of one ``serve`` run (main thread only; elsewhere it is inert)."""

    def __init__(self) -> None:
        self.signalled = threading.Event()
        self._phase = "starting"
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Future[Any] | None = None
        #: ends the process if the clean stop takes too long (cancelled once serve returns)
        self._timer: threading.Timer | None = None
        self._before: dict[int, Any] = {}
        self._signalled_at = 0.0
        self._owned = False  # the handlers are installed: serve is this process's program
        #: A signal abandoned the start (:class:`StartAbandoned` was raised).
        self.abandoned = False
        #: The search warm-up's thread (:meth:`exit_if_warming`).
        self.warming: threading.Thread | None = None
        #: The child processes that were there before serve began (never ended by it).
        self.spare: frozenset[int] = frozenset(child_pids())
        self._handled = 0  # stop signals the main thread handled
        self._wakeup: tuple[int, int] | None = None  # the pipe every caught signal is written to
        self._wakeup_before = -1
        self._watcher: threading.Thread | None = None
        self._closing = threading.Event()  # uninstall() began: the watcher sends nothing more

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGTERM, signal.SIGINT):
            self._before[signum] = signal.signal(signum, self._handle)
        self._owned = True
        if hasattr(signal, "setitimer"):  # POSIX: a stop can wait for a safe moment
            self._before[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._retry)
            self._watch_signals()

    def _watch_signals(self) -> None:
        """Have every caught signal written to a pipe that a thread of ours reads
        (:meth:`_watch`; see the module docstring). Main thread only, as :meth:`install`."""
        read, write = os.pipe()
        os.set_blocking(write, False)
        self._wakeup_before = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._wakeup = (read, write)
        self._watcher = threading.Thread(
            target=self._watch, args=(read,), name="nexus-serve-signals", daemon=True
        )
        self._watcher.start()

    def _watch(self, read: int) -> None:
        """Read the signals caught from the wakeup pipe until :meth:`uninstall` closes it.
        After a stop signal the main thread has not handled within :data:`NUDGE_AFTER_S`, send
        it SIGALRM (which interrupts a sleep or a ``select``) until it has, for up to a
        second; a main thread still not handling ours then (a call that takes no signal) is
        ended :data:`FORCED_EXIT_S` after the signal all the same."""
        main = threading.main_thread().ident
        stops = {int(signal.SIGTERM), int(signal.SIGINT)}
        try:
            while True:
                try:
                    data = os.read(read, 64)
                except OSError:
                    return
                if not data:  # uninstall() closed the other end
                    return
                count = sum(1 for b in data if b in stops)
                if not count:
                    continue  # a nudge of ours, or a retry's alarm
                expected = self._handled + count
                began = time.monotonic()
                while self._handled < expected and time.monotonic() - began < 1.0:
                    time.sleep(NUDGE_AFTER_S)
                    if self._closing.is_set() or self.signalled.is_set():
                        break
                    if self._handled < expected and main is not None:
                        with contextlib.suppress(OSError, ValueError):
                            signal.pthread_kill(main, signal.SIGALRM)
                ours = signal.getsignal(signal.SIGTERM) == self._handle
                if (
                    ours
                    and self._handled < expected
                    and not self.signalled.is_set()
                    and not self._closing.is_set()
                ):
                    late = f"did not stop within {FORCED_EXIT_S:g} s of a stop signal"
                    left = max(0.0, FORCED_EXIT_S - (time.monotonic() - began))
                    timer = threading.Timer(left, self._force_exit, args=(late,))
                    timer.daemon = True
                    timer.start()
                    self._timer = timer
        finally:
            os.close(read)

    def uninstall(self, *, keep_deadline: bool = False) -> None:
        """Put back the handlers :meth:`install` replaced (serve run in process returns).
        The forced exit a stop signal armed is called off, so the host program goes on,
        unless ``keep_deadline``: ``nexus-tools serve`` keeps it, so an exit that hangs after
        serving (a thread that never ends) is still ended."""
        self._closing.set()  # no nudge from here on: the host's SIGALRM may end the process
        if self._wakeup is not None:
            try:
                signal.set_wakeup_fd(self._wakeup_before)
            except ValueError:  # (not the main thread) the pipe stays: signals still write to it
                pass
            else:
                os.close(self._wakeup[1])  # the watcher reads the end of the pipe and returns
                self._wakeup = None
                if self._watcher is not None:
                    self._watcher.join(2.0)
        if self._timer is not None and not keep_deadline:
            self._timer.cancel()
        if getattr(signal, "SIGALRM", None) in self._before:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum, handler in self._before.items():
            signal.signal(signum, handler)
        self._before.clear()

    async def serving(self, coro: Coroutine[Any, Any, T]) -> T | None:
        """Run ``coro`` (the server) as the task a signal cancels; ``None`` if cancelled so."""
        self._loop = asyncio.get_running_loop()
        self._task = asyncio.ensure_future(coro)
        self._phase = "serving"
        if self.signalled.is_set():  # the signal came before serving began (or just now)
            self._task.cancel()
        try:
            return await self._task
        except asyncio.CancelledError:
            if not self.signalled.is_set():
                raise
            return None
        finally:
            self._phase = "cleaning"

    def ready(self) -> None:
        """Starting is done: a signal from now on makes :meth:`serving` return at once."""
        self._phase = "ready"

    def cleaning(self) -> None:
        """From now on a signal cuts nothing short (only the timer or a second signal)."""
        self._phase = "cleaning"

    def exits_now(self) -> bool:
        """Whether :meth:`exit_if_warming` ends the process."""
        return self._owned and self.warming is not None and self.warming.is_alive()

    def exit_if_warming(self, code: int) -> None:
        """End the process with ``code`` now (output flushed) if the search warm-up still
        runs and serve is the process's program: waiting for the model being prepared holds
        the stop up for seconds, and a normal exit while ONNX Runtime runs aborts the
        process. Serve run in another program's thread returns instead."""
        if not self.exits_now():
            return
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe: nothing more to say
                stream.flush()
        os._exit(code)

    def _handle(self, signum: int, frame: Any) -> None:
        self._handled += 1
        name = signal.Signals(signum).name
        if self.signalled.is_set():  # a second signal: stop now
            self._force_exit(f"a second stop signal ({name}) came while it was stopping cleanly")
        self.signalled.set()
        late = f"did not stop within {FORCED_EXIT_S:g} s of {name}"
        self._timer = threading.Timer(FORCED_EXIT_S, self._force_exit, args=(late,))
        self._timer.daemon = True
        self._timer.start()
        if self._phase == "starting":
            self._signalled_at = time.monotonic()
            self._abandon(frame)
        if self._phase == "serving" and self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)

    def _retry(self, signum: int, frame: FrameType | None) -> None:
        if self._phase == "starting" and self.signalled.is_set():
            self._abandon(frame)

    def _abandon(self, frame: FrameType | None) -> None:
        """Raise :class:`StartAbandoned` where the main thread is (``frame``), unless that is
        the standard library's own code: there an exception between taking a lock and the
        ``try`` that gives it back (the import system's global lock, a logging handler's)
        leaves the lock held, and the cleanup's next import or log line waits forever. Then
        it is tried again in a moment; after :data:`DEFER_LIMIT_S` (a wait there, where an
        exception is harmless) it is raised all the same."""
        waited = time.monotonic() - self._signalled_at
        retry = getattr(signal, "SIGALRM", None) in self._before  # not on Windows
        if retry and _in_stdlib(frame) and waited < DEFER_LIMIT_S:
            signal.setitimer(signal.ITIMER_REAL, RETRY_S)
            return
        self.abandoned = True
        raise StartAbandoned

    def _force_exit(self, reason: str) -> None:
        """End the child processes and the process (exit code 1), saying ``reason`` (a
        second signal, or the clean stop's taking too long)."""
        print(f"nexus-tools serve: {reason}; ending now", file=sys.stderr, flush=True)
        try:
            end_children(grace=0.2, spare=self.spare)
        finally:
            os._exit(1)


def _in_stdlib(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs the standard library's code (frozen modules included), not a
    package's or the program's."""
    name = frame.f_code.co_filename if frame is not None else ""
    return name.startswith(_STDLIB) and not name.startswith(_PACKAGES)
