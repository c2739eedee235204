"""The notebook's widgets as a new user meets them in a 900 px window with the sidebar open, in
a real headless Chromium (``narrow.spec.mjs``): the Try form's Run and Copy buttons keep their
size beside a long call line, the ``%tools`` details wrap (or go under the list), every tool of
a long catalog can be shown, one refused Run flags every field and offers a test of the field's
own message, a cancel reads as a cancel, the history lists the calls made from Python, a saved
test shows its command as code, and ``%tool list`` says "stale" for a file that failed to reload.
Screenshots: ``test-artifacts/narrow-*.png``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

HELLO = '''from nexus_jupyter import tool


@tool
def hello(name: str) -> str:
    """Say hello to someone."""
    return f"Hello, {name}!"
'''

TOOLS = '''import asyncio
from nexus_jupyter import tool, ToolContext

@tool
def compound_interest(principal: float, rate_percent: float, years: int, per_year: int = 12) -> float:
    """Value of a deposit after compound interest.

    Args:
        principal: Amount deposited.
        rate_percent: Yearly interest rate in percent.
        years: Number of years.
        per_year: Compounding periods per year.
    """
    return round(principal * (1 + rate_percent / 100 / per_year) ** (per_year * years), 2)

@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b

@tool
async def countdown(start: int = 10, *, ctx: ToolContext) -> str:
    """Count down to zero, reporting progress (try Cancel in the form)."""
    for i in range(start):
        await ctx.progress(i + 1, start, f"{start - i - 1}...")
        await asyncio.sleep(0.3)
    return "liftoff"
'''

# Enough tools that the catalog cannot draw them all at first (it draws 60).
MANY = """import nexus_jupyter
from nexus_jupyter import tool

def _unit(name):
    def convert(value: float) -> float:
        return value * 2
    convert.__doc__ = f"Convert a value ({name}): a unit conversion the catalog lists."
    return tool(name=name)(convert)

nexus_jupyter.registry().add_many([_unit(f"unit_{i:02d}") for i in range(55)])
len(nexus_jupyter.registry().entries())"""

PYTHON_CALLS = """import nexus_jupyter
reg = nexus_jupyter.registry()
reg.call_sync("divide", {"a": 1, "b": 4})
(await reg.call("divide", {"a": 9, "b": 3})).value"""

BREAK = """import time
from pathlib import Path
from nexus_jupyter.notebook import api

Path("tools/dynamic/hello_tool.py").write_text(
    Path("tools/dynamic/hello_tool.py").read_text().replace('return f"Hello', 'return f"Hello" +')
)
deadline = time.monotonic() + 20
while "hello" not in api.stale_notes() and time.monotonic() < deadline:
    time.sleep(0.05)
sorted(api.stale_notes())"""

CELLS = [
    "%load_ext nexus_jupyter",
    TOOLS,
    MANY,
    "%tool try compound_interest",
    "%tools",
    "%tool try divide",
    "%tool try countdown",
    PYTHON_CALLS,
    "%tool history divide",
    BREAK,
    "%tool list --source directory:tools/dynamic",
]


def test_the_notebook_widgets_in_a_narrow_window(lab: dict[str, str]) -> None:  # noqa: F811
    root = Path(lab["tools_dir"]).parents[1]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in CELLS],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(notebook, root / "narrow.ipynb")
    (Path(lab["tools_dir"]) / "hello_tool.py").write_text(HELLO)
    shots = [
        f"narrow-{s}.png"
        for s in (
            "try-form",
            "catalog-details",
            "catalog-more",
            "catalog-all",
            "refused",
            "cancelled",
            "saved",
            "history",
        )
    ]
    stdout, report = _run_spec(lab, "narrow.spec.mjs", ARTIFACTS / "narrow-list.png", shots=shots)
    for step in (
        "Run and Copy keep their size",
        "the details wrap",
        "every tool can be shown",
        "one Run flags both fields",
        "a refusal offers a test of the field's own message: $.b: required argument is missing",
        "a cancel reads: Cancelled after",
        "the saved test shows %tool test countdown as code",
        "the history lists the calls made from Python",
        "the stale tool's status says stale",
        "all steps passed",
    ):
        assert step in stdout, report
    print(stdout)
