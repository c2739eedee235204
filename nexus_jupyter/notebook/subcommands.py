"""The table of ``%tool`` subcommands.

Each subcommand lives in the module of its feature (``magic_export``, ``magic_mcp``, ...) and
registers itself here with :func:`subcommand`; the ``%tool`` magic only dispatches. A
subcommand is a thin shim: it parses ``argv`` and calls the public Python API.

    @subcommand("versions", usage="%tool versions NAME",
                summary="List the saved versions of a tool file.",
                example="%tool versions weather")
    def versions(ctx: MagicContext, argv: list[str]) -> Any:
        ...

User mistakes raise :class:`~nexus_jupyter.core.errors.NexusError` (or ``UsageError``); the
magic turns them into a ``UsageError`` with one clear sentence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["SUBCOMMANDS", "MagicContext", "Subcommand", "subcommand"]


@dataclass
class MagicContext:
    """What a subcommand gets: the shell, the session registry and the raw line."""

    shell: Any
    registry: Any
    line: str


@dataclass(frozen=True)
class Subcommand:
    name: str
    handler: Callable[[MagicContext, list[str]], Any]
    usage: str
    summary: str
    example: str
    details: str = ""
    complete: Callable[[MagicContext, list[str]], list[str]] | None = None


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(
    name: str,
    *,
    usage: str,
    summary: str,
    example: str,
    details: str = "",
    complete: Callable[[MagicContext, list[str]], list[str]] | None = None,
) -> Callable[[Callable[[MagicContext, list[str]], Any]], Callable[[MagicContext, list[str]], Any]]:
    """Register a ``%tool NAME`` subcommand (used as a decorator)."""

    def register(
        handler: Callable[[MagicContext, list[str]], Any],
    ) -> Callable[[MagicContext, list[str]], Any]:
        SUBCOMMANDS[name] = Subcommand(name, handler, usage, summary, example, details, complete)
        return handler

    return register
