"""What a notebook tool needs to stand alone: the dependency analysis behind ``%tool export``.

Starting from the tool function's source, the global names it reads (found with
:mod:`symtable`, so locals and parameters never count) are looked up in the notebook's
namespace and sorted into:

- imports: modules (``import numpy as np``) and objects that live in an importable module
  (``from pydantic import BaseModel``, ``from os import environ as env``), found by identity;
- notebook definitions: functions and classes defined in cells (their source comes from the
  cell text IPython keeps in :mod:`linecache`), followed transitively;
- constants: values whose ``repr`` reads back equal through :func:`ast.literal_eval`;
- everything else (a DataFrame, an open file or connection, a lambda in a variable, an
  instance of some class) cannot be written as source: :class:`ExportError` names the
  variable and says what to do.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import symtable
import sys
import textwrap
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import ExportError

__all__ = ["ExportPlan", "analyze_tool", "free_globals", "function_source"]

MAX_CONSTANT_CHARS = 100_000
_LITERAL_TYPES = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set)


@dataclass
class ExportPlan:
    """The parts of an exported module, in the order they are written."""

    imports: list[str] = field(default_factory=list)
    constants: list[str] = field(default_factory=list)
    definitions: list[str] = field(default_factory=list)
    tool_source: str = ""
    unresolved: list[str] = field(default_factory=list)


def free_globals(source: str) -> list[str]:
    """Global names read by ``source`` (a def or class), in order of first appearance."""
    table = symtable.symtable(source, "<export>", "exec")
    out: dict[str, None] = {}

    def visit(tab: symtable.SymbolTable, top: bool) -> None:
        for sym in tab.get_symbols():
            if not sym.is_referenced():
                continue
            if (top and not (sym.is_assigned() or sym.is_imported())) or (
                not top and sym.is_global()
            ):
                out.setdefault(sym.get_name())
        for child in tab.get_children():
            visit(child, False)

    visit(table, True)
    return list(out)


def _is_tool_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id == "tool"
    return isinstance(target, ast.Attribute) and target.attr == "tool"


def _def_node(source: str, name: str, kinds: tuple[type, ...]) -> ast.AST | None:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    found = None
    for node in tree.body:
        if isinstance(node, kinds) and getattr(node, "name", None) == name:
            found = node  # the last definition in the cell is the live one
    return found


def _strip_tool_decorators(source: str, name: str) -> str:
    """``source`` of def ``name`` without its ``@tool`` decorators (others are kept)."""
    node = _def_node(source, name, (ast.FunctionDef, ast.AsyncFunctionDef))
    if node is None:
        return source
    lines = source.splitlines(keepends=True)
    kept = [
        ast.get_source_segment(source, d)
        for d in node.decorator_list  # type: ignore[attr-defined]
        if not _is_tool_decorator(d)
    ]
    head = "".join(f"@{text}\n" for text in kept if text)
    return head + "".join(lines[node.lineno - 1 : node.end_lineno])  # type: ignore[attr-defined]


def _cell_sources(namespace: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(filename, text) of every cell IPython compiled, newest first; the ``In`` history
    when linecache has nothing (plain ``exec``)."""
    out = [
        (key, "".join(entry[2]))
        for key, entry in reversed(list(linecache.cache.items()))
        if isinstance(entry, tuple) and len(entry) == 4 and entry[1] is None
    ]
    history = namespace.get("In") or namespace.get("_ih") or []
    out += [(f"<In[{i}]>", text) for i, text in reversed(list(enumerate(history))) if text]
    return out


def function_source(obj: Any, namespace: Mapping[str, Any], fallback: str | None = None) -> str:
    """The dedented source of a notebook function or class (decorators included)."""
    name = obj.__name__
    kinds: tuple[type, ...] = (
        (ast.ClassDef,) if inspect.isclass(obj) else (ast.FunctionDef, ast.AsyncFunctionDef)
    )
    if not inspect.isclass(obj):
        try:
            return textwrap.dedent(inspect.getsource(obj))
        except (OSError, TypeError):
            pass
    candidates: list[tuple[str, str]] = []
    files = {c.co_filename for c in _codes_of(obj)}
    candidates += [(f, "".join(linecache.getlines(f))) for f in files]
    if fallback:
        candidates.append(("<tool source>", fallback))
    candidates += _cell_sources(namespace)
    for _, text in candidates:
        node = _def_node(text, name, kinds)
        if node is not None:
            end = getattr(node, "end_lineno", None)
            segment = "".join(text.splitlines(keepends=True)[_first_line(node) - 1 : end])
            return textwrap.dedent(segment)
    kind = "class" if inspect.isclass(obj) else "function"
    raise ExportError(
        f"Cannot find the source of the {kind} {name!r}: it was not defined in a cell of this "
        "session (or the cell is gone). Re-run the cell that defines it, then export again."
    )


def _first_line(node: ast.AST) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]


def _codes_of(obj: Any) -> list[types.CodeType]:
    if inspect.isfunction(obj):
        return [obj.__code__]
    out = []
    for value in vars(obj).values() if inspect.isclass(obj) else ():
        func = getattr(value, "__func__", None) or getattr(value, "fget", None) or value
        code = getattr(func, "__code__", None)
        if isinstance(code, types.CodeType) and not code.co_filename.startswith("<string"):
            out.append(code)
    return out


def _describe(value: Any) -> str:
    cls = type(value)
    if inspect.isfunction(value) and value.__name__ == "<lambda>":
        return "a lambda"
    if hasattr(value, "read") and hasattr(value, "close"):
        return f"an open file or stream ({cls.__module__}.{cls.__qualname__})"
    article = "an" if cls.__qualname__[:1].lower() in "aeiou" else "a"
    module = "" if cls.__module__ in ("builtins", "__main__") else cls.__module__ + "."
    return f"{article} {module}{cls.__qualname__} object"


def _literal(value: Any) -> str | None:
    if not isinstance(value, _LITERAL_TYPES):
        return None
    try:
        text = repr(value)
        if len(text) > MAX_CONSTANT_CHARS:
            return None
        back = ast.literal_eval(text)
    except Exception:  # whatever does not read back is not a literal
        return None
    return text if back == value and type(back) is type(value) else None


def _import_line(name: str, value: Any, namespace: Mapping[str, Any]) -> str | None:
    """An import statement binding ``name`` to ``value``, found by identity, or ``None``."""
    if isinstance(value, types.ModuleType):
        real = value.__name__
        if real == "__main__":
            return None
        return f"import {real}" if real == name else f"import {real} as {name}"
    module_name = getattr(value, "__module__", None)
    own = getattr(value, "__name__", None)
    attrs = [a for a in (name, own) if isinstance(a, str)]
    mods: list[str] = []
    if isinstance(module_name, str) and module_name not in ("__main__", "builtins"):
        parts = module_name.split(".")
        prefixes = [".".join(parts[: i + 1]) for i in range(len(parts))]
        mods += [m for m in prefixes if not any(p.startswith("_") for p in m.split("."))]
        mods += [m for m in prefixes if m not in mods]
    mods += [
        v.__name__
        for v in namespace.values()
        if isinstance(v, types.ModuleType) and v.__name__ != "__main__"
    ]
    for mod_name in mods:
        module = sys.modules.get(mod_name)
        if module is None:
            continue
        for attr in attrs:
            try:
                if getattr(module, attr, None) is value:
                    return f"from {mod_name} import {attr}" + (
                        f" as {name}" if attr != name else ""
                    )
            except Exception:  # lazy modules may raise on attribute access
                continue
    return None


def _is_notebook_def(value: Any, namespace: Mapping[str, Any]) -> bool:
    if not inspect.isclass(value) and hasattr(value, "__wrapped__"):  # @functools.cache & co
        value = inspect.unwrap(value)
    if inspect.isfunction(value):
        return value.__globals__ is namespace or value.__module__ == "__main__"
    return inspect.isclass(value) and value.__module__ in ("__main__", namespace.get("__name__"))


def analyze_tool(
    fn: Callable[..., Any],
    *,
    tool_name: str,
    namespace: Mapping[str, Any],
    fallback_source: str | None = None,
) -> ExportPlan:
    """Everything the tool function ``fn`` needs, from ``namespace``. Raises ExportError."""
    if not inspect.isfunction(fn):
        raise ExportError(
            f"Cannot export {tool_name!r}: it is {_describe(fn)}, not a function defined with "
            "`def`; wrap it in a `def` in a cell and export that."
        )
    if getattr(fn, "__closure__", None):
        raise ExportError(
            f"Cannot export {tool_name!r}: it is defined inside another function and uses its "
            f"local variables ({', '.join(fn.__code__.co_freevars)}). Define it at the top "
            "level of a cell, then export again."
        )
    plan = ExportPlan()
    source = _strip_tool_decorators(function_source(fn, namespace, fallback_source), fn.__name__)
    plan.tool_source = source
    imports: dict[str, None] = {"from nexus_jupyter import tool": None}
    done: set[str] = {fn.__name__}

    def resolve(code: str, owner: str, scope: Mapping[str, Any]) -> None:
        for name in free_globals(code):
            if name in done:
                continue
            done.add(name)
            if name not in scope:
                if not hasattr(builtins, name):
                    plan.unresolved.append(name)
                continue
            value = scope[name]
            if value is getattr(builtins, name, object()):
                continue
            if inspect.isfunction(value) and value.__name__ == "<lambda>":
                raise ExportError(
                    f"Cannot export {tool_name!r}: {owner} uses the variable {name!r}, which "
                    "holds a lambda; a lambda stored in a variable cannot be written back as "
                    f"source. Rewrite it as `def {name}(...): ...` in a cell, then export again."
                )
            if _is_notebook_def(value, scope):
                if not inspect.isclass(value):
                    value = inspect.unwrap(value)  # its source shows the decorators
                    if value.__closure__:
                        raise ExportError(
                            f"Cannot export {tool_name!r}: the helper {name!r} is made inside "
                            "another function (a closure). Define it at the top level of a cell."
                        )
                text = function_source(value, scope)
                if not inspect.isclass(value):
                    text = _strip_tool_decorators(text, value.__name__)
                if value.__name__ != name:  # `alias = helper`: define it, then bind the alias
                    text += f"\n{name} = {value.__name__}\n"
                inner = getattr(value, "__globals__", scope)
                resolve(text, f"the helper {name!r}", inner)  # dependencies first
                plan.definitions.append(text.rstrip() + "\n")
                continue
            line = _import_line(name, value, scope)
            literal = _literal(value)
            if literal is not None and (line is None or not isinstance(value, types.ModuleType)):
                plan.constants.append(f"{name} = {literal}")
                continue
            if line is not None:
                imports.setdefault(line)
                continue
            raise ExportError(
                f"Cannot export {tool_name!r}: {owner} uses the variable {name!r}, which holds "
                f"{_describe(value)}; that cannot be written as source. Create it inside the "
                f"function (load the data, open the connection there) or make {name!r} a "
                "parameter, then export again."
            )

    resolve(source, f"the tool {tool_name!r}", getattr(fn, "__globals__", namespace))
    plan.imports = _group_imports(imports)
    return plan


def _group_imports(lines: Mapping[str, None]) -> list[str]:
    """``import x`` lines first, then one ``from m import a, b as c`` line per module."""
    plain = sorted(line for line in lines if line.startswith("import "))
    by_module: dict[str, list[str]] = {}
    for line in lines:
        if line.startswith("from "):
            module, _, names = line[5:].partition(" import ")
            by_module.setdefault(module, []).append(names)
    grouped = [f"from {m} import {', '.join(sorted(n))}" for m, n in sorted(by_module.items())]
    return plain + grouped
