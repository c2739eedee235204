"""A tool that raises explains itself: the traceback of the tool's own code (the cell or
file and the line, none of our frames) in ``%tool call``, the form's result pane and the
REST/sidebar JSON; ``%debug`` after a failed ``%tool call`` opens at the tool's frame."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import Face, run_ok

from nexus_jupyter import Registry
from nexus_jupyter.notebook.widgets.form import ToolForm

CELL = '''from nexus_jupyter import tool

@tool
def circle_area(radius: float) -> float:
    """The area of a circle, divided by (radius - 1) to fail at radius 1."""
    scale = radius - 1
    return 3.0 * radius * radius / scale
'''
RAISING_LINE = 7  # of CELL


def _define(shell: InteractiveShell) -> int:
    number = int(shell.execution_count)  # the In[N] the cell runs as
    run_ok(shell, CELL)
    return number


def _no_frames_of_ours(trace: str) -> None:
    assert "nexus_jupyter/" not in trace and "running.py" not in trace, trace


def test_call_shows_the_cell_and_line_that_raised(face: Face, shell: InteractiveShell) -> None:
    number = _define(shell)
    result = face.call("circle_area", {"radius": 1})
    assert result.error_type == "ZeroDivisionError"
    trace = result.traceback
    assert trace.startswith("Traceback (most recent call last):")
    assert f"Cell In[{number}], line {RAISING_LINE}, in circle_area" in trace
    assert "return 3.0 * radius * radius / scale" in trace
    assert trace.splitlines()[-1] == "ZeroDivisionError: float division by zero"
    _no_frames_of_ours(trace)
    shown = shell.display_formatter.format(result)[0]
    assert f"Cell In[{number}], line {RAISING_LINE}" in shown["text/html"]
    assert f"Cell In[{number}], line {RAISING_LINE}" in shown["text/plain"]


def test_a_file_tool_points_at_its_file_and_line(
    registry: Registry, shell: InteractiveShell, tmp_path: Path
) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    path = folder / "circle_area.py"
    path.write_text(CELL)
    registry.watch(folder)
    run_ok(shell, "%tool call circle_area radius=1")
    trace = registry.call_sync("circle_area", {"radius": 1}).traceback
    assert f'File "{path}", line {RAISING_LINE}, in circle_area' in trace
    _no_frames_of_ours(trace)


def test_frames_below_the_tool_are_kept(face: Face, shell: InteractiveShell) -> None:
    helper_cell = int(shell.execution_count)
    shell.run_cell("def helper(x):\n    return {}[x]\n", store_history=True)
    tool_cell = int(shell.execution_count)
    tool_cell_text = "from nexus_jupyter import tool\n@tool\ndef lookup(key: str) -> str:\n"
    shell.run_cell(tool_cell_text + "    return helper(key)\n", store_history=True)
    assert tool_cell == helper_cell + 1
    trace = face.call("lookup", {"key": "k"}).traceback
    lines = trace.splitlines()
    tool_at = next(i for i, line in enumerate(lines) if f"Cell In[{tool_cell}], line 4" in line)
    helper_at = next(i for i, line in enumerate(lines) if f"Cell In[{helper_cell}], line 2" in line)
    assert tool_at == 1 and helper_at > tool_at  # the tool's frame first, then what it called
    assert lines[-1] == "KeyError: 'k'"


def test_the_form_result_pane_shows_the_traceback(
    registry: Registry, shell: InteractiveShell
) -> None:
    number = _define(shell)
    form = ToolForm(registry.get("circle_area"), registry)
    form.fields.fields["radius"].control.value = "1"
    form.run_button.click()
    assert form.result.wait(10)
    shown = form.result.output.children[0].value
    assert "ZeroDivisionError" in shown and "traceback (the tool's code)" in shown
    assert f"Cell In[{number}], line {RAISING_LINE}, in circle_area" in shown


def test_rest_json_carries_the_traceback(registry: Registry, shell: InteractiveShell) -> None:
    _define(shell)
    data = registry.call_sync("circle_area", {"radius": 1}).to_dict()
    assert data["is_error"] and re.search(r"line 7, in circle_area", data["traceback"])
    assert data["notes"] == []


def test_a_secret_in_the_traceback_is_masked(registry: Registry, shell: InteractiveShell) -> None:
    from nexus_jupyter.core.tools.result import ToolResult

    result = ToolResult.failure("t", "boom")
    result.traceback = "  File x, line 1\n    key = 'hunter2-secret'\nValueError: boom"
    result.masker = lambda text: text.replace("hunter2-secret", "***")
    assert "hunter2" not in result.to_dict()["traceback"]
    assert "hunter2" not in result.redacted().traceback


@pytest.mark.parametrize("how", ["magic", "func"])
def test_debug_after_a_failed_call_opens_at_the_tools_frame(
    how: str, shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    _define(shell)
    if how == "magic":
        run_ok(shell, "%tool call circle_area radius=1")
    else:
        run_ok(
            shell,
            "from nexus_jupyter.notebook import api\n_ = api.call_tool('circle_area', {'radius': 1})",
        )
    monkeypatch.setattr(sys, "stdin", io.StringIO("p ('at', scale, radius)\nup\nq\n"))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(shell.InteractiveTB, "pdb", None)  # a debugger made now prints to `out`
    shell.run_line_magic("debug", "")
    printed = out.getvalue()
    assert "('at', 0.0, 1.0)" in printed  # the tool's locals: the debugger is in its frame
    assert "Oldest frame" in printed  # `up` cannot leave the tool for our call machinery
