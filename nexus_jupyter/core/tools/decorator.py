"""``@tool``: mark a function as a tool. It only attaches frozen metadata.

Registration is done by whoever discovers the function: the notebook source when a cell
runs, the directory source when a file loads, or ``Registry.add``. The same decorator works
in a notebook cell and in a file under ``tools/dynamic/``::

    @tool
    def add(a: int, b: int) -> int:
        "Add two integers."
        return a + b

    @tool(permission="workspace_write", categories=["files"])
    def save(path: str, text: str) -> str: ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from ..errors import ToolDefinitionError
from .spec import TASK_SUPPORT, Permission, TaskSupport, validate_permission, validate_tool_name
from .summary import SummarySpec, check_summary

__all__ = ["TOOL_META_ATTR", "ToolMeta", "get_tool_meta", "on_tool_defined", "tool"]

TOOL_META_ATTR = "__nexus_tool__"

F = TypeVar("F", bound=Callable[..., Any])

_definition_listeners: list[Callable[[Callable[..., Any]], None]] = []


def on_tool_defined(listener: Callable[[Callable[..., Any]], None]) -> Callable[[], None]:
    """Call ``listener(fn)`` each time ``@tool`` marks a function; returns the function that
    stops it. A face that registers tools from user code (the notebook) uses it, so a tool
    defined and called in the same cell is already registered when the call comes. Listeners
    must not raise: they report their own failures.
    """
    _definition_listeners.append(listener)

    def remove() -> None:
        if listener in _definition_listeners:
            _definition_listeners.remove(listener)

    return remove


@dataclass(frozen=True, slots=True)
class ToolMeta:
    """The options given to ``@tool``; ``None`` means "derive it from the function"."""

    name: str | None = None
    description: str | None = None
    #: ``None``: not declared (the tool runs as ``read_only``, but no one said it only reads)
    permission: Permission | None = None
    categories: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    requires_credentials: tuple[str, ...] = ()
    eager: bool = False
    timeout: float | None = None
    #: a call's one-line description: a format string over the arguments or a function
    summary: SummarySpec | None = None
    task: TaskSupport = "forbidden"
    #: ``"call"``: a task call is a task from its start; ``"tool"``: the tool asks its
    #: questions first (input-required rounds) and calls ``ctx.start_task()``.
    task_start: str = "call"
    threadsafe: bool = False

    def options(self) -> dict[str, Any]:
        """The options that differ from the defaults, as keyword arguments to ``@tool``."""
        out: dict[str, Any] = {}
        for key, default in _DEFAULTS.items():
            value = getattr(self, key)
            if value != default:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out


_DEFAULTS = {
    "name": None,
    "description": None,
    "permission": None,
    "categories": (),
    "capabilities": (),
    "requires_credentials": (),
    "eager": False,
    "timeout": None,
    "summary": None,
    "task": "forbidden",
    "task_start": "call",
    "threadsafe": False,
}


def _strings(value: str | Iterable[str] | None, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    items = tuple(value)
    bad = [v for v in items if not isinstance(v, str) or not v]
    if bad:
        raise ToolDefinitionError(f"@tool({what}=...) takes non-empty strings, got {bad[0]!r}.")
    return items


def make_tool_meta(
    *,
    name: str | None = None,
    description: str | None = None,
    permission: str | None = None,
    categories: str | Iterable[str] | None = None,
    capabilities: str | Iterable[str] | None = None,
    requires_credentials: str | Iterable[str] | None = None,
    eager: bool = False,
    timeout: float | None = None,
    summary: SummarySpec | None = None,
    task: bool | str = False,
    task_start: str = "call",
    threadsafe: bool = False,
) -> ToolMeta:
    """Check ``@tool`` options and freeze them. Raises :class:`ToolDefinitionError`."""
    if name is not None:
        validate_tool_name(name)
    if description is not None and not isinstance(description, str):
        raise ToolDefinitionError(f"@tool(description=...) takes a string, got {description!r}.")
    if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
        raise ToolDefinitionError(
            f"@tool(timeout=...) takes a positive number of seconds, got {timeout!r}."
        )
    return ToolMeta(
        task=_task_support(task),
        task_start=_task_start(task_start),
        name=name,
        description=description,
        permission=validate_permission(permission) if permission is not None else None,
        categories=_strings(categories, "categories"),
        capabilities=_strings(capabilities, "capabilities"),
        requires_credentials=_strings(requires_credentials, "requires_credentials"),
        eager=bool(eager),
        timeout=float(timeout) if timeout is not None else None,
        summary=check_summary(summary),
        threadsafe=bool(threadsafe),
    )


def _task_support(task: bool | str) -> TaskSupport:
    if task is True:
        return "optional"
    if task is False:
        return "forbidden"
    if task not in TASK_SUPPORT:
        raise ToolDefinitionError(
            f"@tool(task=...) takes True, False, 'optional' or 'required', got {task!r}."
        )
    return task  # type: ignore[return-value,unused-ignore]


def _task_start(task_start: str) -> str:
    if task_start not in ("call", "tool"):
        raise ToolDefinitionError(
            f"@tool(task_start=...) takes 'call' (the task starts with the call) or 'tool' "
            f"(the tool calls ctx.start_task()), got {task_start!r}."
        )
    return task_start


@overload
def tool(fn: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    permission: str | None = None,
    categories: str | Iterable[str] | None = None,
    capabilities: str | Iterable[str] | None = None,
    requires_credentials: str | Iterable[str] | None = None,
    eager: bool = False,
    timeout: float | None = None,
    summary: SummarySpec | None = None,
    task: bool | str = False,
    task_start: str = "call",
    threadsafe: bool = False,
) -> Callable[[F], F]: ...


def tool(fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Mark ``fn`` as a tool, bare (``@tool``) or with options (``@tool(permission=...)``).

    Options: ``name``, ``description`` (default: the docstring's prose, every paragraph
    before its Args/Parameters/Returns sections),
    ``permission`` (``read_only`` | ``workspace_write`` | ``danger_full_access``),
    ``categories``, ``capabilities``, ``requires_credentials``, ``eager`` (always shown
    to agents, never deferred behind ``tool_search``), ``timeout`` (seconds per call) and
    ``summary`` (a call's one-line description: ``"Calculating: {a} {operation} {b}"`` or a
    function of the arguments; see :mod:`.summary`).
    ``task`` (``True``/``"optional"``: an MCP client that supports tasks gets a task to poll
    instead of waiting; ``"required"``: only as a task; with ``task_start="tool"`` the task
    begins when the tool calls ``await ctx.start_task()``, after asking its questions).
    ``threadsafe``: a sync notebook tool runs on the kernel's main thread, where the
    notebook's own code runs, unless it declares ``threadsafe=True`` (then on a worker).

    The function is returned unchanged, so it can still be called directly.
    """
    if fn is not None and options:
        raise ToolDefinitionError("Use either @tool or @tool(option=...), not both at once.")
    if fn is not None and isinstance(fn, str):
        raise ToolDefinitionError(
            f"@tool({fn!r}) is not supported: pass options by keyword, e.g. @tool(name={fn!r})."
        )
    meta = make_tool_meta(**options)

    def mark(func: F) -> F:
        if not callable(func):
            raise ToolDefinitionError(f"@tool decorates functions, got {func!r}.")
        target = getattr(func, "__func__", func)  # staticmethod / classmethod
        try:
            setattr(target, TOOL_META_ATTR, meta)
        except (AttributeError, TypeError) as exc:
            raise ToolDefinitionError(
                f"@tool cannot mark {func!r}: it does not accept attributes. "
                "Wrap it in a plain function."
            ) from exc
        for listener in list(_definition_listeners):
            listener(func)
        return func

    return mark(fn) if fn is not None else mark


def get_tool_meta(obj: Any) -> ToolMeta | None:
    """The ``@tool`` metadata of ``obj``, or ``None`` if it is not marked."""
    meta = getattr(getattr(obj, "__func__", obj), TOOL_META_ATTR, None)
    return meta if isinstance(meta, ToolMeta) else None
