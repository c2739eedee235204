"""Finding a stored secret in text, in the forms it leaks in, and replacing it with ``***``.

A secret rarely leaks verbatim only. :func:`mask_text` also finds it

- in another case (``API-KEY`` for ``api-key``), escaped as in a repr or a JSON string;
- base64-encoded (standard and URL-safe alphabets, at any of the three byte alignments it can
  have inside a longer encoded text), hex-encoded, URL-encoded (``%2F``, ``+``);
- split across lines (a newline, or a JSON-escaped ``\\n``, between any two characters, with
  the indentation around it).

The patterns of a set of secrets are compiled into one regular expression, once per set
(:func:`_pattern` caches it), so masking a result costs one linear scan.

>>> mask_text("token=S3cr3tValue and s3cr3tvalue", {"S3cr3tValue"})
'token=*** and ***'
"""

from __future__ import annotations

import base64
import functools
import io
import json
import re
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any, TextIO

__all__ = ["MASK", "MaskingStream", "mask_text", "secret_forms"]

MASK = "***"
# a line break (or an escaped one) with the indentation around it, between two characters
_BREAK = r"(?:[ \t]*(?:\r?\n|\\r?\\n)[ \t]*)?"


def _base64_cores(raw: bytes) -> Iterable[str]:
    """The encoded secret at each byte alignment, less the edge characters that depend on
    its neighbours in a longer text."""
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        yield encode(raw).decode().rstrip("=")
        for shift in (1, 2):
            encoded = encode(b"\0" * shift + raw).decode().rstrip("=")
            core = encoded[4 : len(encoded) - 2]
            if len(core) >= 6:
                yield core


def secret_forms(secret: str) -> set[str]:
    """The texts ``secret`` may appear as (see the module docs), each at least 4 chars."""
    raw = secret.encode()
    forms = {
        secret,
        repr(secret)[1:-1],
        json.dumps(secret)[1:-1],
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
        raw.hex(),
        *_base64_cores(raw),
    }
    return {form for form in forms if len(form) >= 4}


def _spread(form: str) -> str:
    """A pattern for ``form`` that also matches it broken across lines."""
    return _BREAK.join(re.escape(char) for char in form)


@functools.lru_cache(maxsize=32)
def _pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    forms = {form for secret in secrets for form in secret_forms(secret)}
    if not forms:
        return None
    # longest first, so a secret containing another is masked whole
    alternatives = sorted(forms, key=len, reverse=True)
    return re.compile("|".join(_spread(form) for form in alternatives), re.IGNORECASE)


def mask_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret in ``secrets`` replaced by ``***``."""
    if not text:
        return text
    pattern = _pattern(frozenset(secrets))
    return pattern.sub(MASK, text) if pattern is not None else text


class MaskingStream(io.TextIOBase):
    """A text stream that masks what is written to it line by line, then passes it on: the
    stdout and stderr of a server whose tools may ``print`` what they were given."""

    def __init__(self, inner: TextIO, mask: Callable[[str], str]) -> None:
        self._inner = inner
        self._mask = mask
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        if "\n" in self._pending:
            # keep the last line back until it ends: a secret may be printed in parts
            done, _, self._pending = self._pending.rpartition("\n")
            self._inner.write(self._mask(done + "\n"))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._inner.write(self._mask(self._pending))
            self._pending = ""
        self._inner.flush()

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._inner, "encoding", "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
