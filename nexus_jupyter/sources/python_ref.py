"""``"package.module:attribute"`` to a :class:`Tool`: the loader behind ``{type: python}``.

>>> tool = load_python_tool("json:dumps", name="to_json")   # doctest: +SKIP

The attribute may be a :class:`Tool`, a ``@tool`` function or a plain annotated function.
``search_path`` (the declaring project's folder) is put on ``sys.path`` first, so a
project's own modules import whatever the working directory is.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

from ..core.errors import SourceError
from ..core.tools.tool import Tool

__all__ = ["load_python_tool", "make_importable", "resolve_reference"]


def make_importable(folder: Path | None) -> None:
    """Put ``folder`` (a project's) first on ``sys.path``, so its own modules import
    whatever the working directory is."""
    if folder is not None and str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def resolve_reference(reference: str, search_path: Path | None = None) -> Any:
    """The object ``reference`` (``"pkg.mod:attr"``, dots allowed after the colon) names."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise SourceError(
            f"Python reference {reference!r} must look like 'package.module:attribute'."
        )
    make_importable(search_path)
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise SourceError(
            f"Cannot import module {module_name!r} for {reference!r}: "
            f"{type(exc).__name__}: {exc}. Is it installed, or in the project folder?"
        ) from exc
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise SourceError(
                f"Module {module_name!r} has no attribute {attribute!r} (from {reference!r})."
            ) from None
    return obj


def load_python_tool(reference: str, *, search_path: Path | None = None, **overrides: Any) -> Tool:
    """The tool at ``reference``. ``overrides`` are ``@tool`` options (``name``,
    ``description``, ``categories``, ...) that win over the function's own."""
    obj = resolve_reference(reference, search_path)
    options = {k: v for k, v in overrides.items() if v not in (None, "", (), [], {})}
    if isinstance(obj, Tool):
        return obj.with_spec(**options) if options else obj
    if not callable(obj):
        raise SourceError(f"{reference!r} is a {type(obj).__name__}, not a function or a Tool.")
    display = options.pop("display", None)  # a spec field, not a @tool option
    tool = Tool.from_function(obj, origin=reference, **options)
    return tool.with_spec(display=display) if display else tool
