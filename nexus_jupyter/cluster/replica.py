"""Make a registry one replica of a cluster: ``nexus-tools serve --cluster redis://...``.

    replica = ClusterReplica.join(registry, "redis://127.0.0.1:6379/0", folder="tools/dynamic")
    await serve_http(registry, ..., bus=replica.bus)
    replica.close()

Joining wires five things to the same Redis (see the modules for each): the tools folder
(:mod:`.node`), MCP listen events (:mod:`.bus`), "approve always" decisions and the audit
stream (:mod:`.shared`), and the state of tasks (:mod:`.tasks`; the server is given
``replica.bus`` and ``replica.task_store``). It also adds a source named ``cluster`` holding one read-only tool,
``cluster_status``, and whose status is an error while Redis is away, so the state shows
wherever sources show (``%tool list``, the catalog, ``registry.status()``) and any MCP
client can ask a replica how it is.

That source is the one report of a Redis outage (once when Redis goes, once when it is
back): the replica builds its node, bus, task store and token store with
``outage_level=logging.DEBUG``, so their own view of the outage is detail. A part built
without a replica (a bare :class:`~.node.ClusterNode`, a token store of the CLI) keeps its
own warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..core.errors import ConfigError, SourceError
from ..core.tools.decorator import tool
from ..core.tools.spec import SourceKind
from ..core.tools.tool import Tool
from .bus import RedisSubscriptionBus
from .node import ClusterNode
from .shared import SharedApprovals, SharedAudit
from .store import ClusterAddress

if TYPE_CHECKING:
    from .tokens import RedisTokenStore

__all__ = ["ClusterReplica", "ClusterStatusSource"]

SOURCE_NAME = "cluster"


class ClusterStatusSource:
    """The ``cluster`` source: the ``cluster_status`` tool, in error while degraded."""

    name = SOURCE_NAME
    kind: SourceKind = "config"
    namespace: str | None = None

    def __init__(self, replica: ClusterReplica) -> None:
        self.replica = replica
        self.status_tool = _status_tool(replica)

    def load(self) -> Iterable[Tool]:
        """The one report of an outage (each other part logs its view at DEBUG): what is
        affected, that the replica keeps serving, that it reconnects by itself."""
        node = self.replica.node
        if node.state == "degraded":
            why = str(node.error).rstrip(".")
            raise SourceError(
                f"Redis at {node.address.shown()} is unreachable ({why}). This replica "
                "keeps serving its own tools and calls; what it shares through Redis (tool "
                "files published by other replicas, approvals, the audit stream, API token "
                "changes, tasks) waits until Redis is back, and saves made here meanwhile are "
                "published then. It reconnects by itself; check that redis-server runs there."
            )
        return [self.status_tool]

    @property
    def recovered(self) -> str:
        """What the person reads when Redis is back (the pair of the error above)."""
        return (
            f"Redis at {self.replica.node.address.shown()} is back; this replica shares its "
            "tools, approvals, audit, tokens and tasks again"
        )


def _status_tool(replica: ClusterReplica) -> Tool:
    # One Tool object for the source's life: a reload after each state change then changes
    # the source's status, not its tools, so clients are not told the list changed.

    @tool(permission="read_only", categories=["cluster"])
    def cluster_status() -> dict[str, Any]:
        """This replica's view of its cluster: Redis state, revision, pending files.

        `state` is `connected`, or `degraded` while Redis is unreachable (the replica
        then serves the tools it has and retries).
        """
        return replica.status

    return Tool.from_function(cluster_status, source=SOURCE_NAME, source_kind="config")


class ClusterReplica:
    """The parts that make one registry a replica; build with :meth:`join`."""

    def __init__(self, registry: Any, node: ClusterNode, bus: RedisSubscriptionBus) -> None:
        from .tasks import RedisTaskStore

        self.registry, self.node, self.bus = registry, node, bus
        self.task_store = RedisTaskStore(node.address, outage_level=node.outage_level)

    @classmethod
    def join(
        cls, registry: Any, url: str, folder: str | Path, *, replica: str | None = None
    ) -> ClusterReplica:
        """Join the cluster at ``url`` (raises :class:`ConfigError` for a bad URL) and start
        syncing ``folder`` in the background; does not wait for Redis."""
        address = ClusterAddress.parse(url)
        # the `cluster` source added below says each outage: the parts log theirs as detail
        quiet = logging.DEBUG
        node = ClusterNode(registry, address, folder, replica=replica, outage_level=quiet)
        self = cls(registry, node, RedisSubscriptionBus(address, node.replica, outage_level=quiet))
        if registry.policy is not None:
            registry.policy = SharedApprovals(registry.policy, node)
        credentials = getattr(registry, "credentials", None)
        registry.audit = SharedAudit(
            registry.audit, node, credentials.mask if credentials is not None else None
        )
        registry.add_source(ClusterStatusSource(self))
        node.on_state_change(self._show_state)
        node.start()
        return self

    @property
    def status(self) -> dict[str, Any]:
        return {**self.node.status, "bus": "connected" if self.bus.connected else "local"}

    def token_store(self, url: str | None = None) -> RedisTokenStore | None:
        """The API token store in this cluster's Redis (or at ``url``, when that is the same
        Redis and prefix), its outages said by the ``cluster`` source; ``None`` for a
        ``url`` elsewhere (that store reports its own outages)."""
        from .tokens import RedisTokenStore

        address = self.node.address
        if url is not None:
            try:
                named = ClusterAddress.parse(url)
            except ConfigError:  # a token file, not a Redis URL
                return None
            if (_server(named), named.prefix) != (_server(address), address.prefix):
                return None
            address = named
        return RedisTokenStore(address, outage_level=self.node.outage_level)

    def _show_state(self, node: ClusterNode) -> None:
        self.registry.refresh(SOURCE_NAME)

    def close(self) -> None:
        self.node.stop()


def _server(address: ClusterAddress) -> tuple[str, str, int, str]:
    """What names one Redis database: ``redis://h:6379`` and ``redis://h:6379/0`` are one."""
    parts = urlsplit(address.redis_url)
    database = parts.path.strip("/") or "0"
    return (parts.scheme, parts.hostname or "", parts.port or 6379, database)
