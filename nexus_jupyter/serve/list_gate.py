"""The first ``tools/list`` waits for the sources that are still on their first attempt.

An MCP server of nex.yaml connects in the background, half a second to seconds after
``serve`` starts, and many clients list the tools once, right after ``initialize``, and
never again (they ignore ``list_changed``). So until every source has settled (see
:func:`settled`) or ``wait`` seconds have passed since serving began, a ``tools/list``
waits for that; from then on no listing waits. ``initialize`` itself never waits.

    gate = ListGate(registry, wait=5.0)  # on the serving loop, when serving begins
    await gate.ready()                    # before answering a tools/list
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["ListGate", "settled"]


def settled(state: Any) -> bool:
    """Whether a source has finished its first attempt: an MCP server is ready or failed
    (details ``state``), the availability checks of declared and CLI tools have run (details
    ``checks``). Other sources (a toolset, a folder) are settled once loaded."""
    if state.error:
        return True
    if state.kind == "mcp":
        return state.details.get("state") not in (None, "connecting", "starting")
    if state.kind == "config" and hasattr(state.source, "publish_availability"):
        return "checks" in state.details
    return True


class ListGate:
    """Open once ``registry``'s sources have settled or ``wait`` seconds have passed since
    it was made; :meth:`ready` returns at once from then on (``wait=0``: always open)."""

    def __init__(self, registry: Any, wait: float) -> None:
        self.registry = registry
        loop = asyncio.get_running_loop()
        self._deadline = loop.time() + max(0.0, wait)
        self._open = wait <= 0 or self._settled()

    def _settled(self) -> bool:
        return all(settled(s) for s in self.registry.sources())

    async def ready(self) -> None:
        """Return once the gate is open (at most ``wait`` s after it was made)."""
        if self._open:
            return
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()

        def on_change(change: Any) -> None:  # any thread: a watcher, an MCP session
            try:
                loop.call_soon_threadsafe(changed.set)
            except RuntimeError:
                pass  # the serving loop has just shut down

        unsubscribe = self.registry.subscribe(on_change)
        try:
            while not self._settled():
                remaining = self._deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    await asyncio.wait_for(changed.wait(), remaining)
                except TimeoutError:
                    break
                changed.clear()
        finally:
            unsubscribe()
        self._open = True
