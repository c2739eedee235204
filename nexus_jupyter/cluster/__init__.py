"""Several ``nexus-tools serve`` replicas acting as one server, with Redis as the shared engine.

``nexus-tools serve --transport http --cluster redis://HOST:PORT/N`` (or ``cluster:`` in
``nex.yaml``) joins a replica: tool files published through any replica (a save in its
tools folder, ``create_dynamic_tool``, a notebook export, ``nexus-tools publish FILE``) are
stored in Redis with their history and loaded by every replica; MCP listen events cross
replicas; "approve always" decisions and the audit stream are shared. Redis going away
leaves each replica serving what it has, with a visible status, until it is back.

This package needs the ``redis`` package; the core never imports it.
"""

from __future__ import annotations

from .bus import RedisSubscriptionBus
from .node import ClusterNode
from .replica import ClusterReplica
from .store import ClusterAddress, ClusterStore, FileVersion

__all__ = [
    "ClusterAddress",
    "ClusterNode",
    "ClusterReplica",
    "ClusterStore",
    "FileVersion",
    "RedisSubscriptionBus",
]
