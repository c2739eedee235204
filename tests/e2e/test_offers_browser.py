"""The sidebar's Resources and Prompts sections in a real headless Chromium
(``offers.spec.mjs``): read a resource and a filled-in template, render a prompt, filter,
and see a new file's prompt appear live. Screenshot: ``test-artifacts/offers.png``."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

NOTES = '''from typing import Literal

from nexus_jupyter import prompt, resource


@resource("notes://today", mime_type="text/markdown")
def today() -> str:
    """Today's notes."""
    return "# Today\\n- ship it"


@resource("notes://day/{day}")
def day(day: str) -> str:
    """The notes of one day."""
    return f"notes of {day}"


@prompt
def review(code: str, style: Literal["terse", "thorough"] = "terse") -> str:
    """Review a piece of code."""
    return f"Review ({style}):\\n{code}"
'''


def test_resources_and_prompts_in_the_sidebar(lab: dict[str, str]) -> None:  # noqa: F811
    (Path(lab["tools_dir"]) / "notes_offers.py").write_text(NOTES)
    stdout, report = _run_spec(lab, "offers.spec.mjs", ARTIFACTS / "offers.png")
    for step in (
        "the panel shows Resources (2) and Prompts (1) below the tools",
        "resource read: notes://today shows its markdown",
        "template read: notes://day/monday",
        'prompt rendered with its arguments: user message "Review (thorough)"',
        "the search box filters the sections too",
        "a prompt saved in a new tool file appears without a reload",
    ):
        assert step in stdout, report
