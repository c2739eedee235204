"""What a source gets from the registry: a narrow way to publish, nothing more.

A source never holds the registry. When the registry adds a source it hands it a
:class:`SourcePublisher` bound to that source's name (through ``attach(publisher)`` before the
first load, and ``async start(publisher)`` for background work). With it a source can

- :meth:`~SourcePublisher.replace` its complete set (a reload, a reconnect);
- :meth:`~SourcePublisher.update` a few tools (one file saved): the registry's work is then
  proportional to the tools that changed, not to the source's size;
- :meth:`~SourcePublisher.set_status` (an error, per-file details) without touching its tools;
- :meth:`~SourcePublisher.offer` its resources and prompts;
- run coroutines on the registry's background loop (:attr:`~SourcePublisher.loop`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .state import RegistryChanged

if TYPE_CHECKING:
    from ..tools.tool import Tool
    from .loop import BackgroundLoop

__all__ = ["UNCHANGED", "Details", "PublishTarget", "SourcePublisher"]

#: A source's details: a dict, or a function that builds it when someone reads the status
#: (so a folder of two thousand files does not rebuild its per-file map on every save).
Details = Mapping[str, Any] | Callable[[], Mapping[str, Any]]
#: "Leave it as it was" for ``error`` in :meth:`SourcePublisher.update` and ``set_status``.
UNCHANGED: Any = object()


class PublishTarget(Protocol):
    """The registry side of a :class:`SourcePublisher` (implemented by ``Registry``)."""

    @property
    def loop(self) -> BackgroundLoop: ...

    def publish(
        self,
        name: str,
        tools: Iterable[Tool],
        *,
        error: str | None = None,
        details: Details | None = None,
        unavailable: Mapping[str, str] | None = None,
    ) -> RegistryChanged: ...

    def update(
        self,
        name: str,
        *,
        upserts: Iterable[Tool] = (),
        removals: Iterable[str] = (),
        unavailable: Mapping[str, str | None] | None = None,
        error: Any = UNCHANGED,
        details: Details | None = None,
    ) -> RegistryChanged: ...

    def set_status(
        self, name: str, *, error: Any = UNCHANGED, details: Details | None = None
    ) -> RegistryChanged: ...


class SourcePublisher:
    """Publishes for one source (see the module docstring)."""

    __slots__ = ("_target", "name")

    def __init__(self, target: PublishTarget, name: str) -> None:
        self._target = target
        self.name = name

    @property
    def loop(self) -> BackgroundLoop:
        """The registry's background loop, for the source's own long-running work."""
        return self._target.loop

    def replace(
        self,
        tools: Iterable[Tool],
        *,
        error: str | None = None,
        details: Details | None = None,
        unavailable: Mapping[str, str] | None = None,
    ) -> RegistryChanged:
        """Swap in the source's complete set (names before namespacing)."""
        return self._target.publish(
            self.name, tools, error=error, details=details, unavailable=unavailable
        )

    def update(
        self,
        *,
        upserts: Iterable[Tool] = (),
        removals: Iterable[str] = (),
        unavailable: Mapping[str, str | None] | None = None,
        error: Any = UNCHANGED,
        details: Details | None = None,
    ) -> RegistryChanged:
        """Change some tools: add or replace ``upserts``, drop ``removals``. ``unavailable``
        sets (a reason) or clears (``None``) a tool's reason it cannot run; ``error`` is
        left as it was unless given."""
        return self._target.update(
            self.name,
            upserts=upserts,
            removals=removals,
            unavailable=unavailable,
            error=error,
            details=details,
        )

    def offer(self, offers: Iterable[Any]) -> None:
        """Replace the source's resources and prompts (``@resource`` / ``@prompt``, or an
        upstream server's) in the registry's catalog."""
        from .catalog import catalog_of

        catalog_of(self._target).replace(self.name, list(offers))

    def resource_updated(self, uri: str) -> None:
        """Say that the contents of the source's resource ``uri`` changed."""
        from .catalog import catalog_of

        catalog_of(self._target).resource_updated(uri)

    def set_status(self, *, error: Any = UNCHANGED, details: Details | None = None) -> None:
        """Record an error (``None`` clears it) and details without changing the tools."""
        self._target.set_status(self.name, error=error, details=details)
