"""``%%tool``: run a cell, then mark and register the functions it defined.

The cell body runs as a cell of its own (``shell.run_cell``, as ``%%capture`` does), so a
mistake in it shows the user's traceback only, and ``inspect.getsource`` finds the functions
later (export needs that). A function counts as defined by the cell when it is new or rebound
in the namespace and belongs to ``__main__`` (not imported); helpers whose names start with
``_`` are left out.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from ..core.errors import NexusError, ToolDefinitionError
from ..core.tools.decorator import TOOL_META_ATTR, get_tool_meta, make_tool_meta

__all__ = ["run_and_mark"]


def _shell(shell: Any) -> Any:
    if shell is not None:
        return shell
    from IPython import get_ipython

    found = get_ipython()
    if found is None:
        raise NexusError("%%tool needs IPython: run it in a notebook or an IPython shell.")
    return found


def run_and_mark(
    source: str,
    *,
    shell: Any,
    registry: Any,
    name: str | None,
    permission: str | None,
    categories: Sequence[str],
    capabilities: Sequence[str],
    requires_credentials: Sequence[str],
    origin: str,
) -> list[Any]:
    """Run ``source`` in the shell's namespace, mark what it defines, register it."""
    shell = _shell(shell)
    options: dict[str, Any] = {
        "name": name,
        "permission": permission,
        "categories": list(categories) or None,
        "capabilities": list(capabilities) or None,
        "requires_credentials": list(requires_credentials) or None,
    }
    options = {k: v for k, v in options.items() if v is not None}
    make_tool_meta(**options)  # bad options (e.g. an unknown permission) fail before the cell runs
    from .extension import current_tracker

    tracker = current_tracker()
    if not origin and tracker is not None:
        origin = tracker.current_origin  # read now: the inner run_cell resets it
    namespace = shell.user_ns
    before = dict(namespace)  # references, not ids: an id can be reused after a `del`
    outcome = shell.run_cell(source, store_history=False)
    failure = outcome.error_before_exec or outcome.error_in_exec
    if failure is not None:  # IPython has shown the user's traceback already
        raise NexusError(
            f"The %%tool cell failed ({type(failure).__name__}: {failure}); no tool was registered."
        )
    defined = [
        (var, obj)
        for var, obj in namespace.items()
        if not var.startswith("_")
        and inspect.isfunction(obj)
        and before.get(var) is not obj
        and obj.__module__ == "__main__"
    ]
    if not defined:
        raise NexusError(
            "The %%tool cell ran but defines no function; put a `def` in it "
            "(functions whose names start with '_' are helpers and are skipped)."
        )
    if name and len(defined) > 1:
        raise NexusError(
            f"--name {name!r} names one tool, but the cell defines "
            f"{len(defined)} functions ({', '.join(v for v, _ in defined)}); "
            "drop --name or split the cell."
        )
    tools = []
    for var, fn in defined:
        existing = get_tool_meta(fn)
        merged = {**(existing.options() if existing is not None else {}), **options}
        setattr(fn, TOOL_META_ATTR, make_tool_meta(**merged))
        try:
            if tracker is not None and tracker.namespace is namespace:
                tracker.register(var, fn, origin=origin, source_code=source)
                tools.append(registry.get(tracker.tracked()[var]))
            else:
                tools.append(registry.add(fn, origin=origin, source_code=source))
        except ToolDefinitionError as exc:
            raise NexusError(str(exc)) from None
    return tools


def run_tool_cell(shell: Any, line: str, cell: str) -> None:
    """``%%tool [--name N] [--permission P] [--category C] [--capability C]
    [--requires-credential S]``: parse the options, run the cell, register its functions."""
    from .api import define_tools
    from .options import parse_options

    opts = parse_options(
        "%%tool",
        line,
        {
            "--name": "one",
            "--permission": "one",
            "--category": "many",
            "--capability": "many",
            "--requires-credential": "many",
        },
        max_args=0,
    )
    define_tools(
        cell,
        shell=shell,
        name=opts.get("name"),
        permission=opts.get("permission"),
        categories=opts.get("category", []),
        capabilities=opts.get("capability", []),
        requires_credentials=opts.get("requires_credential", []),
    )
