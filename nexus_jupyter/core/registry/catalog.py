"""The resources and prompts a registry offers besides its tools: :class:`Catalog`.

Each origin (a tool folder, the notebook, an MCP server) hands over its complete set with
:meth:`Catalog.replace`; listeners hear about every change (the MCP server turns that into
``list_changed`` notifications). Names follow the tools' rule: the first origin to offer a
resource URI or prompt name wins it.

The catalog of a registry is :func:`catalog_of` ``(registry)``, made on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any
from weakref import WeakKeyDictionary

from ..tools.offers import PromptDef, ResourceDef

__all__ = ["Catalog", "CatalogListener", "catalog_of"]

Offer = ResourceDef | PromptDef
CatalogListener = Callable[["Catalog"], Any]


class Catalog:
    """Resources, resource templates and prompts, grouped by the origin that offers them."""

    def __init__(self) -> None:
        self._by_origin: dict[str, tuple[Offer, ...]] = {}
        self._listeners: list[CatalogListener] = []
        self._update_listeners: list[Callable[[str], Any]] = []
        self._lock = threading.Lock()
        self.generation = 0

    def replace(self, origin: str, offers: Iterable[Offer]) -> None:
        """Make ``offers`` the complete set of ``origin`` (empty removes it)."""
        new = tuple(offers)
        with self._lock:
            if self._by_origin.get(origin, ()) == new:
                return
            if new:
                self._by_origin[origin] = new
            else:
                self._by_origin.pop(origin, None)
            self.generation += 1
            listeners = list(self._listeners)
        _tell(listeners, self)

    def subscribe(self, listener: CatalogListener) -> Callable[[], None]:
        """Call ``listener(catalog)`` after each change of the set (from the changing thread)."""
        return self._listen(self._listeners, listener)

    def resource_updated(self, uri: str) -> None:
        """Say that the contents of resource ``uri`` changed (an upstream server said so)."""
        with self._lock:
            listeners = list(self._update_listeners)
        _tell(listeners, uri)

    def subscribe_updates(self, listener: Callable[[str], Any]) -> Callable[[], None]:
        """Call ``listener(uri)`` on each :meth:`resource_updated` (from the saying thread)."""
        return self._listen(self._update_listeners, listener)

    def _listen(self, listeners: list[Any], listener: Any) -> Callable[[], None]:
        with self._lock:
            listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in listeners:
                    listeners.remove(listener)

        return unsubscribe

    def _all(self) -> list[Offer]:
        with self._lock:
            return [o for origin in sorted(self._by_origin) for o in self._by_origin[origin]]

    def resources(self) -> list[ResourceDef]:
        """Fixed-URI resources (first origin wins a URI)."""
        return _first_by(
            [o for o in self._all() if isinstance(o, ResourceDef) and not o.is_template],
            lambda r: r.uri,
        )

    def templates(self) -> list[ResourceDef]:
        return _first_by(
            [o for o in self._all() if isinstance(o, ResourceDef) and o.is_template],
            lambda r: r.uri,
        )

    def prompts(self) -> list[PromptDef]:
        return _first_by([o for o in self._all() if isinstance(o, PromptDef)], lambda p: p.name)

    def find_resource(self, uri: str) -> ResourceDef | None:
        """The resource for ``uri``: a fixed one first, else the first template matching."""
        for item in self.resources():
            if item.uri == uri:
                return item
        for item in self.templates():
            if item.match(uri) is not None:
                return item
        return None

    def find_template(self, uri_template: str) -> ResourceDef | None:
        return next((t for t in self.templates() if t.uri == uri_template), None)

    def find_prompt(self, name: str) -> PromptDef | None:
        return next((p for p in self.prompts() if p.name == name), None)

    def origin_of(self, offer: Offer) -> str | None:
        """The origin that offers ``offer`` (a tool file, ``notebook``, ``mcp:<server>``)."""
        with self._lock:
            return next((o for o, items in self._by_origin.items() if offer in items), None)


def _tell(listeners: list[Any], what: Any) -> None:
    for listener in listeners:
        try:
            listener(what)
        except Exception:  # a listener's failure is its own; the others still hear
            import logging

            logging.getLogger(__name__).exception("catalog listener failed")


def _first_by(items: list[Any], key: Callable[[Any], str]) -> list[Any]:
    seen: dict[str, Any] = {}
    for item in items:
        seen.setdefault(key(item), item)
    return list(seen.values())


_CATALOGS: WeakKeyDictionary[Any, Catalog] = WeakKeyDictionary()
_CATALOGS_LOCK = threading.Lock()


def catalog_of(registry: Any) -> Catalog:
    """The catalog of ``registry`` (one per registry, made on first use)."""
    with _CATALOGS_LOCK:
        catalog = _CATALOGS.get(registry)
        if catalog is None:
            catalog = _CATALOGS[registry] = Catalog()
        return catalog
