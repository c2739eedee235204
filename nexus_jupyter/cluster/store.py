"""What a cluster keeps in Redis, and the only module that knows the key layout.

Keys (``P`` is the prefix, ``nexus`` unless the URL says ``?prefix=...``)::

    P:files               hash  file name -> current version (JSON: sha, text, revision, origin, at)
    P:history:<file>      list  every version of that file, oldest first (the last HISTORY_KEEP)
    P:revision            int   the cluster's publication counter
    P:published           pub/sub channel: {"file", "sha", "revision", "origin"} per publication
    P:approvals           hash  "<tool>\\0<definition hash>" -> {"by", "at"}; channel P:approved
    P:audit               stream of call records (capped at AUDIT_KEEP)
    P:bus                 pub/sub channel of MCP listen events (see :mod:`.bus`)
    P:task:<id>           one task's state (see :mod:`.tasks`); channel P:task-cancelled
    P:tokens              hash  API token name -> its kept fields (see :mod:`.tokens`)

A publication is one Lua script, so the counter, the current version, the history and the
announcement change together, and publishing content that is already current is a no-op
(replicas sharing a folder may all publish the same save).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from ..core.errors import ConfigError

__all__ = [
    "AUDIT_KEEP",
    "HISTORY_KEEP",
    "ClusterAddress",
    "ClusterStore",
    "FileVersion",
    "follow_channel",
    "stop_task",
]

log = logging.getLogger(__name__)

HISTORY_KEEP = 100
AUDIT_KEEP = 10_000
#: Waits between reconnection attempts: quick at first, then every RETRY_MAX_S.
RETRY_FIRST_S = 0.2
RETRY_MAX_S = 2.0

# KEYS: files, history, revision. ARGV: file, sha, text, origin, at, keep, channel.
# Returns {revision, 1 if this was a new version else 0}.
_PUBLISH = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local known = cjson.decode(current)
  if known.sha == ARGV[2] then return {known.revision, 0} end
end
local revision = redis.call('INCR', KEYS[3])
local entry = cjson.encode({sha=ARGV[2], text=ARGV[3], origin=ARGV[4],
                            at=tonumber(ARGV[5]), revision=revision})
redis.call('HSET', KEYS[1], ARGV[1], entry)
redis.call('RPUSH', KEYS[2], entry)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[6]), -1)
redis.call('PUBLISH', ARGV[7], cjson.encode({file=ARGV[1], sha=ARGV[2],
                                             revision=revision, origin=ARGV[4]}))
return {revision, 1}
"""


@dataclass(frozen=True, slots=True)
class ClusterAddress:
    """A parsed ``redis://HOST:PORT/N[?prefix=P]``; ``redis_url`` is what redis-py takes."""

    redis_url: str
    prefix: str

    @classmethod
    def parse(cls, url: str) -> ClusterAddress:
        """Raises :class:`ConfigError` for anything but a ``redis://`` / ``rediss://`` URL."""
        parts = urlsplit(url.strip())
        if parts.scheme not in ("redis", "rediss") or not parts.hostname:
            raise ConfigError(
                f"Cluster address {url!r} is not a Redis URL; use redis://HOST:PORT/N "
                "(for example redis://127.0.0.1:6379/0) in --cluster or `cluster:` in nex.yaml."
            )
        query = parse_qs(parts.query)
        prefix = (query.pop("prefix", ["nexus"]) or ["nexus"])[0]
        rest = "&".join(f"{k}={v}" for k, values in query.items() for v in values)
        plain = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
        return cls(plain, prefix)

    @property
    def url(self) -> str:
        """The cluster URL again, prefix included (what :meth:`parse` reads back)."""
        if self.prefix == "nexus":
            return self.redis_url
        joint = "&" if "?" in self.redis_url else "?"
        return f"{self.redis_url}{joint}prefix={self.prefix}"

    def shown(self) -> str:
        """The address without a password, for logs and status."""
        parts = urlsplit(self.redis_url)
        netloc = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(frozen=True, slots=True)
class FileVersion:
    """One published version of a tool file."""

    file: str
    sha: str
    text: str
    revision: int
    origin: str
    at: float

    @classmethod
    def from_json(cls, file: str, raw: str | bytes) -> FileVersion:
        data = json.loads(raw)
        return cls(
            file, data["sha"], data["text"], int(data["revision"]), data["origin"], data["at"]
        )

    def summary(self) -> dict[str, Any]:
        """Everything but the text (for listings)."""
        return {
            "file": self.file,
            "sha": self.sha,
            "revision": self.revision,
            "origin": self.origin,
            "at": self.at,
        }


class ClusterStore:
    """Async access to one cluster's keys. Every method may raise redis-py's
    ``ConnectionError``/``TimeoutError`` when Redis is away; callers decide how to degrade."""

    def __init__(self, address: ClusterAddress, *, timeout: float = 2.0) -> None:
        import redis.asyncio as aioredis

        self.address = address
        # Any: redis-py's annotations cover bytes and str at once, but decode_responses=True
        # makes every answer a str.
        self.redis: Any = aioredis.Redis.from_url(
            address.redis_url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            decode_responses=True,
        )
        self._publish_script = self.redis.register_script(_PUBLISH)
        p = address.prefix
        self.files_key, self.revision_key = f"{p}:files", f"{p}:revision"
        self.published_channel, self.bus_channel = f"{p}:published", f"{p}:bus"
        self.approvals_key, self.approved_channel = f"{p}:approvals", f"{p}:approved"
        self.audit_key = f"{p}:audit"
        self.tasks_changed_channel, self.tokens_key = f"{p}:task-changed", f"{p}:tokens"

    def task_key(self, task_id: str) -> str:
        return f"{self.address.prefix}:task:{task_id}"

    def task_index_key(self, owner: str, session: str) -> str:
        """The sorted set (by creation time) of one requestor's task ids."""
        return f"{self.address.prefix}:task-index:{len(owner)}:{owner}:{session}"

    def history_key(self, file: str) -> str:
        return f"{self.address.prefix}:history:{file}"

    async def close(self) -> None:
        await self.redis.aclose()

    async def ping(self) -> bool:
        return bool(await self.redis.ping())

    # -- tool files -------------------------------------------------------------------------

    async def publish_file(self, file: str, sha: str, text: str, origin: str) -> tuple[int, bool]:
        """Store ``text`` as the current version of ``file`` and announce it; returns
        ``(revision, new)`` (``new`` is false when that content was already current)."""
        keys = [self.files_key, self.history_key(file), self.revision_key]
        args: list[str | float] = [
            file,
            sha,
            text,
            origin,
            time.time(),
            HISTORY_KEEP,
            self.published_channel,
        ]
        revision, new = await self._publish_script(keys=keys, args=args)
        return int(revision), bool(new)

    async def current(self, file: str) -> FileVersion | None:
        raw = await self.redis.hget(self.files_key, file)
        return FileVersion.from_json(file, raw) if raw is not None else None

    async def files(self) -> dict[str, FileVersion]:
        """Every published file's current version."""
        raw: Mapping[str, str] = await self.redis.hgetall(self.files_key)
        return {name: FileVersion.from_json(name, value) for name, value in raw.items()}

    async def history(self, file: str) -> list[FileVersion]:
        """Every kept version of ``file``, oldest first."""
        raw = await self.redis.lrange(self.history_key(file), 0, -1)
        return [FileVersion.from_json(file, item) for item in raw]

    # -- approvals and audit ----------------------------------------------------------------

    async def approve(self, tool: str, definition_hash: str, by: str) -> None:
        """Record an "approve always" and tell every replica."""
        field = f"{tool}\0{definition_hash}"
        value = json.dumps({"by": by, "at": time.time()})
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.approvals_key, field, value)
            pipe.publish(self.approved_channel, field)
            await pipe.execute()

    async def approvals(self) -> list[tuple[str, str]]:
        """Every shared approval as ``(tool, definition_hash)``."""
        fields = await self.redis.hkeys(self.approvals_key)
        return [(f.split("\0", 1)[0], f.split("\0", 1)[1]) for f in fields if "\0" in f]

    async def append_audit(self, records: list[dict[str, Any]]) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            for record in records:
                fields = {k: json.dumps(v) for k, v in record.items()}
                pipe.xadd(self.audit_key, fields, maxlen=AUDIT_KEEP, approximate=True)
            await pipe.execute()

    async def audit(self, last: int = 100) -> list[dict[str, Any]]:
        """The newest ``last`` audit records of the whole cluster, oldest first."""
        raw = await self.redis.xrevrange(self.audit_key, count=last)
        return [{k: json.loads(v) for k, v in fields.items()} for _id, fields in reversed(raw)]


async def follow_channel(
    address: ClusterAddress,
    channel: str,
    deliver: Callable[[str], Awaitable[None]],
    on_state: Callable[[ClusterStore | None], None] | None = None,
    *,
    outage_level: int = logging.WARNING,
) -> None:
    """Hand every message of the store's ``channel`` (an attribute name, such as
    ``"bus_channel"``) to ``deliver``, until cancelled. When Redis goes away it reconnects
    (after RETRY_FIRST_S, doubling up to RETRY_MAX_S); ``on_state`` gets the connected
    store once subscribed and ``None`` when the subscription is lost. The loss is logged
    once per outage at ``outage_level`` (a :class:`~.replica.ClusterReplica`, whose
    ``cluster`` source says the outage, passes DEBUG), not at every attempt; the recovery
    once, at INFO (or DEBUG with the loss)."""
    wait = RETRY_FIRST_S
    failing = False  # said already that this outage began
    while True:
        store = ClusterStore(address)
        name = getattr(store, channel)
        try:
            pubsub = store.redis.pubsub()
            await pubsub.subscribe(name)
            wait = RETRY_FIRST_S
            if failing:
                level = min(outage_level, logging.INFO)
                log.log(level, "cluster: Redis channel %s followed again", name)
                failing = False
            if on_state is not None:
                on_state(store)
            async for message in pubsub.listen():
                if message.get("type") == "message":
                    await deliver(str(message["data"]))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # Redis away, refused, timed out, restarted
            if not failing:
                log.log(
                    outage_level,
                    "cluster: lost Redis channel %s at %s (%s); reconnecting by itself",
                    name,
                    address.shown(),
                    exc,
                )
            failing = True
        finally:
            if on_state is not None:
                on_state(None)
            with contextlib.suppress(Exception):
                await store.close()
        await asyncio.sleep(wait)
        wait = min(wait * 2, RETRY_MAX_S)


async def stop_task(task: asyncio.Task[None] | None) -> None:
    """Cancel a follower task and wait until it has closed its connection."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
