"""Where secrets are kept: environment variables, a 0600 file, the system keyring.

Every provider answers ``get(service, key) -> str | None`` and ``keys() -> {service: [keys]}``;
writable ones also ``set`` and ``delete``. No provider ever logs or reprs a value.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = [
    "CredentialFileError",
    "EnvProvider",
    "FileProvider",
    "KeyringProvider",
    "env_name",
]

log = logging.getLogger(__name__)
ENV_PREFIX = "NEXUS_CRED_"


def _env_part(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).upper()


def env_name(service: str, key: str) -> str:
    """``NEXUS_CRED_<SERVICE>_<KEY>``: ``env_name("weather-api", "api_key")`` is
    ``NEXUS_CRED_WEATHER_API_API_KEY``."""
    return f"{ENV_PREFIX}{_env_part(service)}_{_env_part(key)}"


class CredentialFileError(ConfigError):
    """Raised when the credentials file is unsafe (readable by others) or unreadable."""


class EnvProvider:
    """Read-only: ``NEXUS_CRED_<SERVICE>_<KEY>`` environment variables."""

    name = "env"
    writable = False

    def get(self, service: str, key: str) -> str | None:
        return os.environ.get(env_name(service, key))

    def has_service(self, service: str) -> bool:
        prefix = f"{ENV_PREFIX}{_env_part(service)}_"
        return any(k.startswith(prefix) and v for k, v in os.environ.items())

    def keys(self) -> dict[str, list[str]]:
        # Names are upper-cased and ambiguous ("A_B_C"); show the common "_API_KEY" suffix
        # as key "api_key", otherwise split at the last underscore.
        out: dict[str, list[str]] = {}
        for name in os.environ:
            if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX:
                continue
            rest = name[len(ENV_PREFIX) :]
            if rest.endswith("_API_KEY") and len(rest) > 8:
                service, key = rest[:-8], "API_KEY"
            else:
                service, _, key = rest.rpartition("_")
            if service and key:
                out.setdefault(service.lower(), []).append(key.lower())
        return out

    def values(self) -> list[str]:
        return [v for k, v in os.environ.items() if k.startswith(ENV_PREFIX) and v]

    def __repr__(self) -> str:
        return "EnvProvider()"


class FileProvider:
    """``<NEXUS_HOME>/credentials.json`` (``{service: {key: value}}``), mode 0600.

    The file is refused (:class:`CredentialFileError`) when other users could read it.
    """

    name = "file"
    writable = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._cache: tuple[tuple[int, int, int, int], dict[str, dict[str, str]]] | None = None

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return {}
        # masking reads the values often: re-read only when the file changed
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_mode)
        if self._cache is not None and self._cache[0] == stamp:
            return {s: dict(k) for s, k in self._cache[1].items()}
        if os.name == "posix" and st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise CredentialFileError(
                f"Refusing to read credentials file {str(self.path)!r}: other users can access "
                f"it (mode {stat.S_IMODE(st.st_mode):04o}). Run `chmod 600 {self.path}`."
            )
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError) as exc:
            raise CredentialFileError(
                f"Cannot read credentials file {str(self.path)!r} ({type(exc).__name__}); "
                "fix or delete it and set the credentials again."
            ) from None
        if not isinstance(data, dict):
            raise CredentialFileError(
                f"Credentials file {str(self.path)!r} must hold a JSON object; delete it and "
                "set the credentials again."
            )
        clean = {
            str(s): {str(k): str(v) for k, v in keys.items()}
            for s, keys in data.items()
            if isinstance(keys, dict)
        }
        self._cache = (stamp, clean)
        return {s: dict(k) for s, k in clean.items()}

    def _write(self, data: dict[str, dict[str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(self.path.name + ".tmp")
        # created 0600 from the start: the secret is never on disk with wider permissions
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, json.dumps(data, indent=1, sort_keys=True).encode())
        finally:
            os.close(fd)
        os.replace(tmp, self.path)

    def get(self, service: str, key: str) -> str | None:
        return self._read().get(service, {}).get(key)

    def has_service(self, service: str) -> bool:
        return bool(self._read().get(service))

    def keys(self) -> dict[str, list[str]]:
        return {s: sorted(k) for s, k in self._read().items() if k}

    def values(self) -> list[str]:
        return [v for keys in self._read().values() for v in keys.values()]

    def set(self, service: str, key: str, value: str) -> None:
        with self._lock:
            data = self._read()
            data.setdefault(service, {})[key] = value
            self._write(data)

    def delete(self, service: str, key: str | None = None) -> bool:
        with self._lock:
            data = self._read()
            if service not in data or (key is not None and key not in data[service]):
                return False
            if key is None:
                del data[service]
            else:
                del data[service][key]
                if not data[service]:
                    del data[service]
            self._write(data)
            return True

    def __repr__(self) -> str:
        return f"FileProvider({str(self.path)!r})"


class KeyringProvider:
    """The system keyring (``keyring`` package), under service names ``nexus:<service>``.

    Keyrings cannot list their entries, so the names (never the values) are kept in
    ``<NEXUS_HOME>/keyring-index.json``.
    """

    name = "keyring"
    writable = True

    def __init__(self, index_path: Path, backend: Any = None) -> None:
        # keyring itself is imported on first use: probing its backends costs ~0.4 s
        self._backend = backend
        self.index_path = index_path
        self._lock = threading.Lock()

    @staticmethod
    def installed() -> bool:
        return importlib.util.find_spec("keyring") is not None

    @staticmethod
    def usable() -> bool:
        """Whether ``keyring`` is installed with a real backend (not the "fail" one)."""
        try:
            import keyring
            from keyring.backends import fail
        except ImportError:
            return False
        return not isinstance(keyring.get_keyring(), fail.Keyring)

    def _ring(self) -> Any:
        if self._backend is None:
            import keyring

            self._backend = keyring.get_keyring()
        return self._backend

    def _index(self) -> dict[str, list[str]]:
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return (
            {str(s): [str(k) for k in keys] for s, keys in data.items()}
            if isinstance(data, dict)
            else {}
        )

    def _save_index(self, index: dict[str, list[str]]) -> None:
        self.index_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.index_path.write_text(json.dumps(index, indent=1, sort_keys=True), encoding="utf-8")

    def get(self, service: str, key: str) -> str | None:
        if key not in self._index().get(service, []):
            return None  # never stored here: do not wake the keyring up
        try:
            value = self._ring().get_password(f"nexus:{service}", key)
        except Exception as exc:  # a locked or broken keyring must not break listing
            log.warning("keyring lookup for %s/%s failed: %s", service, key, type(exc).__name__)
            return None
        return str(value) if value is not None else None

    def has_service(self, service: str) -> bool:
        return any(self.get(service, k) is not None for k in self._index().get(service, []))

    def keys(self) -> dict[str, list[str]]:
        return {s: sorted(k) for s, k in self._index().items() if k}

    def values(self) -> list[str]:
        found = (self.get(s, k) for s, keys in self._index().items() for k in keys)
        return [v for v in found if v]

    def set(self, service: str, key: str, value: str) -> None:
        from keyring.backends import fail

        if isinstance(self._ring(), fail.Keyring):
            raise ConfigError(
                "No system keyring is available here; store the credential with "
                "provider 'file' instead (or install a keyring backend)."
            )
        with self._lock:
            self._ring().set_password(f"nexus:{service}", key, value)
            index = self._index()
            if key not in index.setdefault(service, []):
                index[service].append(key)
            self._save_index(index)

    def delete(self, service: str, key: str | None = None) -> bool:
        with self._lock:
            index = self._index()
            keys = index.get(service, [])
            targets = keys if key is None else [k for k in keys if k == key]
            for k in targets:
                try:
                    self._ring().delete_password(f"nexus:{service}", k)
                except Exception as exc:
                    log.warning(
                        "keyring delete of %s/%s failed: %s", service, k, type(exc).__name__
                    )
            remaining = [k for k in keys if k not in targets]
            if remaining:
                index[service] = remaining
            else:
                index.pop(service, None)
            self._save_index(index)
            return bool(targets)

    def __repr__(self) -> str:
        backend = type(self._backend).__name__ if self._backend is not None else "not loaded"
        return f"KeyringProvider({backend})"
