"""Cell tracking: the tools a notebook's cells define, kept in the registry's ``notebook`` source.

After every cell (IPython's ``post_run_cell`` event) :meth:`NotebookTracker.scan` looks at the
user namespace:

- a ``@tool`` function that is new or was redefined by this cell (a different function object
  than last time) is registered with the cell's id and source; re-running a changed cell
  updates the tool (event ``updated``, new version);
- a tracked name that disappeared (``del f``) removes its tool;
- a function that did not change is left alone, so a tool handed over to the tools folder
  (``%tool export``) stays with the folder until its cell is run again.

``@resource`` and ``@prompt`` functions of the namespace go to the registry's catalog
(served over MCP) on every scan.

``%%tool`` marks the functions its cell defines with ``@tool`` options, then the same scan
registers them.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..core.registry.catalog import catalog_of
from ..core.tools.decorator import get_tool_meta
from ..core.tools.offers import get_offer

__all__ = ["NotebookTracker", "ScanReport"]

log = logging.getLogger(__name__)


class ScanReport:
    """What one scan did: tool names registered, removed, and failures by variable."""

    def __init__(self) -> None:
        self.registered: list[str] = []
        self.removed: list[str] = []
        self.failed: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.registered or self.removed or self.failed)

    def __repr__(self) -> str:
        return (
            f"ScanReport(registered={self.registered}, removed={self.removed}, "
            f"failed={self.failed})"
        )


def _marked(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Variables holding ``@tool`` functions (IPython's ``_``, ``_3`` ... are skipped: they
    hold output history, not definitions)."""
    out = {}
    for var, obj in list(namespace.items()):
        if var.startswith("_") or not callable(obj):
            continue
        try:
            if get_tool_meta(obj) is not None:
                out[var] = obj
        except Exception:  # objects with exotic __getattr__ are simply not tools
            continue
    return out


class NotebookTracker:
    """Keeps the ``notebook`` source in step with the ``@tool`` functions of a namespace.

    ``registry`` is a registry or a zero-argument function returning one (the session
    registry is made lazily, on the first tool). ``namespace`` is the user namespace.
    """

    def __init__(self, registry: Any | Callable[[], Any], namespace: Mapping[str, Any]) -> None:
        self._registry = registry
        self.namespace = namespace
        self._seen: dict[str, Any] = {}  # variable -> function object last registered
        self._tool_names: dict[str, str] = {}  # variable -> tool name
        self._offers: tuple[Any, ...] = ()  # the @resource / @prompt functions last seen
        self._lock = threading.Lock()

    @property
    def registry(self) -> Any:
        reg = self._registry
        return reg() if callable(reg) and not hasattr(reg, "add") else reg

    def tracked(self) -> dict[str, str]:
        """Variable name -> tool name, for what this tracker registered."""
        return dict(self._tool_names)

    def scan(self, *, origin: str = "", source_code: str | None = None) -> ScanReport:
        """Register new or redefined ``@tool`` functions and remove deleted ones; hand the
        namespace's ``@resource`` / ``@prompt`` functions to the registry's catalog."""
        report = ScanReport()
        self._scan_offers()
        with self._lock:
            current = _marked(self.namespace)
            changed = {v: f for v, f in current.items() if self._seen.get(v) is not f}
            gone = [v for v in self._seen if v not in current]
            if not changed and not gone:
                return report
            registry = self.registry
            for var, fn in changed.items():
                self._register(registry, var, fn, origin, source_code, report)
            for var in gone:
                self._seen.pop(var, None)
                name = self._tool_names.pop(var, None)
                if name is not None:
                    self._drop(registry, name, report)
        return report

    def _scan_offers(self) -> None:
        offers = []
        for var, obj in list(self.namespace.items()):
            if var.startswith("_") or not callable(obj):
                continue
            try:
                offer = get_offer(obj)
            except Exception:  # objects with exotic __getattr__ are simply not offers
                continue
            if offer is not None:
                offers.append(offer)
        if offers or self._offers:
            self._offers = tuple(offers)
            catalog_of(self.registry).replace("notebook", offers)

    def register(
        self, var: str, fn: Any, *, origin: str = "", source_code: str | None = None
    ) -> ScanReport:
        """Register one function now (``%%tool`` and the Python API use it)."""
        report = ScanReport()
        with self._lock:
            self._register(self.registry, var, fn, origin, source_code, report, quiet=True)
        if var in report.failed:
            from ..core.errors import ToolDefinitionError

            raise ToolDefinitionError(report.failed[var])
        return report

    def _register(
        self,
        registry: Any,
        var: str,
        fn: Any,
        origin: str,
        source_code: str | None,
        report: ScanReport,
        quiet: bool = False,
    ) -> None:
        self._seen[var] = fn
        old_name = self._tool_names.get(var)
        try:
            tool = registry.add(fn, origin=origin, source_code=source_code)
        except Exception as exc:
            # A broken definition must not break the user's cell; say it once per version.
            message = f"{var!r} was not registered as a tool: {exc}"
            report.failed[var] = message
            self._tool_names.pop(var, None)
            if not quiet:
                print(f"nexus_jupyter: {message}", file=sys.stderr)
            return
        self._tool_names[var] = tool.name
        report.registered.append(tool.name)
        if old_name is not None and old_name != tool.name:
            self._drop(registry, old_name, report)

    def _drop(self, registry: Any, name: str, report: ScanReport) -> None:
        if name in self._tool_names.values():
            return  # another variable still holds this tool
        notebook = registry.source("notebook")
        if name in notebook.names():  # exported tools belong to the folder now: leave them
            registry.remove(name)
            report.removed.append(name)

    def forget(self, name: str) -> None:
        """Stop tracking tool ``name`` (after ``%tool remove``), so the next scan does not
        register it again unless its cell runs again."""
        with self._lock:
            for var, tool_name in list(self._tool_names.items()):
                if tool_name == name:
                    del self._tool_names[var]

    # -- IPython events ---------------------------------------------------------------------

    current_origin = ""
    _current_source: str | None = None
    _cell_seen = False  # whether this execution announced a cell (a silent run does not)

    def pre_run_cell(self, info: Any) -> None:
        """The ``pre_run_cell`` hook: remember which cell runs (``%%tool`` uses it)."""
        cell_id = getattr(info, "cell_id", None)
        self.current_origin = f"cell:{cell_id}" if cell_id else ""
        self._current_source = getattr(info, "raw_cell", None)
        self._cell_seen = True

    def _definition_origin(self) -> str:
        """Where a tool defined right now comes from: the cell id, else the cell's number
        (what ``post_run_cell`` would say)."""
        if self.current_origin:
            return self.current_origin
        from IPython import get_ipython

        shell = get_ipython()
        count = getattr(shell, "execution_count", None) if self._cell_seen else None
        return f"cell[{count}]" if count else "cell"

    def pre_execute(self) -> None:
        """The ``pre_execute`` hook: fires for every run, silent ones too."""
        self._cell_seen = False

    def post_execute(self) -> None:
        """The ``post_execute`` hook: a silent run (IPython running a ``.ipy`` file, ``%run``
        of one) fires no ``post_run_cell``, so its tools are scanned here."""
        if self._cell_seen:
            return  # post_run_cell follows, with the cell's id and source
        try:
            self.scan()
        except Exception as exc:  # never break the kernel's hook chain
            log.exception("scanning the namespace after a silent run failed")
            print(f"nexus_jupyter: scanning the namespace for tools failed: {exc}", file=sys.stderr)

    def on_tool_defined(self, fn: Any) -> None:
        """A ``@tool`` function was just defined in user code: register it now, so the cell
        (or ``.ipy`` file) that defines it can also call it."""
        if getattr(fn, "__module__", None) != "__main__" or "<locals>" in getattr(
            fn, "__qualname__", ""
        ):
            return  # imported modules and nested helpers are not the notebook's tools
        var = getattr(fn, "__name__", None)
        if not isinstance(var, str) or var.startswith("_"):
            return
        try:
            with self._lock:
                report = ScanReport()
                source = self._current_source if self._cell_seen else None
                origin = self._definition_origin()
                self._register(self.registry, var, fn, origin, source, report)
        except Exception as exc:  # a decorator must never fail because of registration
            log.exception("registering %s at definition failed", var)
            print(f"nexus_jupyter: {var!r} was not registered as a tool: {exc}", file=sys.stderr)

    def post_run_cell(self, result: Any) -> None:
        """The ``post_run_cell`` hook: scan with the cell's id and source."""
        info = getattr(result, "info", None)
        cell_id = getattr(info, "cell_id", None) or ""
        raw = getattr(info, "raw_cell", None)
        if raw is not None and raw.lstrip().startswith("%%tool"):
            raw = raw.lstrip().split("\n", 1)[1] if "\n" in raw.lstrip() else ""
        count = getattr(result, "execution_count", None)
        origin = f"cell:{cell_id}" if cell_id else (f"cell[{count}]" if count else "cell")
        self._cell_seen = False
        try:
            self.scan(origin=origin, source_code=raw)
        except Exception as exc:  # never break the kernel's hook chain
            log.exception("scanning the notebook namespace failed")
            print(f"nexus_jupyter: scanning the namespace for tools failed: {exc}", file=sys.stderr)
