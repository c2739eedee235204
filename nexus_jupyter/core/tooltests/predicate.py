r"""``check:`` predicates: one short Python expression that must be true of a result.

    check: "result['temperature'] > -60 and result['units'] == 'celsius'"

What an expression sees (nothing else):

- ``result``: the result's value (its structured JSON; the text when the tool answers with
  text only; ``None`` when it failed), ``text`` (all text content joined), ``content`` (the
  content blocks), ``error`` / ``error_type`` (``None`` unless it failed) and ``arguments``
  (the case's arguments);
- the builtins ``abs all any bool dict enumerate float int isinstance len list max min range
  reversed round set sorted str sum tuple zip``, ``math`` (``pi e inf ceil floor fabs
  isclose isfinite isinf isnan log sqrt``) and ``re`` (``search match fullmatch findall``,
  on RE2: see below).

The expression is checked before it ever runs: one expression (no statements), at most
:data:`MAX_LENGTH` characters, only the names above (plus its own comprehension variables),
and no name or attribute that starts with an underscore, which is how expressions usually
reach past a restricted namespace (``().__class__.__mro__``...). No ``import``, no ``open``,
no ``eval``.

This is a guard against accidents, not a sandbox for hostile code: a case file lives next to
the tool file it tests, written by the same person, and the tool itself runs with full rights
anyway. A check runs in the test run's thread, where nothing can stop it (the case's timeout
covers the call, not the check, and a loop inside a builtin never lets go of the
interpreter), so the two accidents that run for ever are bounded where they happen:

- ``re`` runs patterns on RE2 (google-re2, which grep uses too), in time linear in the text:
  ``re.search(r'(a+)+$', text)`` answers at once where Python's ``re`` backtracks for hours.
  RE2 has no lookarounds, backreferences or ``(?x)``; such a pattern is an error that says
  so (a pattern Python cannot compile gets Python's reason). Flags go in the pattern
  (``(?i)``, ``(?s)``, ``(?m)``). Where RE2 reads a pattern differently: ``\w \d \s \b``
  are ASCII only (``\pL`` is any letter), and ``$`` without ``(?m)`` is the very end of the
  text, not also the place before a final newline (write ``\n?$``). ``\Z`` is translated.
- ``range`` counts at most :data:`MAX_RANGE` numbers.

Arithmetic that explodes (``10**10**10``) is not bounded.
"""

from __future__ import annotations

import ast
import builtins
import functools
import math
import re as stdlib_re
from collections.abc import Mapping
from types import CodeType, SimpleNamespace
from typing import Any

from ..errors import TestCaseError

__all__ = [
    "ALLOWED_BUILTINS",
    "MAX_LENGTH",
    "MAX_RANGE",
    "NAMES",
    "compile_check",
    "evaluate_check",
]

MAX_LENGTH = 500
#: The most numbers a check's ``range`` counts.
MAX_RANGE = 10_000_000
#: What a check may read about the call (see the module docstring).
NAMES = ("result", "text", "content", "error", "error_type", "arguments")
_BUILTIN_NAMES = [
    "abs",
    "all",
    "any",
    "bool",
    "dict",
    "enumerate",
    "float",
    "int",
    "isinstance",
    "len",
    "list",
    "max",
    "min",
    "range",
    "reversed",
    "round",
    "set",
    "sorted",
    "str",
    "sum",
    "tuple",
    "zip",
]


def _bounded_range(*args: int) -> range:
    numbers = range(*args)
    try:
        count = len(numbers)
    except OverflowError:  # more than sys.maxsize numbers
        count = MAX_RANGE + 1
    if count > MAX_RANGE:
        shown = ", ".join(map(str, args))
        raise TestCaseError(
            f"range({shown}) counts more than {MAX_RANGE:,} numbers, the most a check counts."
        )
    return numbers


#: ``\Z`` (end of text in Python) is spelled ``\z`` in RE2; ``\\Z`` (an escaped backslash,
#: then Z) is left alone.
_END_OF_TEXT = stdlib_re.compile(r"(?<!\\)((?:\\\\)*)\\Z")


@functools.lru_cache(maxsize=256)
def _pattern(pattern: str) -> Any:
    """``pattern`` compiled by RE2; :class:`TestCaseError` saying why it cannot run."""
    import re2  # type: ignore[import-not-found,unused-ignore]

    try:
        stdlib_re.compile(pattern)  # compiling is safe; only matching can backtrack for ever
    except stdlib_re.error as exc:
        raise TestCaseError(
            f"the pattern {pattern!r} is not a regular expression: {exc}."
        ) from None
    options = re2.Options()
    options.log_errors = False  # the error is raised with its reason instead
    try:
        return re2.compile(_END_OF_TEXT.sub(r"\1\\z", pattern), options)
    except re2.error as exc:
        reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise TestCaseError(
            f"the pattern {pattern!r} uses what RE2 lacks ({reason}): a check's patterns run "
            "in linear time, so without lookarounds, backreferences or (?x)."
        ) from None


def _linear(method: str) -> Any:
    def run(pattern: str, string: str, flags: int = 0) -> Any:
        for what, value in (("pattern", pattern), ("text", string)):
            if not isinstance(value, str):
                raise TypeError(
                    f"re.{method} takes the {what} as a string, got {type(value).__name__} "
                    "(search `text`, or str(result))"
                )
        if flags:
            raise TestCaseError(
                f"re.{method} takes no flags in a check: put them in the pattern, as in "
                "'(?i)error'."
            )
        return getattr(_pattern(pattern), method)(string)

    run.__name__ = method
    return run


ALLOWED_BUILTINS: dict[str, Any] = {name: getattr(builtins, name) for name in _BUILTIN_NAMES}
ALLOWED_BUILTINS["range"] = _bounded_range
# The functions of math and re a check uses, not the modules: a module's attributes lead on
# to other modules (re.enum.sys.modules['os']).
_MATH = ("ceil", "floor", "fabs", "isclose", "isfinite", "isinf", "isnan", "log", "sqrt")
ALLOWED_BUILTINS.update(
    math=SimpleNamespace(
        pi=math.pi, e=math.e, inf=math.inf, **{f: getattr(math, f) for f in _MATH}
    ),
    re=SimpleNamespace(**{m: _linear(m) for m in ("search", "match", "fullmatch", "findall")}),
)
_CACHE: dict[str, CodeType] = {}
#: Attributes of a match or a pattern that lead on to modules and frames.
_REACHING = frozenset({"gi_frame", "cr_frame", "f_globals", "f_builtins", "tb_frame"})


def compile_check(source: Any, *, where: str = "") -> CodeType:
    """Check ``source`` (see the module docstring) and compile it. Raises
    :class:`TestCaseError` saying what is not allowed and what is."""
    at = f"{where}: " if where else ""
    if not isinstance(source, str) or not source.strip():
        raise TestCaseError(f"{at}`check:` is a Python expression as text, got {source!r}.")
    cached = _CACHE.get(source)
    if cached is not None:
        return cached
    if len(source) > MAX_LENGTH:
        raise TestCaseError(
            f"{at}`check:` is {len(source)} characters; keep it under {MAX_LENGTH} (one "
            "condition, or several joined with `and`)."
        )
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as exc:
        raise TestCaseError(
            f"{at}`check: {source}` is not one Python expression ({exc.msg}); write a "
            "condition such as \"result['total'] > 0\"."
        ) from None
    own = {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    known = set(NAMES) | set(ALLOWED_BUILTINS) | own
    for node in ast.walk(tree):
        problem = _refused(node, known)
        if problem:
            raise TestCaseError(
                f"{at}`check: {source}` {problem}. A check sees {', '.join(NAMES)} and the "
                f"builtins {', '.join(sorted(ALLOWED_BUILTINS))}."
            )
    code = compile(tree, f"<check {source[:40]}>", "eval")
    _CACHE[source] = code
    return code


def _refused(node: ast.AST, known: set[str]) -> str | None:
    if isinstance(node, ast.Name):
        if node.id.startswith("_"):
            return f"uses {node.id!r}: names starting with '_' are not allowed"
        if node.id not in known:
            return f"uses the unknown name {node.id!r}"
    elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
        return f"reads the attribute {node.attr!r}: attributes starting with '_' are not allowed"
    elif isinstance(node, ast.Attribute) and node.attr in _REACHING:
        return f"reads the attribute {node.attr!r}, which reaches past a check's namespace"
    elif isinstance(node, ast.Await | ast.Yield | ast.YieldFrom):
        return "awaits or yields, which an expression on a result never needs"
    return None


def evaluate_check(source: str, names: Mapping[str, Any]) -> Any:
    """The value of the check ``source`` with ``names`` (those of :data:`NAMES`)."""
    code = compile_check(source)
    scope = {name: names.get(name) for name in NAMES}
    return eval(code, {"__builtins__": ALLOWED_BUILTINS}, scope)  # the source was checked above
