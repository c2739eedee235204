"""The arguments of ``nexus-tools call`` read against the tool's input schema, and its
errors worded (and shaped, with ``--json``) for the command line.

``key=value`` values are JSON where that fits the schema: ``n=2`` is the number 2 for an
integer parameter, but ``content=42`` or ``text=true`` stay the text typed for a string
parameter (the shell has already removed any quotes a person typed around it).

>>> parse_call_arguments(["n=2", "text=true"], {"properties": {"n": {"type": "integer"},
...     "text": {"type": "string"}}})
{'n': 2, 'text': 'true'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import NexusError, ToolNotFound, ToolValidationError
from ..core.tools.arguments import parse_call_arguments as parse_typed_arguments
from .main import UsageProblem

__all__ = ["error_object", "parse_call_arguments", "validation_message"]


def parse_call_arguments(
    items: Sequence[str], schema: Mapping[str, Any] | None = None, tool: str = ""
) -> dict[str, Any]:
    """One JSON object, or ``key=value`` items read against the tool's ``schema`` (see
    :mod:`nexus_jupyter.core.tools.arguments`: a string parameter takes the text as it
    arrives from the shell)."""
    try:
        return parse_typed_arguments(list(items), tool, command="nexus-tools call", schema=schema)
    except NexusError as exc:
        raise UsageProblem(str(exc)) from None


def validation_message(exc: ToolValidationError) -> str:
    """What is wrong with the arguments (the refused values as JSON), and where to look."""
    return f"{str(exc).rstrip('.')}. See its parameters with `nexus-tools info {exc.tool}`."


def error_object(tool: str | None, message: str, exc: BaseException | None) -> dict[str, Any]:
    """``call --json``'s answer when the call could not be made: the fields of a failed
    call's result that apply (``tool``, ``error``, ``error_type``, ``is_error``), plus the
    field errors of invalid arguments and the close names of an unknown tool."""
    kind = type(exc).__name__ if exc is not None else "UsageError"
    kind = "UsageError" if kind == "UsageProblem" else kind
    data: dict[str, Any] = {
        "tool": tool,
        "structured": None,
        "content": [],
        "error": message,
        "error_type": kind,
        "is_error": True,
    }
    if isinstance(exc, ToolValidationError):
        data["errors"] = [e.to_dict() for e in exc.errors]
    if isinstance(exc, ToolNotFound):
        data["suggestions"] = list(exc.suggestions)
    return data
