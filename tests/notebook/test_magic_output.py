"""Every ``%tool`` line of a cell shows its output (not only the last one), in a real shell,
in terminal IPython running a ``.ipy`` script and in a real kernel run by nbclient; what a
headless kernel says instead of prompting; no comm announced where no page can answer it."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType
from typing import Any

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.lib.pretty import pretty
from IPython.utils.capture import capture_output
from nbclient import NotebookClient

from nexus_jupyter import Registry, ToolResult
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.notebook.history import session_history
from nexus_jupyter.notebook.line_output import split_silencer
from nexus_jupyter.notebook.views import ToolInfo

TOOLS = '''
from nexus_jupyter import tool

@tool(categories=["math"])
def add(a: int, b: int = 2) -> int:
    """Add two integers."""
    return a + b

@tool(categories=["text"])
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()
'''


@pytest.fixture
def tools(shell: InteractiveShell, registry: Registry) -> None:
    registry.policy = Policy()  # `%tool mode` sets its mode
    assert shell.run_cell(TOOLS).success


def run(shell: InteractiveShell, cell: str) -> tuple[Any, list[dict[str, Any]], str]:
    """The cell's value (what IPython shows as Out[N]), what it displayed, and its stdout."""
    with capture_output() as shown:
        result = shell.run_cell(cell)
    assert result.success, result.error_in_exec or result.error_before_exec
    return result.result, [o.data for o in shown.outputs], shown.stdout


def test_each_line_of_a_cell_shows_its_output(shell: InteractiveShell, tools: None) -> None:
    value, shown, _ = run(shell, "%tool list\n%tool mode allow\n%tool info shout")
    assert len(shown) == 2  # the earlier lines, displayed where they ran
    assert "add" in shown[0]["text/html"] and "shout" in shown[0]["text/html"]
    assert shown[1]["text/plain"] == "mode: allow"  # text, not the repr "'mode: allow'"
    assert isinstance(value, ToolInfo) and value.name == "shout"  # the last: Out[N], once


def test_an_assigned_line_keeps_its_value_and_shows_nothing(
    shell: InteractiveShell, tools: None
) -> None:
    value, shown, _ = run(shell, "result = %tool call add a=1 b=2\n%tool history add\nresult")
    assert isinstance(value, ToolResult) and value.structured == 3
    assert len(shown) == 1 and "add(" in shown[0]["text/plain"]  # the history line only
    assert shell.user_ns["result"] is value


def test_lines_in_a_loop_and_a_silent_run_show_too(shell: InteractiveShell, tools: None) -> None:
    _, shown, _ = run(shell, "for _ in range(2):\n    %tool mode\n")
    assert [s["text/plain"] for s in shown] == ["mode: default", "mode: default"]
    with capture_output() as out:  # as `ipython script.ipy` runs a file: nothing is Out[N]
        shell.run_cell("%tool mode prompt\n%tool mode", silent=True)
    assert [o.data["text/plain"] for o in out.outputs] == ["mode: prompt", "mode: prompt"]


def test_a_magic_called_from_python_only_returns(shell: InteractiveShell, tools: None) -> None:
    value, shown, _ = run(shell, "modes = [get_ipython().run_line_magic('tool', 'mode')]\nmodes")
    assert value == ["mode: default"] and shown == []
    assert pretty(value[0]) == "mode: default"


def test_ipython_runs_a_script_of_magics_and_prints_each(tmp_path: Path) -> None:
    script = tmp_path / "tour.ipy"
    script.write_text(
        "%load_ext nexus_jupyter\n"
        + TOOLS
        + "%tool list --source notebook\n%tool info add\n%tool call add a=2 b=40\n%tool mode allow\n"
        + "%tools\n%tool try add\n%tool export shout --dry-run\n"
    )
    env = {**os.environ, "IPYTHONDIR": str(tmp_path / "ipython"), "HOME": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "IPython", "--no-banner", "--colors=nocolor", str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "shout  [notebook" in out  # the list
    assert "Add two integers." in out  # the card
    assert "42" in out  # the call's result
    assert "mode: allow" in out and "'mode: allow'" not in out
    # the widgets, and export, say in words what they would show (a new user's trial: the
    # terminal printed their repr, Catalog(children=(HTML(...)
    assert "The tool catalog (" in out and "`%tool search QUERY` searches them." in out
    assert "The form for add needs a notebook front end" in out
    assert "`%tool call add key=value ...` calls it" in out
    assert "Would write (dry run) " in out and "def shout(text: str) -> str:" in out
    assert "children=" not in out and "<ExportResult" not in out


def test_credentials_set_without_a_prompt_says_what_to_do(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    import getpass

    from IPython.core.error import StdinNotImplementedError

    def no_stdin(prompt: str = "") -> str:  # what ipykernel does when the frontend has no stdin
        raise StdinNotImplementedError("getpass was called, but this frontend does not support")

    monkeypatch.setattr(getpass, "getpass", no_stdin)
    result = shell.run_cell("%tool credentials set weather api_key")
    message = str(result.error_in_exec)
    assert type(result.error_in_exec).__name__ == "UsageError", message
    assert "cannot ask for the value of weather/api_key" in message
    assert "`nexus-tools credentials set weather api_key`" in message
    assert "NEXUS_CRED_WEATHER_API_KEY" in message


def shown_texts(shell: InteractiveShell, cell: str) -> list[str]:
    """Everything the cell showed, displayed or as Out[N] (the terminal shell prints Out[N] to
    stdout), as text, sorted."""
    _, shown, stdout = run(shell, cell)
    outs = re.findall(r"^Out\[\d+\]: (.*)$", stdout, flags=re.MULTILINE)
    return sorted([s["text/plain"] for s in shown] + outs)


@pytest.fixture
def interactivity(shell: InteractiveShell) -> Iterator[Callable[[str], None]]:
    before = shell.ast_node_interactivity
    yield lambda value: setattr(shell, "ast_node_interactivity", value)
    shell.ast_node_interactivity = before


CELLS = {
    "%tool mode allow\n%tool mode prompt\n%tool mode default": [
        "mode: allow",
        "mode: default",
        "mode: prompt",
    ],
    "for _ in range(2):\n    %tool mode": ["mode: default", "mode: default"],
    "%tool mode allow\n%tool mode default\nx = 1": ["mode: allow", "mode: default"],
}


@pytest.mark.parametrize("setting", ["all", "last", "last_expr", "last_expr_or_assign"])
def test_each_line_shows_once_whatever_the_interactivity(
    shell: InteractiveShell,
    tools: None,
    interactivity: Callable[[str], None],
    setting: str,
) -> None:
    interactivity(setting)
    for cell, expected in CELLS.items():
        if setting == "last_expr_or_assign" and cell.endswith("x = 1"):
            expected = ["1", *expected]  # the assigned value is Out[N] there
        assert shown_texts(shell, cell) == expected, cell
    assigned = shown_texts(shell, "x = %tool mode allow\ny = %tool mode default")
    assert assigned == (["mode: default"] if setting == "last_expr_or_assign" else [])


def test_interactivity_none_shows_nothing_but_a_script_prints(
    shell: InteractiveShell, tools: None, interactivity: Callable[[str], None]
) -> None:
    interactivity("none")
    for cell in CELLS:
        assert shown_texts(shell, cell) == [], cell
    assert shell.user_ns["x"] == 1  # the cells ran
    with capture_output() as out:  # `ipython tour.ipy` runs each cell silently
        shell.run_cell("%tool mode prompt\n%tool mode", silent=True)
    assert [o.data["text/plain"] for o in out.outputs] == ["mode: prompt", "mode: prompt"]


@pytest.mark.parametrize("setting", ["all", "last_expr", "none"])
def test_a_trailing_semicolon_silences_a_line(
    shell: InteractiveShell,
    tools: None,
    registry: Registry,
    interactivity: Callable[[str], None],
    setting: str,
) -> None:
    interactivity(setting)
    assert shown_texts(shell, "%tool mode allow;\n%tool mode prompt ;") == []
    assert registry.policy.mode == "prompt"  # ran, with the `;` off its arguments
    assert shown_texts(shell, "for _ in range(2):\n    %tool mode;\n%tools add;") == []
    assert shown_texts(shell, '%tool call add {"a": 1, "b": 2};\n%tool mode;') == []
    assert [r.value for r in session_history().entries("add")] == [3]


def test_a_semicolon_glued_to_the_magic_name_silences_too(
    shell: InteractiveShell, tools: None
) -> None:
    # IPython reads a magic's name up to the first space: `%tools;` asks for `tools;`
    assert shown_texts(shell, "%tools;") == []
    assert shown_texts(shell, "%tool;\n%tool list;\n%tools ;") == []
    value, _, _ = run(shell, "catalog = %tools;\ncatalog")
    assert type(value).__name__ == "Catalog"  # assigned: the catalog, kept
    text = "%tools;"  # a string that only looks like the line stays as written
    assert run(shell, f"{text!r}")[0] == text


def test_a_semicolon_of_an_argument_stays(shell: InteractiveShell, tools: None) -> None:
    run(shell, 'r = %tool call add a=1 b=2;\nq = %tool call shout text="a;"')
    assert shell.user_ns["r"].structured == 3  # assigned: the `;` silences nothing to lose
    assert shell.user_ns["q"].structured == "A;"
    value, _, _ = run(shell, '%tool call shout {"text": "c;"}')
    assert value.structured == "C;"


@pytest.mark.parametrize(
    ("line", "split"),
    [
        ("mode allow;", ("mode allow", True)),
        ("mode allow ;  ", ("mode allow ", True)),
        ("call shout text=a;;", ("call shout text=a;", True)),
        ('call shout text="a;"', ('call shout text="a;"', False)),
        ("call shout text=a\\;", ("call shout text=a\\;", False)),
        ("call shout text=a\\\\;", ("call shout text=a\\\\", True)),
        ("call shout text='a;", ("call shout text='a;", False)),
        ("mode", ("mode", False)),
    ],
)
def test_split_silencer(line: str, split: tuple[str, bool]) -> None:
    assert split_silencer(line) == split


def test_a_loop_reads_its_bytecode_once(
    shell: InteractiveShell, tools: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dis

    read: list[CodeType] = []
    real = dis.get_instructions

    def counted(code: Any, **kw: Any) -> Any:
        read.append(code)
        return real(code, **kw)

    monkeypatch.setattr(dis, "get_instructions", counted)
    _, shown, _ = run(shell, "for _ in range(20):\n    %tool mode\n    %tool mode")
    assert len(shown) == 40
    assert len(read) == 1


# -- a real kernel, run headless by nbclient (what `jupyter nbconvert --execute` does) ---------

KERNEL_CELLS = [
    "%load_ext nexus_jupyter",
    TOOLS,
    "%tool list --source notebook\n%tool info add\n%tool mode allow",
    "r = %tool call add a=1 b=2\nr.structured",
    "%tool credentials set weather api_key",
]


def _execute(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> tuple[Any, list[str]]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in KERNEL_CELLS]
    log = logging.getLogger("nexus-test-nbclient")
    with caplog.at_level(logging.WARNING, logger=log.name):
        NotebookClient(
            nb,
            kernel_name="python3",
            timeout=60,
            allow_errors=True,
            log=log,
            resources={"metadata": {"path": str(tmp_path)}},
        ).execute()
    return nb, [r.getMessage() for r in caplog.records if r.name == log.name]


@pytest.mark.slow
def test_a_headless_kernel_shows_every_line_and_opens_no_comm(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    nb, warnings = _execute(tmp_path, caplog)
    outputs = nb.cells[2].outputs
    assert [o.output_type for o in outputs] == ["display_data", "display_data", "execute_result"]
    assert "shout" in outputs[0].data["text/html"]
    assert "Add two integers." in outputs[1].data["text/html"]
    assert outputs[2].data["text/plain"] == "mode: allow"
    assert [o.data["text/plain"] for o in nb.cells[3].outputs] == ["3"]  # captured, shown once
    (said,) = nb.cells[4].outputs  # a UsageError: one line on stderr, no traceback
    assert said.name == "stderr" and said.text.startswith("UsageError: This kernel cannot ask")
    assert "nexus-tools credentials set weather api_key" in said.text
    assert not [w for w in warnings if "comm target" in w], warnings


@pytest.mark.slow
def test_a_kernel_of_a_jupyter_session_announces_the_test_cases_comm(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a Jupyter server (JPY_SESSION_NAME set) the kernel still offers the comm a
    JupyterLab page answers; nbclient, standing in for a page without the extension, says
    it has no handler."""
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "work.ipynb"))
    _, warnings = _execute(tmp_path, caplog)
    assert "No handler found for comm target 'nexus_jupyter.tests'" in warnings
