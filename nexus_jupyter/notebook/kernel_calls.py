"""A kernel's call counts as the Jupyter server sees them (see :mod:`.kernel_link`).

A notebook calls its own tools in its kernel (``%tool call``, a form, ``registry().call``
from Python): those calls are counted by the session registry, which the server never sees.
So the kernel reports them the way it reports its tools' test status:

- each tool's entry in the kernel's ``tools/list`` carries ``_meta["nexus-jupyter/calls"]``:
  the notebook's figures for that tool (:meth:`CallReporter.meta`, the
  :class:`~nexus_jupyter.core.telemetry.stats.ToolStats` dict);
- :meth:`CallReporter.run` looks at the session's counts once a second (a dict read in this
  process) and relists only when they changed, so the server hears of new calls through
  ``tools/list_changed`` within a second, and an idle notebook costs the server nothing.

Calls the server makes (the sidebar's Try, an MCP client of ``/nexus/mcp``) go through the
link's own view of the tools and count on the server, not here: the two sets never overlap.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ..core.tools.kernel_listing import CALLS_META_KEY

__all__ = ["CALLS_EVERY_S", "CallReporter"]

log = logging.getLogger(__name__)

#: How often the kernel looks whether its notebook called a tool since it last reported.
CALLS_EVERY_S = 1.0


class CallReporter:
    """Reports the session registry's call figures in the kernel's tool listing."""

    def __init__(
        self, session: Any, relist: Callable[[], None], marks: Callable[[], Any] | None = None
    ) -> None:
        self.session = session
        self._relist = relist
        # what else the listing carries that changes without an event (the approval marks:
        # an "Approve always" in the notebook), relisted too when it changed since a look
        self._marks = marks
        self._last_marks: Any = marks() if marks is not None else None
        self._counts: dict[str, tuple[int, int]] = {}
        self._figures: dict[str, dict[str, Any]] = {}

    def meta(self, name: str) -> dict[str, Any] | None:
        """The ``_meta`` tool ``name``'s listing carries (``None``: never called here)."""
        figures = self._figures.get(name)
        return {CALLS_META_KEY: figures} if figures is not None else None

    def look(self) -> bool:
        """Take the notebook's figures if its counts changed since the last look, and relist;
        whether they changed."""
        counts = self.session.call_counts()
        marks = self._marks() if self._marks is not None else None
        if counts == self._counts and marks == self._last_marks:
            return False
        self._last_marks = marks
        self._counts = counts
        self._figures = {name: s.to_dict() for name, s in self.session.stats().items()}
        self._relist()
        return True

    async def run(self, every: float = CALLS_EVERY_S) -> None:
        """Look every ``every`` seconds until cancelled (a failed look is logged, not fatal)."""
        while True:
            try:
                self.look()
            except Exception:
                log.exception("nexus_jupyter: reporting the notebook's calls failed")
            await asyncio.sleep(every)
