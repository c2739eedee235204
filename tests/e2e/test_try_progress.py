"""The sidebar's Try form on the trial's three findings, in a real headless Chromium
(``tryprogress.spec.mjs``): one Run flags a number box holding text and an empty required
field together; a kernel's tool that reports progress shows a bar with its message; a kernel's
tool that raises its own exception class shows that class and message, not an agent's advice.
Screenshots: ``test-artifacts/tryprogress-*.png``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

TOOLS = '''import statistics

from nexus_jupyter import ToolContext, tool


@tool
async def countdown(start: int = 5, *, ctx: ToolContext) -> str:
    """Count down to zero, reporting progress."""
    import asyncio

    for i in range(start):
        await ctx.progress(i + 1, start, f"{start - i}...")
        await asyncio.sleep(0.5)
    return "liftoff"


@tool
def describe_numbers(values: list[float]) -> float:
    """The mean of some numbers."""
    return statistics.fmean(values)
'''


def test_try_form_flags_every_field_shows_progress_and_the_tools_own_error(
    lab: dict[str, str],  # noqa: F811
) -> None:
    root = Path(lab["tools_dir"]).parents[1]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in ("%load_ext nexus_jupyter", TOOLS)],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, root / "progress.ipynb")
    shots = [f"tryprogress-{s}.png" for s in ("bad-number", "running", "raises")]
    stdout, report = _run_spec(
        lab, "tryprogress.spec.mjs", ARTIFACTS / "tryprogress-end.png", shots=shots
    )
    for step in (
        "one Run flags both fields",
        "while countdown runs the form shows the bar",
        "countdown finished: liftoff, the bar is gone",
        "describe_numbers([]) fails as: StatisticsError: fmean requires at least one data point",
        "all steps passed",
    ):
        assert step in stdout, report
    print(stdout)
