"""The notebook workbench as plain Python functions; the magics are thin shims over these.

Every function takes an optional ``registry`` (default: the session registry,
``nexus_jupyter.registry()``) and returns an object that displays well in a notebook::

    from nexus_jupyter.notebook import api
    api.list_tools(category="math")
    api.search_tools("add two numbers")
    api.call_tool("add", {"a": 1, "b": 2})
    api.try_tool("add")          # a test-call form (widget)
    api.browse()                 # the catalog (widget)
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from .history import CallHistory, CallRecord, session_history
from .views import HistoryView, SearchView, ToolInfo, ToolListView

__all__ = [
    "browse",
    "call_history",
    "call_tool",
    "current_registry",
    "define_tools",
    "list_tools",
    "remove_tool",
    "search_tools",
    "stale_notes",
    "tool_info",
    "try_tool",
]


def _in_widget_kernel(shell: Any = None) -> bool:
    if shell is None:
        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:
            return False
    return getattr(shell, "kernel", None) is not None


def current_registry(registry: Any = None) -> Any:
    """``registry``, or the session registry. In a kernel that can show widgets the session
    registry gets the notebook's approve/deny prompt as its ``approver``."""
    if registry is not None:
        return registry
    import nexus_jupyter

    reg = nexus_jupyter.registry()
    session_history().follow(reg)  # every call of the session registry: see follow_session
    if reg.approver is None and _in_widget_kernel():
        from .widgets.approval import NotebookApprover

        reg.approver = NotebookApprover()
    from .test_cases import attach_notebook_cases

    attach_notebook_cases(reg, _shell())  # cases in the notebook's metadata; live tests on
    return reg


def _shell() -> Any:
    from .extension import current_shell

    return current_shell()


def list_tools(
    *, source: str | None = None, category: str | None = None, registry: Any = None, **filters: Any
) -> ToolListView:
    """Tools sorted by name, filtered by ``source`` (a name or kind), ``category`` or any
    filter of ``Registry.entries``."""
    reg = current_registry(registry)
    if source is not None and not source.endswith("*"):
        _check_source(reg, source)
    entries = reg.entries(source=source, category=category, **filters)
    failed = [] if category or filters else failed_notes(reg, source)
    return ToolListView(
        entries, stale=stale_notes(reg), failed=failed, hint=_empty_hint(reg, bool(entries))
    )


def _empty_hint(reg: Any, listed: bool) -> tuple[str, str]:
    """What to do when a listing is empty, as (text, HTML): clear the filters when the
    registry has tools, else how to add one."""
    from ..render.catalog import add_tools_hint

    if listed:
        return ("", "")
    total = len(reg.entries())
    if total:
        text = f"No tool matches these filters; `%tool list` shows all {total}."
        return text, html.escape(text).replace("`%tool list`", "<code>%tool list</code>")
    folders = tools_folders(reg)
    return add_tools_hint(folders), add_tools_hint(folders, as_html=True)


def tools_folders(reg: Any) -> list[str]:
    """The tools folders ``reg`` watches, as their source names them (``tools/dynamic``)."""
    return [
        s.name.split(":", 1)[1] for s in reg.sources() if s.kind == "directory" and ":" in s.name
    ]


def _check_source(reg: Any, source: str) -> None:
    known = sorted({s.name for s in reg.sources()} | {s.kind for s in reg.sources()})
    if source in known:
        return
    import difflib

    from ..core.errors import NexusError

    close = difflib.get_close_matches(source, known, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise NexusError(f"No source named {source!r}.{hint} Sources: {', '.join(known)}.")


def search_tools(
    query: str, *, limit: int = 10, registry: Any = None, **filters: Any
) -> SearchView:
    """Ranked matches for ``query`` (name, description, parameters, categories)."""
    if not query.strip():
        from ..core.errors import NexusError

        raise NexusError("Search for something: give a query, e.g. `%tool search weather`.")
    reg = current_registry(registry)
    found = reg.search_results(query, limit=limit, **filters)
    return SearchView(query, list(found.hits), list(found.unserved), found.searched_for)


def tool_info(name: str, *, registry: Any = None) -> ToolInfo:
    """The tool's card: badges, description, parameters, origin, what it shadows, its tests
    and its calls so far."""
    from ..sources.versions import shown_version

    reg = current_registry(registry)
    entry = reg.entry(name)
    return ToolInfo(
        entry,
        stale=stale_notes(reg).get(name),
        tests=reg.test_status(name),
        stats=reg.stats_of(name, entry.spec.source),
        version=shown_version(entry.spec),
    )


def call_tool(
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    registry: Any = None,
    history: CallHistory | None = None,
    **options: Any,
) -> Any:
    """Call ``name`` and record the call in the history; returns the ``ToolResult``.

    Works in a cell with a running event loop. Pre-call problems raise (unknown tool,
    invalid arguments, policy); a failing tool gives a result with ``error`` set.
    """
    from ..core.tools.context import NOTEBOOK_CALLER, RequestInfo

    reg = current_registry(registry)
    options.setdefault("request", RequestInfo(caller=NOTEBOOK_CALLER))
    result = reg.call_sync(name, dict(arguments or {}), **options)
    from ..core.registry.file_health import stale_file

    stale = stale_file(reg, name)
    if stale is not None:
        result.notes = (*result.notes, stale.ran_note())
    (session_history() if history is None else history).add_result(arguments, result)
    if result.exception is not None:
        from .debugging import keep_for_debug

        keep_for_debug(result.exception)
    return result


def follow_session(registry: Any) -> None:
    """Make the session history record every call of the session ``registry``, however it
    is made (``%load_ext`` hooks this to the registry's creation)."""
    session_history().follow(registry)


def stale_notes(registry: Any = None) -> dict[str, str]:
    """Tool name -> what its file's failed reload says, for every stale tool (its file
    failed to reload; the last good version is the one that runs)."""
    from ..core.registry.file_health import stale_tools

    return {name: f.note() for name, f in stale_tools(current_registry(registry)).items()}


def failed_notes(registry: Any = None, source: str | None = None) -> list[str]:
    """What each tool file that failed to load, and serves no tool, says (its tools are
    not registered, so a list cannot show them); only the files of ``source`` (a name,
    kind or glob) when given."""
    import fnmatch

    from ..core.registry.file_health import broken_files, stale_tools

    reg = current_registry(registry)
    broken = broken_files(reg)
    stale = stale_tools(reg, broken)
    return [
        f.missing_cause()
        for f in broken
        if not any(name in stale for name in f.serves)
        and (source is None or source == "directory" or fnmatch.fnmatchcase(f.source, source))
    ]


def remove_tool(name: str, *, registry: Any = None) -> None:
    """Remove a tool this session added (a notebook tool)."""
    reg = current_registry(registry)
    reg.remove(name)
    from .extension import current_tracker

    tracker = current_tracker()
    if tracker is not None:
        tracker.forget(name)


def call_history(
    name: str | None = None, *, history: CallHistory | None = None, registry: Any = None
) -> HistoryView:
    """Past calls (of ``name`` only, when given), oldest first."""
    if name is not None:
        reg = current_registry(registry)
        known = {r.tool for r in (session_history() if history is None else history).entries()}
        if name not in known and reg.find(name) is None:
            from ..core.errors import ToolNotFound

            raise ToolNotFound(name, reg.suggest(name))
    return HistoryView((session_history() if history is None else history).entries(name))


def replay(
    record: CallRecord | int, *, registry: Any = None, history: CallHistory | None = None
) -> Any:
    """Call again with the arguments of a history record (or its id)."""
    hist = session_history() if history is None else history
    if isinstance(record, int):
        record = hist.get(record)
    return call_tool(record.tool, record.arguments, registry=registry, history=hist)


def try_tool(name: str, *, registry: Any = None, history: CallHistory | None = None) -> Any:
    """A test-call form for ``name`` (ipywidgets): fields from its schema, Run, Cancel,
    result, progress, history with replay."""
    reg = current_registry(registry)
    tool = reg.get(name)
    from .widgets.form import ToolForm

    return ToolForm(tool, reg, history=session_history() if history is None else history)


def browse(query: str = "", *, registry: Any = None, history: CallHistory | None = None) -> Any:
    """The catalog (ipywidgets): search as you type, filters, details, Try."""
    from .widgets.catalog import Catalog

    return Catalog(
        current_registry(registry),
        query=query,
        history=session_history() if history is None else history,
    )


def define_tools(
    source: str,
    *,
    shell: Any = None,
    registry: Any = None,
    name: str | None = None,
    permission: str | None = None,
    categories: Sequence[str] = (),
    capabilities: Sequence[str] = (),
    requires_credentials: Sequence[str] = (),
    origin: str = "",
) -> list[Any]:
    """Run ``source`` in the user namespace and register the functions it defines as tools
    (what ``%%tool`` does); ``@tool`` options apply to each. Returns the tools."""
    from .cell_tools import run_and_mark

    return run_and_mark(
        textwrap.dedent(source),
        shell=shell,
        registry=current_registry(registry),
        name=name,
        permission=permission,
        categories=categories,
        capabilities=capabilities,
        requires_credentials=requires_credentials,
        origin=origin,
    )
