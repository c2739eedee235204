"""API tokens in a cluster's Redis, so a token made once works on every replica and a
revocation reaches all of them within :data:`REFRESH_S` (the auth extension's
:class:`~nexus_jupyter.serve.auth.tokens.TokenStore`).

    nexus-tools tokens create alice --token-file redis://127.0.0.1:6379/0
    nexus-tools serve --transport http --auth tokens --cluster redis://127.0.0.1:6379/0

Key ``P:tokens``: a hash, token name -> the kept fields (JSON; never the secret). ``lookup``
runs on the serving loop for every request, so it answers from a local copy refreshed at
most every :data:`REFRESH_S`; while Redis is away it keeps answering from that copy (the
tokens known when Redis left still work; a revocation made meanwhile waits for Redis).

Key ``P:tokens:kept`` marks a store that has held tokens. Revoking the last token leaves
it; a Redis restarted without persistence (or flushed) loses it with the hash. A replica
that then finds neither writes back the tokens of its last copy and says so once, as the
cluster does for published tool files: a restart of Redis does not lock every client out.
Only a copy read at most :data:`WRITE_BACK_WITHIN_S` before the replica found Redis failing
(or, with no failure seen, before now) is written back: an older one (a replica that had no
request for a while) may hold tokens revoked since, and those must not come back.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import asdict
from typing import Any

from ..core.errors import ConfigError
from ..serve.auth.tokens import ApiToken, check_token_request, hash_secret, new_secret
from .store import ClusterAddress

__all__ = ["REFRESH_S", "RedisTokenStore"]

log = logging.getLogger(__name__)

#: The longest a replica goes on accepting a token another replica (or the CLI) revoked.
REFRESH_S = 0.5
#: After Redis failed to answer, how long lookups use the last copy before asking again.
RETRY_S = 2.0
#: The oldest copy a replica writes back into a Redis that lost the token store: a
#: revocation made in the last seconds before the loss may come back, never an older one.
WRITE_BACK_WITHIN_S = 5.0


class RedisTokenStore:
    """A ``TokenStore`` shared by every replica of a cluster."""

    def __init__(
        self, address: ClusterAddress, *, timeout: float = 1.0, outage_level: int = logging.WARNING
    ) -> None:
        import redis

        self.address = address
        #: The level an outage is logged at: DEBUG for a replica's store, whose ``cluster``
        #: source says the outage (see :meth:`~.replica.ClusterReplica.token_store`).
        self.outage_level = outage_level
        self.key = f"{address.prefix}:tokens"  # ClusterStore.tokens_key (that one is async)
        self.marker = f"{self.key}:kept"
        self.redis: Any = redis.Redis.from_url(
            address.redis_url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            decode_responses=True,
        )
        self._lock = threading.Lock()
        self._by_digest: dict[str, ApiToken] = {}
        self._fresh_until = 0.0
        self._read_at: float | None = None  # when the copy was last read from Redis
        self._failed_at: float | None = None  # the first failure to read it since

    @classmethod
    def at(cls, url: str) -> RedisTokenStore:
        return cls(ClusterAddress.parse(url))

    def create(self, name: str, grant: str = "workspace_write") -> tuple[ApiToken, str]:
        level = check_token_request(name, grant)
        secret = new_secret()
        token = ApiToken(name, level, time.time(), hash_secret(secret))
        if not self._call(self.redis.hsetnx, self.key, name, json.dumps(asdict(token))):
            raise ConfigError(
                f"A token named {name!r} exists already in {self.address.shown()}; revoke it "
                f"first (`nexus-tools tokens revoke {name}`) or pick another name."
            )
        self._call(self.redis.set, self.marker, "1")
        self._fresh_until = 0.0
        return token, secret

    def tokens(self) -> list[ApiToken]:
        raw = self._call(self.redis.hgetall, self.key)
        return sorted((ApiToken(**json.loads(v)) for v in raw.values()), key=lambda t: t.created)

    def revoke(self, name: str) -> bool:
        pipe = self.redis.pipeline(transaction=True)  # the marker says "revoked", not "lost"
        pipe.hdel(self.key, name)
        pipe.set(self.marker, "1")
        removed = bool(self._call(pipe.execute)[0])
        self._fresh_until = 0.0
        return removed

    def lookup(self, secret: str) -> ApiToken | None:
        digest = hash_secret(secret)
        with self._lock:
            now = time.monotonic()
            if now >= self._fresh_until:
                try:
                    self._by_digest = {t.digest: t for t in self._current(now)}
                    self._fresh_until = now + REFRESH_S
                    if self._failed_at is not None:  # the pair of the line below (info)
                        log.log(
                            min(self.outage_level, logging.INFO),
                            "cluster tokens: the token store at %s answers again",
                            self.address.shown(),
                        )
                    self._read_at, self._failed_at = now, None
                except ConfigError as exc:
                    # Once per outage (later attempts at DEBUG), at the store's outage level.
                    level = logging.DEBUG if self._failed_at is not None else self.outage_level
                    if self._failed_at is None:
                        self._failed_at = now
                    reason = str(exc).rstrip(".")
                    log.log(level, "cluster tokens: %s; answering from the last copy", reason)
                    # Not again for a while: this runs on the serving loop, per request.
                    self._fresh_until = now + RETRY_S
            return self._by_digest.get(digest)

    def _current(self, now: float) -> list[ApiToken]:
        """The tokens in Redis; those of the last copy written back when Redis lost the
        store and the copy is recent enough (see the module docs)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(self.key)
        pipe.exists(self.marker)
        raw, kept = self._call(pipe.execute)
        held = sorted(self._by_digest.values(), key=lambda t: t.created)
        if kept:
            return [ApiToken(**json.loads(v)) for v in raw.values()]
        lost = self._failed_at if self._failed_at is not None else now
        recent = self._read_at is not None and lost - self._read_at <= WRITE_BACK_WITHIN_S
        if raw or not held:  # a store from before the marker, or one that never held tokens
            if raw:
                self._call(self.redis.set, self.marker, "1")
            return [ApiToken(**json.loads(v)) for v in raw.values()]
        if not recent:  # said once: the copy is dropped with the store
            log.warning(
                "cluster tokens: the token store at %s was empty (Redis restarted without "
                "persistence, or was flushed); this replica's copy is too old to write back "
                "(a token revoked since would come back). Create the tokens again with "
                "`nexus-tools tokens create`, and turn on Redis persistence (appendonly yes).",
                self.address.shown(),
            )
            return []
        pipe = self.redis.pipeline(transaction=False)
        for token in held:
            pipe.hsetnx(self.key, token.name, json.dumps(asdict(token)))
        pipe.set(self.marker, "1")
        self._call(pipe.execute)
        log.warning(
            "cluster tokens: the token store at %s was empty (Redis restarted without "
            "persistence, or was flushed); wrote back the %d token(s) this replica held. "
            "Turn on Redis persistence (appendonly yes) so a restart keeps them.",
            self.address.shown(),
            len(held),
        )
        raw = self._call(self.redis.hgetall, self.key)
        return [ApiToken(**json.loads(v)) for v in raw.values()]

    def _call(self, method: Any, *args: Any) -> Any:
        from redis.exceptions import RedisError

        try:
            return method(*args)
        except (RedisError, OSError) as exc:
            raise ConfigError(
                f"Cannot reach the token store at {self.address.shown()} ({exc}); check "
                "that redis-server runs there."
            ) from None
