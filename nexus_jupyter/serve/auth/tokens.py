"""Static API tokens for ``nexus-tools serve --auth tokens``: created once, stored hashed.

    store = FileTokenStore()                       # <NEXUS_HOME>/tokens.json
    token, secret = store.create("alice", "read_only")
    store.lookup(secret).name                      # 'alice' (the calls' principal)
    store.revoke("alice")

The secret is shown once, by :meth:`TokenStore.create`; only its SHA-256 is kept. A slow
password hash is not needed: a secret is 256 random bits, so its hash cannot be reversed by
guessing. :class:`TokenStore` is the seam for other backends (a Redis store shared by
replicas); :class:`FileTokenStore` is the one that ships.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ...core.config.loading import nexus_home
from ...core.errors import ConfigError
from ...core.tools.spec import PERMISSIONS, Permission

__all__ = [
    "ApiToken",
    "FileTokenStore",
    "TokenStore",
    "hash_secret",
    "new_secret",
    "open_token_store",
]

#: What every secret starts with, so a leaked one is recognisable (and secret scanners can
#: be taught the pattern).
SECRET_PREFIX = "nxt_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
#: Principals the policy gives a meaning of its own: a token must not claim them.
RESERVED_NAMES = frozenset({"local", "unknown"})


@dataclass(frozen=True, slots=True)
class ApiToken:
    """What is kept of a token: never the secret itself."""

    name: str  # the principal of every call made with it
    grant: Permission
    created: float  # Unix time
    digest: str  # SHA-256 of the secret, hex


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def check_token_request(name: str, grant: str) -> Permission:
    """``grant`` as a permission level. Raises :class:`ConfigError` for a bad name or grant."""
    if not _NAME.match(name) or name in RESERVED_NAMES:
        raise ConfigError(
            f"Token name {name!r} cannot be used: it becomes the calls' principal, so use "
            "1-64 letters, digits, '.', '_', '@' or '-' (starting with a letter or digit), "
            f"and not {' or '.join(sorted(RESERVED_NAMES))}."
        )
    if grant not in PERMISSIONS:
        raise ConfigError(f"Unknown grant {grant!r}; choose one of {', '.join(PERMISSIONS)}.")
    return grant


@runtime_checkable
class TokenStore(Protocol):
    """Where API tokens live. One token per name; names are the calls' principals.

    ``lookup`` runs on the serving loop for every HTTP request, so it must be quick (a local
    read, or a cache in front of a network store) and must see revocations made by other
    processes (``nexus-tools tokens revoke`` while the server runs) within a second.
    """

    def create(self, name: str, grant: str = "workspace_write") -> tuple[ApiToken, str]:
        """Make a token for ``name``; returns it and its secret (the only time it is shown).
        Raises :class:`ConfigError` when ``name`` has a token already or is not usable."""
        ...

    def tokens(self) -> list[ApiToken]:
        """Every token, oldest first."""
        ...

    def revoke(self, name: str) -> bool:
        """Delete ``name``'s token; ``False`` when it had none."""
        ...

    def lookup(self, secret: str) -> ApiToken | None:
        """The token whose secret is ``secret``, else ``None``."""
        ...


class FileTokenStore:
    """Tokens in a JSON file (mode 0600), re-read when it changes on disk so that a
    revocation by another process takes effect at the next request."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else nexus_home() / "tokens.json"
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._by_digest: dict[str, ApiToken] = {}

    def create(self, name: str, grant: str = "workspace_write") -> tuple[ApiToken, str]:
        level = check_token_request(name, grant)
        with self._lock:
            tokens = self._read()
            if any(t.name == name for t in tokens):
                raise ConfigError(
                    f"A token named {name!r} exists already; revoke it first "
                    f"(`nexus-tools tokens revoke {name}`) or pick another name."
                )
            secret = new_secret()
            token = ApiToken(name, level, time.time(), hash_secret(secret))
            self._write([*tokens, token])
        return token, secret

    def tokens(self) -> list[ApiToken]:
        with self._lock:
            return self._read()

    def revoke(self, name: str) -> bool:
        with self._lock:
            tokens = self._read()
            kept = [t for t in tokens if t.name != name]
            if len(kept) == len(tokens):
                return False
            self._write(kept)
            return True

    def lookup(self, secret: str) -> ApiToken | None:
        digest = hash_secret(secret)
        with self._lock:
            self._refresh()
            found = self._by_digest.get(digest)
        # The dict lookup compared digests of secrets, not the secrets: nothing to leak by time.
        return found

    # -- the file -------------------------------------------------------------------------

    def _refresh(self) -> None:
        try:
            info = self.path.stat()
            stamp = (info.st_mtime_ns, info.st_size)
        except FileNotFoundError:
            stamp = None
        if stamp != self._stamp or stamp is None:
            self._by_digest = {t.digest: t for t in self._read()}
            self._stamp = stamp

    def _read(self) -> list[ApiToken]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"Cannot read the token store {str(self.path)!r}: {exc}. Fix or delete the "
                "file (deleting it revokes every token)."
            ) from None
        try:
            return [ApiToken(**entry) for entry in raw.get("tokens", [])]
        except (TypeError, AttributeError) as exc:
            raise ConfigError(
                f"The token store {str(self.path)!r} is not in the expected shape ({exc}); "
                "fix or delete it (deleting it revokes every token)."
            ) from None

    def _write(self, tokens: list[ApiToken]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"tokens": [asdict(t) for t in tokens]}, indent=1)
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(partial, self.path)  # readers see the old file or the new one, never half
        self._stamp = None


def open_token_store(token_file: str | Path | None = None) -> TokenStore:
    """The token store that ``nexus-tools tokens`` and ``serve --auth tokens`` share: the
    file ``token_file`` (default ``<NEXUS_HOME>/tokens.json``), or a cluster's Redis when it
    is a ``redis://HOST:PORT/N`` URL (shared by the cluster's replicas)."""
    if isinstance(token_file, str) and token_file.startswith(("redis://", "rediss://")):
        from ...cluster.tokens import RedisTokenStore

        return RedisTokenStore.at(token_file)
    return FileTokenStore(token_file)
