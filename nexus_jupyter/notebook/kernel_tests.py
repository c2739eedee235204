"""A kernel's tool tests as the Jupyter server sees them (see :mod:`.kernel_link`).

The kernel runs its notebook tools' cases itself (they live in the notebook's metadata and
call the notebook's live state); the server shows that status rather than running them again:

- each tool's entry in the kernel's ``tools/list`` carries ``_meta["nexus-jupyter/tests"]``:
  its test status and its cases (:func:`listing_meta`); a status change relists, so the
  server hears of it through ``tools/list_changed`` at once;
- a private tool, :data:`KERNEL_TESTS_TOOL` (callable, never listed), lets the server save a
  case (the sidebar's "Save as test" for a kernel's tool) and run the cases in the kernel.
"""

from __future__ import annotations

from typing import Any

from ..core.tools.kernel_listing import KERNEL_TESTS_TOOL, TESTS_META_KEY
from ..core.tools.tool import Tool

__all__ = ["KERNEL_TESTS_TOOL", "listing_meta", "tests_tool"]

_SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["save", "run"]},
        "tool": {"type": "string"},
        "case": {"type": "object"},
    },
    "required": ["action", "tool"],
}


def listing_meta(session: Any, name: str) -> dict[str, Any] | None:
    """The ``_meta`` a kernel adds to tool ``name``'s listing: its test status and cases
    (``None`` when it has none)."""
    try:
        status = session.test_status(name)
    except Exception:  # gone, or its cases unreadable: nothing to add
        return None
    if status.state == "none":
        return None
    try:
        cases = [c.to_dict() for c in session.tests.cases(name)]
    except Exception:
        cases = []
    return {TESTS_META_KEY: {"status": status.to_dict(), "cases": cases}}


def tests_tool(session: Any) -> Tool:
    """The private tool the server calls: ``save`` a case of a notebook tool, or ``run``
    its cases here; answers with where it was saved and the tool's test status."""

    def handle(arguments: dict[str, Any]) -> dict[str, Any]:
        from ..core.tooltests.cases import TestCase

        name = arguments["tool"]
        out: dict[str, Any] = {}
        if arguments["action"] == "save":
            case = TestCase.from_dict(arguments.get("case") or {}, where="the case", tool=name)
            out["saved"] = session.tests.save(name, case)
        else:
            session.tests.run([name])
        out["tests"] = session.test_status(name).to_dict()
        return out

    return Tool.from_schema(
        KERNEL_TESTS_TOOL,
        "Save or run the test cases of this kernel's tools (for the Jupyter server).",
        _SCHEMA,
        handle,
    )
