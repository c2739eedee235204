"""Live kernels as sources of the Jupyter server's registry: ``kernel:<notebook path>``.

A kernel that loaded the extension serves its notebook's tools over MCP on a private
loopback endpoint and announces it in ``nexus-kernel-<kernel id>.json`` in the Jupyter
runtime dir (see :mod:`nexus_jupyter.notebook.kernel_link`). :class:`KernelSources` watches
that folder (file events, no polling of kernels) and keeps one :class:`KernelSource` per
announced kernel, named after the notebook its session holds. The source is the MCP client
source, so the kernel's ``tools/list_changed`` relists its tools at once, and calls,
progress and cancel go to the kernel.

Only the kernels this server runs are its sources: servers of one user share the runtime dir
by default, so another server's kernels announce themselves in the same folder. An
announcement whose kernel id this server's kernel manager does not know is left alone (not
linked, not removed). Jupyter reports a kernel started (``kernel_actions`` "start") from
inside the kernel's ``start_kernel``, before its kernel manager lists the kernel: such an event
on this server's own event logger is this server's kernel, so an announcement that came first
is linked then, without asking the kernel manager. Jupyter saves the kernel's session only
after that, so such a kernel is ``kernel:<kernel id>`` at first, and relinked as
``kernel:<notebook>`` as soon as the session manager names its notebook.

A kernel leaves when its announcement goes (it exits cleanly or unloads), and when Jupyter
reports that it restarted or shut down (``kernel_actions`` events), which also covers a
kernel killed before it could clean up. A notebook renamed while its kernel runs (or a
folder that holds it: ``contents_service`` events) renames the kernel's source.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core.tools.kernel_listing import CALLS_META_KEY
from ..core.tools.spec import SourceKind
from .kernel_tool_tests import KernelToolTests
from .kernel_workspace import ExportHandOver, load_exported_files
from .nexus_upstream import NexusUpstream

__all__ = ["KernelSource", "KernelSources", "read_announcement"]

log = logging.getLogger(__name__)

ANNOUNCE_PREFIX = "nexus-kernel-"
#: How long a kernel linked before its session existed waits to be named after its notebook.
NAMING_WAIT_S = 30.0
KERNEL_ACTIONS = "https://events.jupyter.org/jupyter_server/kernel_actions/v1"
CONTENTS_ACTIONS = "https://events.jupyter.org/jupyter_server/contents_service/v1"
#: How many departed tools :meth:`KernelSources.why_gone` remembers.
_MAX_DEPARTED = 500


class KernelSource(ExportHandOver, KernelToolTests, NexusUpstream):
    """The notebook tools of one live kernel, named as the notebook defines them; ``origin``
    keeps the defining cell (``cell:<id>``). Their tests are the kernel's
    (:mod:`.kernel_tool_tests`), and so are the calls the notebook made of them
    (:attr:`reported_calls`, from :mod:`nexus_jupyter.notebook.kernel_calls`)."""

    kind: SourceKind = "kernel"
    #: When the kernel process started: a file its notebook exported since is this kernel's
    #: export (see :mod:`.jupyter_clashes`)
    since: float = float("inf")

    def __init__(self, notebook: str, kernel_id: str, url: str, secret: str, pid: int) -> None:
        super().__init__(
            notebook or kernel_id, url=url, headers={"Authorization": f"Bearer {secret}"}
        )
        self.name = f"kernel:{notebook or kernel_id}"
        self.namespace = ""  # the notebook's own names: no mcp__ prefix
        self.notebook = notebook
        self.kernel_id = kernel_id
        self.pid = pid
        self.reported_tests: dict[str, Any] = {}  # tool -> the test status its kernel reports
        #: tool -> the figures of the calls its notebook made in the kernel (a ToolStats dict)
        self.reported_calls: dict[str, dict[str, Any]] = {}
        self._listed: set[str] = set()  # the tools of the listing being read

    async def _list_tools(self, client: Any, *, publish: bool = True) -> None:
        """List the kernel's tools; what it reported of a tool that left the listing goes
        with it (its calls would still count in :meth:`call_counts`, its tests in the
        status), before the registry hears of the new listing."""
        self._listed = set()
        await super()._list_tools(client, publish=False)
        for reported in (self.reported_calls, self.reported_tests):
            for name in [n for n in reported if n not in self._listed]:
                del reported[name]
        if publish:
            self._publish()

    def _tool(self, remote: Any) -> Any:
        self._listed.add(remote.name)
        self._note_tests(remote)
        figures = (remote.meta or {}).get(CALLS_META_KEY)
        if isinstance(figures, dict):
            self.reported_calls[remote.name] = figures
        else:
            self.reported_calls.pop(remote.name, None)
        return super()._tool(remote)

    def call_counts(self) -> dict[str, tuple[int, int]]:
        """``(calls, refusals)`` the kernel reported per tool (as ``Registry.call_counts``)."""
        return {
            name: (int(f.get("calls") or 0), int(f.get("refused") or 0))
            for name, f in list(self.reported_calls.items())
        }

    @property
    def status(self) -> dict[str, Any]:
        details = dict(super().status)
        details.update(notebook=self.notebook, kernel_id=self.kernel_id, pid=self.pid)
        details["tests"] = self.tests_digest()
        return details


def read_announcement(path: Path) -> dict[str, Any] | None:
    """The endpoint a kernel announced (``kernel_id``, ``url``, ``secret``, ``pid``), or
    ``None`` when the file is gone or not (yet) a complete announcement."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or not all(
        isinstance(body.get(k), str) for k in ("kernel_id", "url", "secret")
    ):
        return None
    return body


def _moved(notebook: str, old: str, new: str) -> str | None:
    """Where ``notebook`` is after ``old`` was renamed to ``new`` (a file, or a folder that
    holds it), or ``None`` when the rename does not touch it."""
    if not notebook or not old:
        return None
    if notebook == old:
        return new
    if notebook.startswith(old + "/"):
        return new + notebook[len(old) :]
    return None


def _started_at(pid: Any, announcement: Path) -> float:
    """When the kernel process ``pid`` started (psutil, which ipykernel brings), else when it
    wrote its ``announcement`` (its link starts a moment after ``%load_ext``), else now."""
    try:
        import psutil

        return float(psutil.Process(pid).create_time())
    except Exception:  # no psutil, or the process is gone: the announcement is close enough
        pass
    try:
        return announcement.stat().st_mtime
    except OSError:
        return time.time()


def _remove(path: Path) -> None:
    """Delete a dead kernel's announcement (a tiny file: no need to leave the loop)."""
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("nexus_jupyter: cannot remove %s: %s", path, exc)


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class KernelSources:
    """Keeps the registry's ``kernel:*`` sources in step with the announced kernels.

    Runs on the Jupyter server's loop (where the session manager answers); registry changes
    that may wait on a stopping connection run in a thread.
    """

    def __init__(
        self,
        registry: Any,
        runtime_dir: str | Path,
        session_manager: Any,
        kernel_manager: Any = None,
        event_logger: Any = None,
    ) -> None:
        self.registry = registry
        self.runtime_dir = Path(runtime_dir)
        self.session_manager = session_manager
        self.kernel_manager = kernel_manager  # None: every announced kernel is this server's
        # The server's event logger: its kernel_actions come from this server's kernel manager
        # (another server's, even one sharing the runtime dir, has its own).
        self.event_logger = event_logger
        self.started: set[str] = set()  # kernels it reported started, until they shut down
        self.sources: dict[str, KernelSource] = {}  # kernel id -> its source
        self._task: asyncio.Task[None] | None = None
        self._naming: set[asyncio.Task[None]] = set()  # kernels linked before their session
        self._stop = asyncio.Event()
        # File events and kernel events both add and drop sources: one at a time.
        self._changing = asyncio.Lock()
        #: tool -> (kernel id, notebook, pid) of the kernel it left with (see :meth:`why_gone`)
        self.departed: dict[str, tuple[str, str, Any]] = {}
        #: kernel id -> how Jupyter reported it ended ("restart", "shutdown"), until it relinks
        self.endings: dict[str, str] = {}
        #: told the tools that left with a kernel once Jupyter says how it ended (after they
        #: left: the sidebar reads :meth:`why_gone` again)
        self.on_told: Callable[[list[str]], Any] | None = None
        self._unsubscribe: Callable[[], Any] | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())
        # a tool defined again (by any source) is no longer one that left with its kernel
        self._unsubscribe = self.registry.subscribe(self._forget_returned)

    def _forget_returned(self, change: Any) -> None:
        for name in change.added:
            self.departed.pop(name, None)

    async def stop(self) -> None:
        self._stop.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        for task in list(self._naming):
            task.cancel()
        for kernel_id in list(self.sources):
            await self._drop(kernel_id)

    async def _run(self) -> None:
        import watchfiles

        self.runtime_dir.mkdir(parents=True, exist_ok=True)
        for path in sorted(self.runtime_dir.glob(f"{ANNOUNCE_PREFIX}*.json")):
            await self._on_file(path)

        def announcement(_change: Any, name: str) -> bool:
            base = os.path.basename(name)
            return base.startswith(ANNOUNCE_PREFIX) and base.endswith(".json")

        async for changes in watchfiles.awatch(
            self.runtime_dir,
            watch_filter=announcement,
            stop_event=self._stop,
            debounce=50,
            step=10,
            recursive=False,
        ):
            for _change, name in sorted(changes, key=lambda c: c[1]):
                try:
                    await self._on_file(Path(name))
                except Exception:
                    log.exception("nexus_jupyter: following kernel announcement %s failed", name)

    async def _on_file(self, path: Path) -> None:
        async with self._changing:
            await self._follow(path)

    async def _follow(self, path: Path) -> None:
        kernel_id = path.stem[len(ANNOUNCE_PREFIX) :]
        body = read_announcement(path)
        current = self.sources.get(kernel_id)
        if body is None or not _alive(body.get("pid")):
            if body is not None:  # a kernel that died without cleaning up
                _remove(path)
            await self._drop(kernel_id)
            return
        if not self._runs(kernel_id):
            return  # another server's kernel (or one this server starts: see _kernel_action)
        if current is not None and current.url == body["url"] and current.pid == body["pid"]:
            return
        await self._link(kernel_id, body, await self._notebook_of(kernel_id))

    def _runs(self, kernel_id: str) -> bool:
        """Whether this server's kernel manager runs ``kernel_id`` (or reported it started)."""
        if self.kernel_manager is None or kernel_id in self.started:
            return True
        try:
            return kernel_id in self.kernel_manager
        except Exception:  # a kernel manager that cannot say: as before, take the kernel
            log.exception("nexus_jupyter: cannot ask the kernel manager for %s", kernel_id)
            return True

    async def _link(self, kernel_id: str, body: dict[str, Any], notebook: str) -> None:
        """(Re)connect the announced kernel ``kernel_id`` as the source of ``notebook``."""
        current = self.sources.get(kernel_id)
        restarted = current is not None and current.pid != body.get("pid")
        if restarted:  # a new process announced itself before Jupyter's restart event
            self.endings[kernel_id] = "restart"
        else:
            self.endings.pop(kernel_id, None)  # it runs again: what ended it is told by then
        await self._drop(kernel_id, relink=not restarted)
        source = KernelSource(notebook, kernel_id, body["url"], body["secret"], body["pid"])
        source.since = _started_at(
            body["pid"], self.runtime_dir / f"{ANNOUNCE_PREFIX}{kernel_id}.json"
        )
        # a tool the notebook exported comes from this server's tools folder before it goes
        source.take_over = lambda names: load_exported_files(self.registry, names)
        if any(s.name == source.name for s in self.sources.values()):
            source.name = f"kernel:{notebook}#{kernel_id[:8]}"  # two kernels, one notebook
        self.sources[kernel_id] = source
        await asyncio.get_running_loop().run_in_executor(None, self.registry.add_source, source)
        if not notebook:  # linked before Jupyter saved its session (an early "start" event)
            task = asyncio.ensure_future(self._name_when_known(kernel_id, source))
            self._naming.add(task)
            task.add_done_callback(self._naming.discard)

    async def _name_when_known(self, kernel_id: str, source: KernelSource) -> None:
        """Relink ``kernel:<kernel id>`` as ``kernel:<notebook>`` once a session holds the
        kernel: Jupyter saves a session after its kernel started, and no event says so, so
        the session manager (in this process) is asked again, less and less often, for up to
        :data:`NAMING_WAIT_S` (a kernel started without a session keeps its id)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + NAMING_WAIT_S
        delay = 0.05
        while loop.time() < deadline:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)
            if self.sources.get(kernel_id) is not source:
                return  # dropped, renamed or relinked meanwhile
            notebook = await self._notebook_of(kernel_id)
            if not notebook:
                continue
            async with self._changing:
                path = self.runtime_dir / f"{ANNOUNCE_PREFIX}{kernel_id}.json"
                body = read_announcement(path)
                if self.sources.get(kernel_id) is source and body is not None:
                    await self._link(kernel_id, body, notebook)
            return

    async def _notebook_of(self, kernel_id: str) -> str:
        """The path of the notebook whose session runs ``kernel_id`` ("" when none does)."""
        try:
            sessions = await self.session_manager.list_sessions()
        except Exception:
            log.exception("nexus_jupyter: listing sessions failed")
            return ""
        for session in sessions:
            if (session.get("kernel") or {}).get("id") == kernel_id:
                return str(session.get("path") or session.get("name") or "")
        return ""

    def why_gone(self, name: str) -> str | None:
        """Why tool ``name`` is no longer here, when it left with a kernel that restarted or
        stopped: what happened and what brings it back, worded for the sidebar.

        Jupyter reports a restart once the new process runs, after the old one removed its
        announcement; so without its event, what the old process and Jupyter say now tells."""
        left = self.departed.get(name)
        if left is None:
            return None
        kernel_id, notebook, pid = left
        base = notebook.rsplit("/", 1)[-1]
        ending = self.endings.get(kernel_id)
        if ending == "restart" or (ending is None and not _alive(pid) and self._runs(kernel_id)):
            what = "restarted, and its new kernel has not defined it"
        elif ending == "shutdown":
            what = "was shut down"
        elif _alive(pid):
            what = "stopped serving its tools (it is restarting, or unloaded nexus_jupyter)"
        else:
            what = "exited"
        return (
            f"the kernel of {base} {what}. Run the cell that defines {name} in {base} again "
            "(after %load_ext nexus_jupyter) to bring it back."
        )

    def _note_departure(self, source: KernelSource) -> None:
        """Remember that the tools of ``source`` left with its kernel (see :meth:`why_gone`)."""
        left = (source.kernel_id, source.notebook or source.kernel_id, source.pid)
        for tool in source._tools:
            self.departed.pop(tool.spec.name, None)  # the latest departure goes last
            self.departed[tool.spec.name] = left
        while len(self.departed) > _MAX_DEPARTED:
            del self.departed[next(iter(self.departed))]

    async def _drop(self, kernel_id: str, *, relink: bool = False) -> None:
        """Remove the source of ``kernel_id``; ``relink``: it comes back at once (renamed,
        or named after its notebook), so its tools did not leave."""
        source = self.sources.pop(kernel_id, None)
        if source is None:
            return
        if not relink:
            self._note_departure(source)
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, self.registry.remove_source, source.name)
        except Exception:
            log.exception("nexus_jupyter: removing %s failed", source.name)

    async def on_contents_action(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        """Jupyter's ``contents_service`` event: a renamed notebook, or a renamed folder
        that holds one, takes its kernel's source along (the session follows the rename
        only afterwards, so the new path comes from the event). Never raises."""
        if data.get("action") != "rename":
            return
        old, new = data.get("source_path"), data.get("path")
        if not isinstance(old, str) or not isinstance(new, str):
            return
        try:
            async with self._changing:
                for kernel_id, source in list(self.sources.items()):
                    notebook = _moved(source.notebook, old.strip("/"), new.strip("/"))
                    body = read_announcement(
                        self.runtime_dir / f"{ANNOUNCE_PREFIX}{kernel_id}.json"
                    )
                    if notebook is not None and body is not None:
                        await self._link(kernel_id, body, notebook)
        except Exception:
            log.exception("nexus_jupyter: following the rename %s -> %s failed", old, new)

    async def on_kernel_action(self, logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        """Jupyter's ``kernel_actions`` event: a kernel that restarted or shut down takes its
        tools with it, unless a new process of it has announced itself already; a kernel that
        started and announced itself already is linked.

        The event is emitted inside the kernel's ``start_kernel`` (and restart, shutdown),
        before ``MultiKernelManager`` adds a started kernel to the ones it runs; jupyter_events
        runs each listener as a task of its own, later, and does not wait for it. So a "start"
        is taken as this server's kernel because it came on this server's event logger
        (``logger``), never by asking the kernel manager, which may not list it yet.

        Never raises: jupyter_events would only log the exception, without the event; it is
        logged here with it."""
        try:
            async with self._changing:
                await self._kernel_action(data, ours=logger is self.event_logger)
        except Exception:
            log.exception("nexus_jupyter: following kernel event %s failed", data)

    async def _kernel_action(self, data: dict[str, Any], ours: bool) -> None:
        kernel_id = data.get("kernel_id")
        if data.get("status") != "success" or not isinstance(kernel_id, str):
            return
        path = self.runtime_dir / f"{ANNOUNCE_PREFIX}{kernel_id}.json"
        if ours and data.get("action") == "start":
            self.started.add(kernel_id)  # ours, whether the kernel manager lists it yet or not
        elif ours and data.get("action") == "shutdown":
            self.started.discard(kernel_id)
        if data.get("action") in ("restart", "shutdown"):  # how its tools left (why_gone)
            self.endings.pop(kernel_id, None)
            self.endings[kernel_id] = data["action"]
            while len(self.endings) > _MAX_DEPARTED:
                del self.endings[next(iter(self.endings))]
            told = [name for name, left in self.departed.items() if left[0] == kernel_id]
            if told and self.on_told is not None:
                self.on_told(told)
        if data.get("action") == "start":  # it may have announced itself before it was ours
            if kernel_id not in self.sources and path.exists():
                await self._follow(path)
            return
        if data.get("action") not in ("restart", "shutdown") or kernel_id not in self.sources:
            return
        source = self.sources[kernel_id]
        body = read_announcement(path)
        if body is not None and body.get("pid") != source.pid and _alive(body.get("pid")):
            return  # the restarted kernel loaded the extension already: the file event rules
        if body is not None and body.get("pid") == source.pid:
            _remove(path)  # the old process was killed before it cleaned up
        await self._drop(kernel_id)
