"""What the notebook tells a new user about a call: the history lists every call of the kernel
(Python's ``reg.call`` too), a refused Run flags every field at once and offers a test of the
field's own message, a cancel reads as a cancel, the history numbers say they are the
session's, a saved test shows its command as code, and the Run row keeps its buttons whole."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import run_ok, wait_for

from nexus_jupyter import Registry
from nexus_jupyter.notebook import api
from nexus_jupyter.notebook.history import CallHistory, session_history
from nexus_jupyter.notebook.widgets.history_panel import HistoryPanel

DIVIDE = '''
from nexus_jupyter import tool

@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b

@tool
def compound(principal: float, years: int, rate: float = 5.0) -> float:
    """Compound interest."""
    return principal * (1 + rate / 100) ** years
'''


# -- the history: every call the kernel makes ---------------------------------------------


def test_history_lists_calls_made_from_python_as_well(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(shell, DIVIDE)
    run_ok(shell, "import nexus_jupyter\nreg = nexus_jupyter.registry()")
    run_ok(shell, 'reg.call_sync("divide", {"a": 1, "b": 2})')
    run_ok(shell, 'await reg.call("divide", {"a": 3, "b": 4})')
    run_ok(shell, "%tool call divide a=5 b=8")
    form = api.try_tool("divide")
    form.set_arguments({"a": 7, "b": 16})
    form.run()
    assert form.result.wait(10)
    # each once, however it was made, in order
    wait_for(lambda: len(session_history().entries("divide")) == 4)
    calls = [dict(r.arguments) for r in session_history().entries("divide")]
    assert calls == [{"a": 1, "b": 2}, {"a": 3, "b": 4}, {"a": 5, "b": 8}, {"a": 7, "b": 16}]
    shown = repr(api.call_history("divide"))
    assert '"a": 1' in shown or "'a': 1" in shown or "a=1" in shown
    assert [r.value for r in session_history().entries("divide")] == [0.5, 0.75, 0.625, 0.4375]
    form.close()


def test_a_history_that_follows_a_registry_stays_bounded_and_can_stop() -> None:
    reg = Registry(search="keyword")
    run = "def twice(x: int) -> int:\n    '''Twice x.'''\n    return 2 * x\n"
    scope: dict = {}
    exec(run, scope)
    reg.add(scope["twice"])
    history = CallHistory(limit=3)
    history.follow(reg)
    history.follow(reg)  # once is enough: no call is recorded twice
    for x in range(5):
        reg.call_sync("twice", {"x": x})
    assert [r.value for r in history.entries()] == [4, 6, 8]  # the newest 3
    api.call_tool("twice", {"x": 10}, registry=reg, history=history)  # not recorded twice
    assert [r.value for r in history.entries()] == [6, 8, 20]
    history.unfollow(reg)
    reg.call_sync("twice", {"x": 11})
    assert [r.value for r in history.entries()] == [6, 8, 20]
    other = CallHistory()  # a history that does not follow: the face records for it
    api.call_tool("twice", {"x": 12}, registry=reg, history=other)
    assert [r.value for r in other.entries()] == [24]
    reg.close()


# -- a Run refused before the call ---------------------------------------------------------


def test_one_run_flags_every_field_the_call_would_be_refused_for(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(shell, DIVIDE)
    form = api.try_tool("divide")
    form.fields.fields["b"].control.value = "x"  # unreadable; a is left empty (required)
    assert form.run() is None
    a_error = form.fields.fields["a"].error.value
    b_error = form.fields.fields["b"].error.value
    assert "required argument is missing" in a_error  # flagged now, not on the next Run
    assert html.unescape(b_error).count('"x" is not a number.') == 1
    assert form.result.outcome == "refused"
    assert form.saver.save_button.disabled  # text that cannot be read gave no call to save
    assert "fix the fields marked above" in form.saver.status.value
    assert form.form_error.value == ""
    form.close()


def test_unreadable_fields_are_all_flagged_and_keep_their_own_message(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(shell, DIVIDE)
    form = api.try_tool("compound")
    form.fields.fields["principal"].control.value = "lots"
    form.fields.fields["years"].control.value = "ten"
    assert form.run() is None
    assert "is not a number" in form.fields.fields["principal"].error.value
    assert "is not an integer" in form.fields.fields["years"].error.value
    # the unreadable fields are not also called "missing"
    assert "missing" not in form.fields.fields["years"].error.value
    form.close()


def test_a_number_box_words_its_problem_as_the_sidebar_does(
    shell: InteractiveShell, registry: Registry
) -> None:
    """Text in a number box is quoted as JSON, as every refused value is, and said in the
    sidebar's words (numbers.ts), decimals in an integer included."""
    run_ok(shell, DIVIDE)
    form = api.try_tool("compound")
    said = {}
    for typed, field in [("abc", "years"), ("1.5", "years"), ("1e", "principal"), ("2*3", "years")]:
        form.fields.fields[field].control.value = typed
        assert form.run() is None
        said[typed] = html.unescape(form.fields.fields[field].error.value)
        form.fields.fields[field].control.value = "1"
    assert '"abc" is not an integer.' in said["abc"]
    assert '"1.5" is not an integer (no decimals).' in said["1.5"]
    assert '"1e" is not a number yet: finish typing it.' in said["1e"]
    assert "the form does not work out expressions" in said["2*3"]
    assert not any(re.search(r"'(abc|1\.5|1e|2\*3)'", text) for text in said.values()), said
    form.close()


def test_a_refused_run_offers_a_test_of_the_fields_own_message(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(shell, DIVIDE)
    form = api.try_tool("divide")
    form.fields.fields["a"].control.value = "1"  # b left empty: the validator refuses
    assert form.run() is None
    assert form.result.outcome == "refused"
    saver = form.saver
    assert not saver.save_button.disabled and saver.arguments == {"a": 1}
    assert (saver.kind.value, saver.value.value) == ("error", "$.b: required argument is missing")
    saved = saver.save()
    assert saved is not None
    # the test passes: the refusal's message contains what it expects
    report = registry.tests.run(["divide"])
    assert report.ok, report
    form.close()


# -- a cancel, the numbers, a saved test, the Run row ---------------------------------------


def test_the_history_panel_says_a_cancel_and_whose_numbers_they_are() -> None:
    history = CallHistory()
    history.record(
        "nap",
        {"seconds": 10},
        error="the call was cancelled",
        error_type="CancelledError",
        duration=0.9565,
    )
    history.record("nap", {"seconds": 1}, error="boom", error_type="RuntimeError", duration=0.002)
    panel = HistoryPanel(history, "nap", lambda _arguments: None)
    failed, cancelled = (row.children[1].value for row in panel.rows.children)
    assert "color:#666'>cancelled<" in cancelled and "CancelledError" not in cancelled
    assert "color:#c62828'>RuntimeError<" in failed
    number = re.search(r"class='nexus-history-number' title='([^']*)'>([^<]*)<", cancelled)
    assert number is not None
    title, shown = number.groups()
    first = history.entries()[0].id
    assert shown == f"session #{first}" and "of this session" in title
    panel.close()


def test_a_saved_test_shows_its_command_as_code(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, DIVIDE)
    form = api.try_tool("divide")
    form.set_arguments({"a": 1, "b": 4})
    form.run()
    assert form.result.wait(10)
    saved = form.saver.save()
    assert "`" not in str(saved)  # plain text: no Markdown backticks
    assert "; %tool test divide runs it" in str(saved)
    shown = form.saver.status.value
    assert "<code>%tool test divide</code> runs it" in shown and "`" not in html.unescape(shown)
    assert "<code>%tool test divide</code>" in saved._repr_html_()
    form.close()


def test_the_run_row_keeps_its_buttons_whole_and_wraps_the_call_line(
    shell: InteractiveShell, registry: Registry
) -> None:
    run_ok(shell, DIVIDE)
    form = api.try_tool("divide")
    form.set_arguments({"a": 1000000.5, "b": 3.25})
    row = next(c for c in form.children if form.run_button in getattr(c, "children", ()))
    assert form.run_button.layout.flex == "0 0 auto"  # never squeezed
    assert form.command.layout.flex == "1 1 auto" and form.command.layout.min_width == "0"
    line = form.command.value
    assert "flex:none" in line  # the Copy button keeps its size too
    assert "white-space:pre-wrap" in line and "overflow-wrap:anywhere" in line
    assert "nowrap" not in line
    assert row.layout.width == "100%"
    style = form.children[0].value
    assert ".nexus-form .widget-html-content{min-width:0}" in style
    form.close()


@pytest.mark.parametrize("seconds", [0.9565])
def test_a_cancelled_result_reads_as_cancelled_in_grey(seconds: float) -> None:
    from nexus_jupyter.core.tools.result import ToolResult
    from nexus_jupyter.notebook.widgets.result import ResultPane

    pane = ResultPane()
    result = ToolResult.failure("nap", "the call was cancelled", "CancelledError")
    result.duration = seconds
    pane.show_result(result)
    assert pane.outcome == "cancelled"
    assert re.search(r"color:#666'>Cancelled after 0\.96 s<", pane.status.value)
    assert pane.output.children == ()
