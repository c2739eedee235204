"""Who shows a person the sign-in link of an OAuth-protected MCP server: the notebook
registers an opener that displays it. Kept apart from :mod:`.mcp_auth` (which needs the mcp
SDK) so that ``%load_ext`` can register one without importing anything heavy."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

__all__ = ["add_link_opener", "offer_to_openers"]

log = logging.getLogger(__name__)
_link_openers: list[Callable[[str, str], Any]] = []


def add_link_opener(opener: Callable[[str, str], Any]) -> Callable[[], None]:
    """Call ``opener(server_name, url)`` whenever a server needs a person to sign in.
    Returns a function that removes it."""
    _link_openers.append(opener)
    return lambda: _link_openers.remove(opener) if opener in _link_openers else None


def offer_to_openers(server: str, url: str) -> None:
    for opener in list(_link_openers):
        try:
            opener(server, url)
        except Exception:  # one broken opener must not keep the link from the others
            log.exception("a sign-in link opener failed")
