"""The audit log: one JSON line per call, allowed or not.

>>> import tempfile, pathlib
>>> log = AuditLog(pathlib.Path(tempfile.mkdtemp()) / "audit.jsonl")
>>> log.record(tool="add", principal=None, request_id="r1", client="python",
...            decision="allow", duration=0.01, error=None)
>>> log.read()[0]["tool"]
'add'

A line holds: ``time`` (UTC ISO 8601), ``tool``, ``principal``, ``request_id``, ``client``,
``decision`` (``allow``, ``deny``, ``ask-denied``, ``invalid``, ``unavailable``),
``duration`` (seconds) and ``error``. Argument values are never written; error text goes
through the credential masker first. Lines are appended with one ``write`` on an
``O_APPEND`` descriptor, so concurrent writers (threads or processes) never interleave.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = ["AuditLog"]

_MAX_ERROR = 2000
_CHECK_EVERY_S = 1.0


class AuditLog:
    """Append-only JSON-lines audit log at ``path`` (created 0600 with its folder).

    ``masker`` (usually ``CredentialStore.mask``) is applied to every text field.
    """

    def __init__(self, path: str | Path, masker: Callable[[str], str] | None = None) -> None:
        self.path = Path(path)
        self.masker = masker
        self._lock = threading.Lock()
        self._count = 0
        self._fd: int | None = None
        self._next_check = 0.0

    def record(
        self,
        *,
        tool: str,
        principal: str | None,
        request_id: str | None,
        client: str | None,
        decision: str,
        duration: float,
        error: str | None,
        summary: str | None = None,
        error_type: str | None = None,
    ) -> None:
        """Append one line (``summary``: the call in one readable line, masked here too;
        ``error_type``: the error's type, ``CancelledError`` for a call its caller cancelled).
        Raises ``OSError`` when the file cannot be written (the registry logs it and carries
        on)."""
        if error is not None:
            error = self._mask(error)[:_MAX_ERROR]
        entry = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "tool": tool,
            "principal": principal,
            "request_id": request_id,
            "client": client,
            "decision": decision,
            "duration": round(float(duration), 6),
            "error": error,
        }
        if error is not None and error_type:
            entry["error_type"] = error_type
        if summary:
            entry["summary"] = self._mask(summary)
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode()
        with self._lock:
            # One descriptor for the log's life: opening the file per call cost ~10% of a
            # call's CPU. O_APPEND keeps each line one atomic write even with other writers.
            # A deleted file is noticed at once (fstat of the open descriptor is cheap), one
            # renamed away within a second (a path stat per call cost 1% of a served call).
            now = time.monotonic()
            if self._fd is None or os.fstat(self._fd).st_nlink == 0:
                self._reopen()
            elif now >= self._next_check:
                if not self.path.exists():
                    self._reopen()
                self._next_check = now + _CHECK_EVERY_S
            assert self._fd is not None
            os.write(self._fd, line)
            self._count += 1

    def _reopen(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def close(self) -> None:
        """Close the log file (it reopens on the next record)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __del__(self) -> None:
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)  # type: ignore[arg-type]

    def _mask(self, text: str) -> str:
        return self.masker(text) if self.masker is not None else text

    def read(self, last: int | None = None) -> list[dict[str, Any]]:
        """The entries written so far (the last ``last`` ones when given)."""
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        if last is not None:
            lines = lines[-last:]
        return [json.loads(line) for line in lines if line.strip()]

    @property
    def written(self) -> int:
        """Lines written by this object (not by other processes)."""
        return self._count

    def __repr__(self) -> str:
        return f"AuditLog({str(self.path)!r})"
