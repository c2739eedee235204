"""``nexus-tools``: the registry on the command line (see :mod:`.main`)."""

from __future__ import annotations

from .main import build_parser, main

__all__ = ["build_parser", "main"]
