"""Credentials: looked up across providers, checked before calls, masked everywhere.

>>> store = CredentialStore(providers=[])          # no providers: nothing is set
>>> store.missing(ToolSpec("w", requires_credentials=("weather",)))
['weather']

Lookup order: environment (``NEXUS_CRED_<SERVICE>_<KEY>``) > system keyring (when
``keyring`` has a real backend) > ``<NEXUS_HOME>/credentials.json`` (mode 0600).

A ``requires_credentials`` entry is ``"service"`` (any key of it) or ``"service/key"``.
Every value a store knows is replaced by ``***`` by :meth:`CredentialStore.mask`, which the
registry runs over tool errors and audit lines, in every form :mod:`.masking` knows (other
case, base64, hex, URL-encoded, split across lines); every log record is masked the same
way. Values shorter than
:data:`MIN_MASKED_LENGTH` characters are not masked (they would blank ordinary words).
"""

from __future__ import annotations

import builtins
import json
import logging
import threading
import traceback
import weakref
from pathlib import Path
from typing import Any

from ..config.loading import nexus_home
from ..errors import MissingCredential, NexusError
from ..tools.credential_value import PendingCredential
from ..tools.spec import ToolSpec
from .masking import mask_text
from .providers import (
    CredentialFileError,
    EnvProvider,
    FileProvider,
    KeyringProvider,
    env_name,
)

__all__ = [
    "MIN_MASKED_LENGTH",
    "CredentialStore",
    "StoreView",
    "count_secret",
    "parse_requirement",
]

log = logging.getLogger(__name__)
MIN_MASKED_LENGTH = 4


def parse_requirement(entry: str) -> tuple[str, str | None]:
    """``"github/token"`` -> ``("github", "token")``; ``"github"`` -> ``("github", None)``."""
    service, _, key = entry.partition("/")
    return service.strip(), (key.strip() or None)


class CredentialStore:
    """Secrets for tools, from several providers. Values never appear in its repr.

    ``providers`` defaults to env, keyring (when usable) and the file under ``home``
    (``$NEXUS_HOME`` or ``~/.nexus``). ``keyring_backend`` forces a keyring backend
    object (tests, or a chosen backend).
    """

    def __init__(
        self,
        providers: list[Any] | None = None,
        *,
        home: str | Path | None = None,
        keyring_backend: Any = None,
    ) -> None:
        self.home = Path(home) if home is not None else nexus_home()
        if providers is None:
            providers = [EnvProvider()]
            if keyring_backend is not None or KeyringProvider.installed():
                providers.append(KeyringProvider(self.home / "keyring-index.json", keyring_backend))
            providers.append(FileProvider(self.home / "credentials.json"))
        self.providers = list(providers)
        self._seen: set[str] = set()  # values read or set through this store
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        _STORES.add(self)
        _install_log_masking()

    # -- lookup ---------------------------------------------------------------------------

    def provider(self, name: str) -> Any:
        for p in self.providers:
            if p.name == name:
                return p
        names = ", ".join(p.name for p in self.providers)
        raise NexusError(f"No credential provider {name!r}; available: {names}.")

    def lookup(self, service: str, key: str = "api_key") -> str | None:
        """The value, or ``None``. Raises :class:`CredentialFileError` when the value is not
        found elsewhere and the credentials file was refused (so the user learns why)."""
        refused: CredentialFileError | None = None
        for p in self.providers:
            try:
                value = p.get(service, key)
            except CredentialFileError as exc:
                refused = exc
                continue
            if value:
                self._remember(value)
                return value
        if refused is not None:
            raise refused
        return None

    def has(self, service: str, key: str | None = None) -> bool:
        for p in self.providers:
            try:
                found = p.get(service, key) if key is not None else p.has_service(service)
            except CredentialFileError as exc:
                self._warn_once(exc)
                continue
            if found:
                return True
        return False

    def missing(self, spec: ToolSpec) -> list[str]:
        """The ``requires_credentials`` entries of ``spec`` that are not set."""
        out = []
        for entry in spec.requires_credentials:
            service, key = parse_requirement(entry)
            if not self.has(service, key):
                out.append(entry)
        return out

    def require(self, spec: ToolSpec) -> None:
        """Raise :class:`MissingCredential` (saying how to set it) for the first missing
        credential of ``spec``; a refused credentials file raises its own clear error."""
        for entry in spec.requires_credentials:
            service, key = parse_requirement(entry)
            if self.has(service, key):
                continue
            self._raise_if_file_refused()
            raise MissingCredential(service, key, tool=spec.name)

    def view(self) -> StoreView:
        """What tools get as ``ctx.credentials``."""
        return StoreView(self)

    # -- changing -------------------------------------------------------------------------

    def default_provider(self) -> str:
        """``keyring`` when it has a real backend, else ``file``."""
        for p in self.providers:
            if not getattr(p, "writable", False):
                continue
            if isinstance(p, KeyringProvider) and p._backend is None and not p.usable():
                continue
            return str(p.name)
        raise NexusError("No writable credential provider is configured.")

    def set(self, service: str, key: str, value: str, provider: str | None = None) -> str:
        """Store ``value`` in ``provider`` (default: keyring when usable, else the file);
        returns the provider's name."""
        if not service or "/" in service or not key:
            raise NexusError(
                f"Invalid credential name {service!r}/{key!r}: give a service (no '/') and a key."
            )
        if not isinstance(value, str) or not value:
            raise NexusError(f"The value for {service}/{key} must be a non-empty string.")
        chosen = self.provider(provider or self.default_provider())
        if not getattr(chosen, "writable", False):
            raise NexusError(
                f"Provider {chosen.name!r} is read-only; set the environment variable "
                f"{env_name(service, key)} yourself, or use provider 'file' or 'keyring'."
            )
        chosen.set(service, key, value)
        self._remember(value)
        return str(chosen.name)

    def delete(self, service: str, key: str | None = None, provider: str | None = None) -> bool:
        """Delete ``service/key`` (every key of ``service`` when ``key`` is ``None``) from
        ``provider`` (default: every writable provider). Returns whether anything went."""
        targets = [self.provider(provider)] if provider else self.providers
        return any([p.delete(service, key) for p in targets if getattr(p, "writable", False)])

    def list(self) -> dict[str, list[str]]:
        """``{service: [keys]}`` across providers; never values."""
        out: dict[str, set[str]] = {}
        for p in self.providers:
            try:
                keys = p.keys()
            except CredentialFileError as exc:
                self._warn_once(exc)
                continue
            for service, names in keys.items():
                out.setdefault(service, set()).update(names)
        return {s: sorted(k) for s, k in sorted(out.items())}

    def describe(self) -> builtins.list[dict[str, str]]:
        """One row per stored credential: service, key, provider (never the value)."""
        rows = []
        for p in self.providers:
            try:
                keys = p.keys()
            except CredentialFileError as exc:
                self._warn_once(exc)
                continue
            for service, names in sorted(keys.items()):
                rows += [{"service": service, "key": k, "provider": p.name} for k in names]
        return rows

    # -- masking --------------------------------------------------------------------------

    def secrets(self) -> builtins.set[str]:
        """Every value this store knows (for masking)."""
        values = set(self._seen)
        for p in self.providers:
            try:
                values.update(p.values())
            except CredentialFileError:
                continue
        return {v for v in values if len(v) >= MIN_MASKED_LENGTH}

    def mask(self, text: str) -> str:
        """``text`` with every known secret value replaced by ``***``."""
        return _mask_with(text, self.secrets()) if text else text

    def _remember(self, value: str) -> None:
        with self._lock:
            self._seen.add(value)

    def _warn_once(self, exc: Exception) -> None:
        message = str(exc)
        if message not in self._warned:
            self._warned.add(message)
            log.warning("%s", message)

    def _raise_if_file_refused(self) -> None:
        for p in self.providers:
            if isinstance(p, FileProvider):
                p.keys()  # raises CredentialFileError when refused

    def __repr__(self) -> str:
        names = ", ".join(p.name for p in self.providers)
        return f"<CredentialStore providers=[{names}] services={len(self.list())}>"


class StoreView:
    """``ctx.credentials``: ``await get(service, key)``, ``get_sync(service, key)`` and
    ``has(service, key=None)``."""

    __slots__ = ("_store",)

    def __init__(self, store: CredentialStore) -> None:
        self._store = store

    def get(self, service: str, key: str = "api_key") -> PendingCredential:
        """For async tools: ``await`` it for the value (or :class:`MissingCredential`).
        Used unawaited, it says to await it or to call :meth:`get_sync`."""
        return PendingCredential(service, key, self.get_sync)

    def get_sync(self, service: str, key: str = "api_key") -> str:
        """For sync tools: the value, or :class:`MissingCredential`."""
        value = self._store.lookup(service, key)
        if value is None:
            raise MissingCredential(service, key)
        return value

    def has(self, service: str, key: str | None = None) -> bool:
        return self._store.has(service, key)

    def __repr__(self) -> str:
        return "<CredentialsView>"


def count_secret(text: str, secret: str) -> int:
    """How often ``secret`` appears in ``text``: raw, JSON/repr-escaped, URL-quoted or
    base64-encoded. For tests that scan answers, logs and widgets for a canary secret."""
    import base64
    import urllib.parse

    forms = {
        secret,
        json.dumps(secret)[1:-1],
        repr(secret)[1:-1],
        urllib.parse.quote(secret),
        base64.b64encode(secret.encode()).decode().rstrip("="),
    }
    return sum(text.count(form) for form in forms if form)


def _mask_with(text: str, secrets: set[str]) -> str:
    return mask_text(text, secrets)  # every form a secret leaks in: see .masking


# -- log masking --------------------------------------------------------------------------

_STORES: weakref.WeakSet[CredentialStore] = weakref.WeakSet()
_install_lock = threading.Lock()
_installed = False
_masking = threading.local()  # this thread is masking a record (see the factory)


def _all_secrets() -> set[str]:
    out: set[str] = set()
    for store in list(_STORES):
        out |= store.secrets()
    return out


def _install_log_masking() -> None:
    """Mask every log record as it is made (once per process).

    A record factory rather than a handler filter: it covers every handler, including ones
    added later (pytest's caplog, a notebook's), and every logger: a tool's ``ctx.log`` and
    the loggers a tool file makes itself (``logging.getLogger(__name__)``).
    """
    global _installed
    with _install_lock:
        if _installed:
            return
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            # A record made while masking (a store that logs as it reads its secrets: a
            # keyring that fails) is not masked again: that looped without end.
            if _STORES and not getattr(_masking, "active", False):
                _masking.active = True
                try:
                    _mask_record(record)
                except Exception:  # masking must never break logging itself
                    record.msg, record.args = "<log message withheld: masking failed>", ()
                finally:
                    _masking.active = False
            return record

        logging.setLogRecordFactory(factory)
        _installed = True


def _mask_record(record: logging.LogRecord) -> None:
    secrets = _all_secrets()
    if not secrets:
        return
    message = record.getMessage()
    masked = _mask_with(message, secrets)
    if masked != message:
        record.msg, record.args = masked, ()
    if record.exc_info and record.exc_info[1] is not None:
        text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        hidden = _mask_with(text, secrets)
        if hidden != text:
            record.exc_text = hidden
