"""A tiny option parser for magic lines whose mistakes are one clear sentence.

argparse prints usage to stderr and exits; a magic must instead raise a ``UsageError`` that
names the bad option and the close one the user probably meant.

>>> parse_options("%tool list", "--source notebook x", {"--source": "one"})
{'source': 'notebook', 'args': ['x']}
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..core.errors import NexusError

__all__ = ["OptionKind", "parse_options"]

OptionKind = Literal["one", "many", "flag"]


def _tokens(line: str | Sequence[str]) -> list[str]:
    if not isinstance(line, str):
        return list(line)
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise NexusError(f"Could not read {line.strip()!r}: {exc}; check the quotes.") from None


def parse_options(
    command: str,
    line: str | Sequence[str],
    spec: Mapping[str, OptionKind],
    *,
    max_args: int | None = None,
) -> dict[str, Any]:
    """Parse ``line`` (or tokens) against ``spec`` (``{"--name": "one" | "many" | "flag"}``).

    Returns option values keyed by name without dashes (``requires_credential``) and the
    positional arguments under ``"args"``. Raises :class:`NexusError` on a mistake.
    """
    out: dict[str, Any] = {"args": []}
    tokens = _tokens(line)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not token.startswith("--") or token == "--":
            out["args"].append(token)
            continue
        flag, _, inline = token.partition("=")
        kind = spec.get(flag)
        if kind is None:
            close = difflib.get_close_matches(flag, list(spec), n=1, cutoff=0.5)
            hint = f" Did you mean {close[0]}?" if close else ""
            known = ", ".join(spec) or "none"
            raise NexusError(f"{command} has no option {flag!r}.{hint} Options: {known}.")
        key = flag[2:].replace("-", "_")
        if kind == "flag":
            out[key] = True
            continue
        if inline:
            value = inline
        elif i < len(tokens) and not tokens[i].startswith("--"):
            value, i = tokens[i], i + 1
        else:
            raise NexusError(f"{command}: option {flag} needs a value, e.g. {flag} VALUE.")
        if kind == "many":
            out.setdefault(key, []).append(value)
        else:
            out[key] = value
    if max_args is not None and len(out["args"]) > max_args:
        extra = out["args"][max_args]
        raise NexusError(f"{command} got an unexpected argument {extra!r}.")
    return out
