"""Reading a tool function's annotations: resolving hints (closures included), spotting the
injected :class:`ToolContext`, and making ``typing.TypedDict`` usable by pydantic."""

from __future__ import annotations

import builtins
import contextlib
import dis
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any

from ..errors import ToolDefinitionError
from .context import ToolContext

__all__ = ["compat_annotation", "is_context", "resolve_hints"]


def resolve_hints(fn: Callable[..., Any], fname: str) -> dict[str, Any]:
    """``typing.get_type_hints(fn, include_extras=True)``, quicker for the usual cases: plain
    annotations need no evaluation, and annotation strings (``from __future__ import
    annotations``) are evaluated once per text and module while the names they use still
    mean the same objects. Anything else goes to :func:`typing.get_type_hints`."""
    fast = _quick_hints(fn)
    if fast is not None:
        return fast
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except NameError:
        pass  # a type defined in an enclosing function: look in the closure below
    except Exception as exc:
        raise ToolDefinitionError(
            f"Tool {fname!r}: cannot resolve its type hints ({exc})."
        ) from None
    code, cells = getattr(fn, "__code__", None), getattr(fn, "__closure__", None) or ()
    local_names: dict[str, Any] = {}
    for var, cell in zip(getattr(code, "co_freevars", ()), cells, strict=False):
        try:
            local_names[var] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    try:
        return typing.get_type_hints(fn, localns=local_names, include_extras=True)
    except Exception as exc:
        raise ToolDefinitionError(
            f"Tool {fname!r}: cannot resolve its type hints ({exc}). Define or import the "
            "types it names before the function."
        ) from None


_NOT_FOUND: Any = object()
#: (annotation text, id of the module globals) -> (value, the names it used and their objects)
_EVALUATED: dict[tuple[str, int], tuple[Any, tuple[tuple[str, Any], ...]]] = {}
_EVALUATED_MAX = 8192


def _quick_hints(fn: Callable[..., Any]) -> dict[str, Any] | None:
    raw = getattr(fn, "__annotations__", None)
    namespace = getattr(fn, "__globals__", None)
    if not isinstance(raw, dict) or not isinstance(namespace, dict) or hasattr(fn, "__wrapped__"):
        return None
    hints: dict[str, Any] = {}
    for name, annotation in raw.items():
        value = _evaluate(annotation, namespace) if isinstance(annotation, str) else annotation
        if value is _NOT_FOUND or _has_forward_refs(value):
            return None
        hints[name] = type(None) if value is None else value
    return hints


def _evaluate(text: str, namespace: dict[str, Any]) -> Any:
    key = (text, id(namespace))
    cached = _EVALUATED.get(key)
    if cached is not None and all(_lookup(n, namespace) is obj for n, obj in cached[1]):
        return cached[0]
    try:
        code = compile(text, "<annotation>", "eval")
        value = eval(code, namespace)  # what typing.get_type_hints does with the same text
    except Exception:
        return _NOT_FOUND  # let typing.get_type_hints report it (or find it in a closure)
    if any(op.opname == "LOAD_ATTR" for op in dis.get_instructions(code)):
        return value  # ``models.Item``: a reloaded module keeps its name; never reuse it
    if len(_EVALUATED) >= _EVALUATED_MAX:
        with contextlib.suppress(StopIteration, KeyError, RuntimeError):  # another thread
            _EVALUATED.pop(next(iter(_EVALUATED)))
    _EVALUATED[key] = (value, tuple((n, _lookup(n, namespace)) for n in code.co_names))
    return value


def _lookup(name: str, namespace: dict[str, Any]) -> Any:
    if name in namespace:
        return namespace[name]
    return getattr(builtins, name, _NOT_FOUND)


def _has_forward_refs(annotation: Any) -> bool:
    if isinstance(annotation, str | typing.ForwardRef):
        return True
    if typing.get_origin(annotation) is typing.Literal:
        return False
    return any(_has_forward_refs(arg) for arg in typing.get_args(annotation))


def is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    if typing.get_origin(annotation) is Annotated:
        return is_context(typing.get_args(annotation)[0])
    args = typing.get_args(annotation)
    return bool(args) and any(a is ToolContext for a in args)


def compat_annotation(annotation: Any) -> Any:
    """Rewrite ``typing.TypedDict`` classes (which pydantic refuses before Python 3.12) as
    ``typing_extensions.TypedDict`` ones, also inside ``list[...]``, ``X | None``, ..."""
    if typing.is_typeddict(annotation) and type(annotation).__module__ == "typing":
        import typing_extensions as te

        hints = typing.get_type_hints(annotation, include_extras=True)
        optional: frozenset[str] = getattr(annotation, "__optional_keys__", frozenset())
        fields = {
            key: te.NotRequired[compat_annotation(hint)]
            if key in optional
            else compat_annotation(hint)
            for key, hint in hints.items()
        }
        compat = te.TypedDict(annotation.__name__, fields)  # type: ignore[misc]
        compat.__doc__ = annotation.__doc__
        return compat
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is None or not args:
        return annotation
    new_args = tuple(compat_annotation(a) for a in args)
    if new_args == args:
        return annotation
    try:
        if origin is Annotated:
            return Annotated[new_args[0], *args[1:]]  # type: ignore[valid-type,unused-ignore]
        if origin in (typing.Union, types.UnionType):
            return typing.Union[new_args]  # noqa: UP007
        return origin[new_args if len(new_args) > 1 else new_args[0]]
    except TypeError:
        return annotation
