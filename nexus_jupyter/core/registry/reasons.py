"""Why a tool cannot run, worded for whoever is told.

A source gives the registry one reason per unavailable tool. Most are facts any caller can
use ("the server closed the connection; reconnecting"). Some end in a fix only the person
running nexus can make: choose a search provider in nex.yaml, install a program, correct a
command. An agent over MCP can do none of that, and a reason that tells it to edit nex.yaml
sends it the wrong way; such a reason is a :class:`Reason`, which also carries its wording
for an agent, naming who can fix it::

    Reason(
        "'rg' is not installed (not on PATH). Install it, or correct ...",
        agent="'rg' is not installed where this server runs, and only the person running "
        "the server can fix that: ask the user to set up this tool",
    )

Listings, ``check``, the notebook, the sidebar (whose user runs the Jupyter server) and the
audit log show the text; :func:`reason_for` picks the wording of a call's refusal
(:mod:`.calls`).
"""

from __future__ import annotations

from typing import Any

from ..tools.context import Caller

__all__ = ["Reason", "reason_for"]


class Reason(str):
    """A reason (the string itself, for the person running nexus) with ``agent``, its
    wording for an agent over MCP. Like any reason it has no final period: the face ends
    the sentence."""

    agent: str

    def __new__(cls, text: str, agent: str) -> Reason:
        made = super().__new__(cls, text)
        made.agent = agent
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # the text alone would lose the agent's wording
        return (Reason, (str(self), self.agent))


def reason_for(reason: str | None, caller: Caller) -> str | None:
    """``reason`` as ``caller`` is told it: a :class:`Reason`'s wording for an agent when
    the call came over MCP, else the reason as it is."""
    if caller.face == "mcp" and isinstance(reason, Reason):
        return reason.agent
    return reason
