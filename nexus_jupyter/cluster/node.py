"""One replica's membership in a cluster: its tools folder mirrored to and from Redis.

    node = ClusterNode(registry, ClusterAddress.parse("redis://127.0.0.1:6379/0"), folder)
    node.start()          # on the registry's background loop; returns at once
    node.status           # {"state": "connected" | "degraded" | "connecting", ...}
    node.stop()

Both directions go through the replica's own tools folder, so everything that already works
on a folder keeps working (the watcher, versions, a folder shared by several replicas):

- **Out.** After every change of the folder's directory source (a save the watcher loaded,
  ``create_dynamic_tool``, a notebook export), each tool file that *loaded cleanly* and
  differs from what the cluster last saw is published. A broken save never leaves the
  replica.
- **In.** A publication announced on the ``published`` channel is fetched, written into the
  folder atomically and loaded at once (not waiting for the watcher); the registry's change
  then reaches this replica's MCP clients like any other change.

When Redis goes away the replica carries on with what it has (state ``degraded``: a warning
once per outage, and an info line when Redis is back; under a
:class:`~.replica.ClusterReplica` the ``cluster`` source's status says both and this node
logs them at DEBUG, see ``outage_level``), keeps local changes in ``pending`` and retries.
On every (re)connect it reconciles: files Redis has and this replica lacks or has older are
written here; files this replica has that Redis lacks (Redis restarted empty) or that
changed here while Redis was away are published. So a restart of Redis loses no tool as
long as one replica holds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from ..sources.directory import is_tool_file
from ..sources.loader import content_hash
from ..sources.tool_files import directory_source_for, hand_over
from .store import (
    RETRY_FIRST_S,
    RETRY_MAX_S,
    ClusterAddress,
    ClusterStore,
    FileVersion,
)

__all__ = ["ClusterNode"]

log = logging.getLogger(__name__)


class ClusterNode:
    """Keeps ``folder`` (watched by ``registry``) in step with the cluster at ``address``.

    ``outage_level`` is the level a Redis outage is logged at (WARNING; its recovery at
    INFO). :class:`~.replica.ClusterReplica` passes DEBUG: its ``cluster`` source says the
    outage, and the shared approvals and audit built on this node follow the node."""

    def __init__(
        self,
        registry: Any,
        address: ClusterAddress,
        folder: str | Path,
        *,
        replica: str | None = None,
        outage_level: int = logging.WARNING,
    ) -> None:
        self.registry = registry
        self.address = address
        self.outage_level = outage_level
        self.folder = Path(folder).expanduser().resolve()
        self.replica = replica or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.state = "connecting"
        self.error: str | None = None
        self.since = time.time()
        self.revision = 0  # the newest cluster revision this replica has applied or made
        self.published = 0  # publications made by this replica
        self.applied = 0  # publications of other replicas written here
        self.pending: set[str] = set()  # files changed here while Redis was away
        self._known: dict[str, str] = {}  # file -> sha the cluster and this folder agree on
        self._store: ClusterStore | None = None
        self._task: Any = None
        self._unsubscribe: Any = None
        self._scan_again = asyncio.Event()
        self._connected = threading.Event()  # for callers on other threads
        self._listeners: list[Any] = []  # called with the node on every state change
        self.on_connect: list[Any] = []  # async callables run after each (re)connect
        #: More channels to follow: store attribute naming the channel -> async handler(data).
        self.channels: dict[str, Any] = {}

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Connect (and keep reconnecting) on the registry's background loop."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if directory_source_for(self.registry, self.folder) is None:
            self.registry.watch(self.folder)
        self._task = self.registry.loop.submit(self._run())

    def stop(self, timeout: float = 5.0) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(Exception):
                self._task.result(timeout)

    def wait_connected(self, timeout: float = 10.0) -> bool:
        """Block (not on the registry's loop) until the first reconciliation is done."""
        return self._connected.wait(timeout)

    def on_state_change(self, listener: Any) -> None:
        self._listeners.append(listener)

    @property
    def store(self) -> ClusterStore | None:
        """The connected store, or ``None`` while degraded."""
        return self._store if self.state == "connected" else None

    @property
    def status(self) -> dict[str, Any]:
        """What ``cluster_status`` and the ``cluster`` source show."""
        return {
            "state": self.state,
            "redis": self.address.shown(),
            "replica": self.replica,
            "since": self.since,
            "error": self.error,
            "revision": self.revision,
            "published": self.published,
            "applied": self.applied,
            "pending": sorted(self.pending),
            "files": len(self._known),
        }

    # -- the connection loop --------------------------------------------------------------------

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        self._unsubscribe = self.registry.subscribe(self._on_registry_change, loop=loop)
        # Local changes are noticed whether or not Redis is there (while it is away they
        # go to `pending`), so the scanner outlives each connection.
        scanner = asyncio.ensure_future(self._scan_loop())
        try:
            await self._connect_forever()
        finally:
            scanner.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await scanner

    async def _connect_forever(self) -> None:
        wait = RETRY_FIRST_S
        while True:
            store = ClusterStore(self.address)
            try:
                pubsub = store.redis.pubsub()
                await pubsub.subscribe(
                    store.published_channel, *(getattr(store, a) for a in self.channels)
                )
                self._store = store
                await self._reconcile(store)
                for hook in self.on_connect:
                    await hook(store)
                self._set_state("connected", None)
                wait = RETRY_FIRST_S
                self._scan_again.set()  # anything saved during the reconciliation
                await self._listen(pubsub)
            except asyncio.CancelledError:
                with contextlib.suppress(Exception):
                    await store.close()
                raise
            except Exception as exc:  # Redis away, refused, timed out, restarted
                self._store = None
                self._set_state("degraded", f"{type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                await store.close()
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_MAX_S)

    async def _listen(self, pubsub: Any) -> None:
        store = self._store
        assert store is not None
        others = {getattr(store, attr): handler for attr, handler in self.channels.items()}
        async for message in pubsub.listen():
            if message.get("type") != "message":
                continue
            handler = others.get(message.get("channel"))
            if handler is not None:
                await handler(message["data"])
                continue
            note = json.loads(message["data"])
            self.revision = max(self.revision, int(note["revision"]))
            if note["origin"] == self.replica or self._known.get(note["file"]) == note["sha"]:
                continue
            version = await store.current(note["file"])
            if version is not None and version.sha == note["sha"]:
                await self._apply(version)
        raise ConnectionError("the Redis subscription ended")

    def _set_state(self, state: str, error: str | None) -> None:
        # An outage is said once when Redis goes and once when it is back: each failed
        # attempt of one outage (its reason may change) is a DEBUG line only.
        if state == self.state == "degraded" or (state == self.state and error == self.error):
            log.debug("cluster: Redis at %s still unreachable: %s", self.address.shown(), error)
            return
        recovered = self.state == "degraded"
        self.state, self.error, self.since = state, error, time.time()
        if state == "connected":
            self._connected.set()
        else:
            self._connected.clear()
        if state == "degraded":
            log.log(
                self.outage_level,
                "cluster: Redis at %s is unreachable (%s); serving this replica's tools "
                "locally and retrying",
                self.address.shown(),
                str(error).rstrip("."),
            )
        elif state == "connected" and recovered:  # the pair of the line above
            level = min(self.outage_level, logging.INFO)
            log.log(level, "cluster: Redis at %s is back; sharing again", self.address.shown())
        elif state == "connected":
            log.info("cluster: connected to Redis at %s", self.address.shown())
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception:
                log.exception("cluster state listener failed")

    # -- in: the cluster into this folder ---------------------------------------------------

    async def _reconcile(self, store: ClusterStore) -> None:
        remote = await store.files()
        local = await asyncio.to_thread(self._loaded_files)
        for file, version in remote.items():
            self.revision = max(self.revision, version.revision)
            if file in self.pending and file in local:
                continue  # changed here while Redis was away: this replica's save wins
            if local.get(file, (None, ""))[0] != version.sha:
                await self._apply(version)
            else:
                self._known[file] = version.sha
        for file, (sha, text) in local.items():
            theirs = remote.get(file)
            if theirs is None or (file in self.pending and theirs.sha != sha):
                await self._publish(store, file, sha, text)
        self.pending.clear()

    async def _apply(self, version: FileVersion) -> None:
        path = self.folder / version.file
        self._known[version.file] = version.sha
        await asyncio.to_thread(self._write_and_load, path, version.text)
        self.applied += 1
        self.revision = max(self.revision, version.revision)

    def _write_and_load(self, path: Path, text: str) -> None:
        # Written beside the target under a temp suffix the watcher ignores, then renamed:
        # no reader, here or on a shared folder, ever sees half a file.
        temp = path.with_name(f".{path.name}.{os.getpid()}.cluster.tmp")
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, path)
        hand_over(self.registry, self.folder, path)

    # -- out: this folder into the cluster --------------------------------------------------

    def _on_registry_change(self, change: Any) -> None:
        source = directory_source_for(self.registry, self.folder)
        if source is not None and source.name in change.sources:
            self._scan_again.set()

    async def _scan_loop(self) -> None:
        while True:
            await self._scan_again.wait()
            self._scan_again.clear()
            await self._publish_changed()

    async def _publish_changed(self) -> None:
        local = await asyncio.to_thread(self._loaded_files)
        for file, (sha, text) in local.items():
            if self._known.get(file) == sha:
                continue
            store = self.store
            if store is None:
                self.pending.add(file)
                continue
            try:
                await self._publish(store, file, sha, text)
            except Exception as exc:
                self.pending.add(file)
                self._set_state("degraded", f"{type(exc).__name__}: {exc}")

    async def _publish(self, store: ClusterStore, file: str, sha: str, text: str) -> None:
        revision, new = await store.publish_file(file, sha, text, self.replica)
        self._known[file] = sha
        self.revision = max(self.revision, revision)
        self.published += new

    def _loaded_files(self) -> dict[str, tuple[str, str]]:
        """``file -> (sha, text)`` of the folder's tool files that loaded cleanly with their
        current content (a file mid-save or broken is left out until it loads)."""
        source = directory_source_for(self.registry, self.folder)
        states = source.status.get("files", {}) if source is not None else {}
        found: dict[str, tuple[str, str]] = {}
        for path in sorted(self.folder.glob("*.py")):
            if not is_tool_file(path, self.folder):
                continue
            state = states.get(path.name)
            if state is None or state.get("status") != "ok":
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            sha = content_hash(text)
            loaded = str(state.get("hash") or "")
            # no hash: the folder has not loaded this text yet (a new file the watcher put
            # off as a save in progress still shows "ok"), so it has not loaded cleanly
            if loaded and sha.startswith(loaded):
                found[path.name] = (sha, text)
        return found
