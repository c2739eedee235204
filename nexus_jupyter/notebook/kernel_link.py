"""The kernel's side of live kernel tools: serve the notebook's tools to the Jupyter server.

When ``%load_ext nexus_jupyter`` runs in a Jupyter kernel, :func:`start_kernel_link` (on a
background thread, so loading stays fast):

1. serves the notebook's tools (only those: the server has its own built-ins and tools folder)
   over MCP streamable HTTP on a free loopback port, behind a per-kernel secret that every
   request must carry as ``Authorization: Bearer <secret>``;
2. announces the endpoint in ``nexus-kernel-<kernel id>.json`` next to the kernel's
   connection file (the Jupyter runtime dir, readable by the user only), which the server's
   :mod:`~nexus_jupyter.serve.jupyter_kernels` watches; the file goes when the kernel exits.

A cell that defines a tool changes the session registry; the served view follows through a
registry subscription and the MCP server sends ``tools/list_changed``, so the server relists
at once (no polling). Calls arrive on the registry's background loop and run in this kernel,
against the notebook's live globals; sync tools run on the kernel's main thread
(:class:`MainThreadHome`) unless declared ``@tool(threadsafe=True)``. The listing also carries
each tool's test status (:mod:`.kernel_tests`) and the calls the notebook made of it
(:mod:`.kernel_calls`), so the server's sidebar shows both.

``NEXUS_KERNEL_LINK=0`` turns the link off.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import json
import logging
import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["KernelLink", "MainThreadHome", "announce_path", "start_kernel_link"]

log = logging.getLogger(__name__)

ANNOUNCE_PREFIX = "nexus-kernel-"
NOTEBOOK_SOURCE = "notebook"


class MainThreadHome:
    """Runs sync notebook tools where notebook code runs: the kernel's main thread, through
    the kernel's event loop. A call made on the main thread itself (``%tool call``, a cell)
    runs right there; one from elsewhere waits until the kernel is idle (a cell that is
    still running finishes first, as it would for the next cell)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
        self.loop = loop
        self.thread = thread

    def is_current(self) -> bool:
        return threading.current_thread() is self.thread

    def run(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def job() -> None:
            if not done.set_running_or_notify_cancel():
                return  # given up (cancelled) before the kernel got to it
            try:
                done.set_result(fn(*args))
            except BaseException as exc:  # handed to the caller, who reports it
                done.set_exception(exc)

        if self.is_current():
            job()
        elif self.loop.is_closed():
            done.set_exception(RuntimeError("the kernel's event loop is closed"))
        else:
            self.loop.call_soon_threadsafe(job)
        return asyncio.wrap_future(done)


def announce_path(runtime_dir: str | Path, kernel_id: str) -> Path:
    """Where the kernel ``kernel_id`` announces its MCP endpoint."""
    return Path(runtime_dir) / f"{ANNOUNCE_PREFIX}{kernel_id}.json"


def _kernel_identity() -> tuple[str, Path] | None:
    """``(kernel id, runtime dir)`` from the kernel's connection file, ``None`` outside a
    Jupyter kernel (a terminal IPython, a test shell)."""
    try:
        from ipykernel.connect import get_connection_file

        connection = Path(get_connection_file())
    except Exception:  # not in an ipykernel, or it has no connection file
        return None
    stem = connection.stem
    if not stem.startswith("kernel-") or not connection.exists():
        return None
    return stem[len("kernel-") :], connection.parent


class KernelLink:
    """The served view of the notebook's tools, its MCP server and its announcement."""

    def __init__(self, session: Any, kernel_id: str, runtime_dir: Path) -> None:
        from ..core.registry.registry import Registry

        self.session = session
        self.kernel_id = kernel_id
        self.path = announce_path(runtime_dir, kernel_id)
        self.secret = secrets.token_urlsafe(32)
        # The server that calls applies its own policy; the tools read the kernel's secrets.
        self.view = Registry(search="keyword", credentials=session.credentials)
        self._unsubscribe: Callable[[], None] | None = None
        self.handle: Any = None
        self.calls: Any = None  # the CallReporter, once serving
        self._reporting: concurrent.futures.Future[None] | None = None

    def start(self, home: MainThreadHome | None) -> None:
        import mcp  # noqa: F401 - fully, on this thread, before the registry's thread uses it

        from ..serve.kernel_endpoint import KernelEndpoint

        if home is not None:
            self.session.set_home_thread(NOTEBOOK_SOURCE, home)
            self.view.set_home_thread(NOTEBOOK_SOURCE, home)
        from ..core.registry.source import MutableSource
        from .kernel_calls import CallReporter
        from .kernel_tests import KERNEL_TESTS_TOOL, listing_meta, tests_tool

        private = MutableSource("nexus", "config")  # the server's way in, never listed
        private.put(tests_tool(self.session))
        self.view.add_source(private)
        self._unsubscribe = self.session.subscribe(self._on_change)
        self.sync()
        calls = self.calls = CallReporter(
            self.session, self._relist, lambda: approval_marks(self.session)
        )

        def tool_meta(name: str) -> dict[str, Any] | None:
            extra = {
                **(listing_meta(self.session, name) or {}),
                **(calls.meta(name) or {}),
                **approval_meta(self.session, name),
            }
            return extra or None

        self.handle = KernelEndpoint(
            self.view, self.secret, tool_meta=tool_meta, hidden={KERNEL_TESTS_TOOL}
        )
        self._reporting = self.view.loop.submit(calls.run())  # looks at once, then every second
        self._announce()

    def _relist(self) -> None:
        if self.handle is not None:
            self.handle.relist()

    def policy_changed(self) -> None:
        """The session's policy decides differently now (``%tool mode``): the server lists
        again, so it asks before the calls the kernel asks before (:func:`approval_meta`)."""
        self._relist()

    def _on_change(self, change: Any) -> None:
        self.sync()
        if change.tests:
            self._relist()  # the listing carries each tool's test status

    def sync(self) -> None:
        """Publish the session's notebook tools as the view's (same objects: a call runs
        the function the cell defined)."""
        entries = self.session.snapshot.entries.values()
        tools = [e.tool for e in entries if e.tool.spec.source == NOTEBOOK_SOURCE]
        self.view.publish(NOTEBOOK_SOURCE, tools)

    def _announce(self) -> None:
        body = {
            "kernel_id": self.kernel_id,
            "url": self.handle.url,
            "secret": self.secret,
            "pid": os.getpid(),
        }
        temporary = self.path.with_suffix(".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(body, out)
        os.replace(temporary, self.path)  # the server never reads a half-written file

    def stop(self) -> None:
        """Withdraw the announcement and stop serving."""
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            log.warning("cannot remove %s", self.path)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._reporting is not None:
            self._reporting.cancel()
            self._reporting = None
        if self.handle is not None:
            self.handle.stop(timeout=2)
            self.handle = None
        self.view.close()


def approval_marks(session: Any) -> frozenset[tuple[str, str]]:
    """The tools the listing marks as needing approval, with why (:func:`approval_meta`); the
    kernel relists when they change (an "Approve always" in the notebook remembers a tool, an
    ``ask`` rule takes over from ``%tool mode prompt``)."""
    from ..core.tools.kernel_listing import APPROVAL_WHY_META_KEY

    marks = ((n, approval_meta(session, n)) for n in list(session.snapshot.entries))
    return frozenset((n, str(meta.get(APPROVAL_WHY_META_KEY, ""))) for n, meta in marks if meta)


def approval_meta(session: Any, name: str) -> dict[str, Any]:
    """The listing's mark for a tool the session asks about before each call (``%tool mode
    prompt``, an ``ask`` rule, a ``danger_full_access`` tool not approved for the session),
    as the notebook's form would, with why: the server then asks whoever calls it there (the
    sidebar's approval dialog, an MCP client's prompt) instead of running it unasked, and says
    why. A tool an ``ask`` rule asks about for some arguments is marked too (the server cannot
    see the rule, so it asks for every call). ``{}`` when the session would run it, or has no
    policy."""
    policy = getattr(session, "policy", None)
    entry = session.snapshot.entries.get(name)
    if policy is None or entry is None:
        return {}
    from ..core.tools.context import NOTEBOOK_CALLER, RequestInfo
    from ..core.tools.kernel_listing import APPROVAL_META_KEY, APPROVAL_WHY_META_KEY

    try:
        decision = policy.check(entry.spec, {}, RequestInfo(caller=NOTEBOOK_CALLER))
    except Exception:  # a custom policy that cannot decide without arguments: no mark
        log.debug("no approval mark for %s", name, exc_info=True)
        return {}
    if decision.action == "ask" and entry.spec.needs_approval:
        return {APPROVAL_META_KEY: True}  # the tool's own flag, which the server reads itself
    if decision.action == "ask":
        why = decision.why or decision.reason
    elif decision.action != "allow":
        return {}
    else:
        by_arguments = getattr(policy, "asks_for_some_arguments", None)
        label = by_arguments(entry.spec) if by_arguments is not None else None
        if label is None:
            return {}
        why = f"{label} says ask for some of its arguments"
    return {APPROVAL_META_KEY: True, APPROVAL_WHY_META_KEY: f"its notebook asks first ({why})"}


_link: KernelLink | None = None
_link_lock = threading.Lock()


def current_link() -> KernelLink | None:
    """The running link of this kernel (``None`` before it started, or outside a kernel)."""
    return _link


def start_kernel_link(shell: Any, session_registry: Callable[[], Any]) -> threading.Thread | None:
    """Start serving the notebook's tools to the Jupyter server, on a background thread
    (building the session registry and importing the MCP SDK take a second or two).
    Call on the kernel's main thread; returns the thread, or ``None`` outside a kernel
    (``shell`` has no ``kernel``: a terminal IPython, a test shell)."""
    if os.environ.get("NEXUS_KERNEL_LINK", "1").lower() in ("0", "false", "off", "no"):
        return None
    if getattr(shell, "kernel", None) is None:
        return None  # and ipykernel is not imported for nothing
    identity = _kernel_identity()
    if identity is None:
        return None
    try:
        loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        # loaded from the IPython config, before the kernel's loop runs: the kernel's own
        loop = getattr(getattr(shell.kernel, "io_loop", None), "asyncio_loop", None)
    home = MainThreadHome(loop, threading.main_thread()) if loop is not None else None
    # The link first: embedding every tool for search would share the CPU with it.
    from ..session import defer_search_warm_up

    release_warm_up = defer_search_warm_up()

    def run() -> None:
        global _link
        try:
            with _link_lock:
                if _link is not None:
                    return
                try:
                    link = KernelLink(session_registry(), *identity)
                    link.start(home)
                except Exception:
                    log.exception("nexus_jupyter: serving the notebook's tools to Jupyter failed")
                    return
                _link = link
                atexit.register(stop_kernel_link)
        finally:
            release_warm_up()

    thread = threading.Thread(target=run, name="nexus-kernel-link", daemon=True)
    thread.start()
    return thread


def stop_kernel_link() -> None:
    global _link
    with _link_lock:
        link, _link = _link, None
    if link is not None:
        link.stop()
