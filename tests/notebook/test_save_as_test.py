"""The form's "Save as test" offers only the call that ran with what it gave, and says
"saved" only for a case that reaches the notebook: a page that was reloaded (or closed) takes
the cases over or, when no page answers, the kernel writes them into the file."""

from __future__ import annotations

import html
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import run_ok, wait_for

from nexus_jupyter import Registry
from nexus_jupyter.core.tools.spec import ToolSpec
from nexus_jupyter.core.tooltests.cases import Expectation, TestCase
from nexus_jupyter.notebook import api, test_cases
from nexus_jupyter.notebook.test_cases import NotebookCases

ADD = '''
from nexus_jupyter import tool

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''


def cases_in(path: Path) -> list[dict]:
    return nbformat.read(path, as_version=4).metadata.get("nexus_jupyter", {}).get("tests", [])


def ran(form: Any, **arguments: Any) -> None:
    for key, value in arguments.items():
        form.fields.fields[key].control.value = str(value)
    form.run()
    assert form.result.wait(10)


# -- the form's row --------------------------------------------------------------------------


def test_nothing_is_offered_before_a_run_nor_after_one_that_could_not_run(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, ADD)
    form = api.try_tool("add")
    saver = form.saver
    assert saver.save_button.disabled and "Run the tool" in saver.status.value
    ran(form, a=20, b=22)
    assert not saver.save_button.disabled
    assert (saver.kind.value, saver.value.value) == ("equals", "42")
    form.fields.fields["a"].control.value = "twenty"  # unreadable: refused before any call
    assert form.run() is None
    # the 42 of the run before is not offered for this call
    assert saver.save_button.disabled and saver.arguments is None
    assert (saver.kind.value, saver.value.value) == ("succeeds", "")
    assert "nothing to save" in saver.status.value
    saver.save()
    assert cases_in(notebook) == [] and registry.tests.cases("add") == []
    ran(form, a=1, b=2)
    assert (saver.kind.value, saver.value.value) == ("equals", "3")
    form.close()


def test_save_keeps_the_call_that_ran_not_what_was_typed_since(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, ADD)
    form = api.try_tool("add")
    ran(form, a=2, b=3)
    form.fields.fields["b"].control.value = "300"  # typed after the run, not run
    assert "saves the call that ran: <code>add a=2 b=3</code>" in form.saver.note.value
    form.saver.save_button.click()
    assert "Saved a test of 'add' (expect 5)" in html.unescape(form.saver.status.value)
    assert cases_in(notebook) == [{"tool": "add", "arguments": {"a": 2, "b": 3}, "expect": 5}]
    form.fields.fields["b"].control.value = "3"
    assert form.saver.note.value == ""  # the form holds the call that ran again
    form.close()


def test_a_refused_call_is_offered_as_a_test_that_it_is_refused(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, ADD)
    form = api.try_tool("add")
    ran(form, a=1)  # b missing: the registry's validator refuses
    assert form.saver.arguments == {"a": 1} and form.saver.kind.value == "error"
    assert "b" in form.saver.value.value
    form.close()


def test_saved_turns_into_a_warning_when_the_notebook_cannot_take_the_case(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, ADD)
    form = api.try_tool("add")
    ran(form, a=1, b=1)
    notebook.unlink()  # renamed or deleted behind the kernel's back
    form.saver.save_button.click()
    status = html.unescape(form.saver.status.value)
    assert "✔" not in status and "could not be written into" in status, status
    form.close()


# -- the store and the JupyterLab extension's comm -------------------------------------------


class FakeComm:
    """A comm as the kernel holds it: what it sent, and its handlers."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.handler: Any = None

    def send(self, data: dict) -> None:
        self.sent.append(data)

    def on_msg(self, handler: Any) -> None:
        self.handler = handler

    def on_close(self, handler: Any) -> None:
        pass

    def answer(self, data: dict) -> None:
        self.handler({"content": {"data": data}})


SPEC = ToolSpec(
    name="add", description="Add.", input_schema={"type": "object"}, source_kind="notebook"
)


def case(a: int) -> TestCase:
    return TestCase("add", {"a": a, "b": 0}, Expectation("equals", a))


@pytest.fixture
def store(notebook: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[NotebookCases]:
    monkeypatch.setattr(test_cases, "FRONTEND_WAIT_S", 0.05)
    store = NotebookCases(notebook)
    yield store
    if store._timer is not None:
        store._timer.cancel()


def test_a_reloaded_page_takes_the_cases_over(store: NotebookCases, notebook: Path) -> None:
    first = FakeComm()
    store._use(first)  # the comm the kernel opened when the extension loaded
    first.answer({"type": "cases", "tests": []})
    store.save_case(SPEC, case(1))
    assert first.sent[-1]["type"] == "tests"
    first.answer({"type": "saved"})
    assert not store.pending
    # The page is reloaded: the new page opens a comm of its own, with the cases its
    # notebook holds (the first one, which the old page saved).
    reloaded = FakeComm()
    store._frontend_opened(
        reloaded, {"content": {"data": {"type": "cases", "tests": [case(1).to_dict()]}}}
    )
    store.save_case(SPEC, case(2))
    assert first.sent[-1]["tests"] == [case(1).to_dict()]  # nothing more to the old page
    assert reloaded.sent[-1]["tests"] == [case(1).to_dict(), case(2).to_dict()]
    settled: list[Any] = []
    store.on_written(settled.append)
    reloaded.answer({"type": "saved"})
    assert settled == [None] and not store.pending
    assert cases_in(notebook) == []  # the page saves its notebook; the kernel did not write


def test_a_case_no_page_confirms_is_written_into_the_file(
    store: NotebookCases, notebook: Path
) -> None:
    gone = FakeComm()
    store._use(gone)
    gone.answer({"type": "cases", "tests": []})  # a page answered once, then was closed
    done = threading.Event()
    store.save_case(SPEC, case(7))
    store.on_written(lambda problem: done.set() if problem is None else None)
    assert done.wait(5), "the kernel never wrote the case itself"
    assert cases_in(notebook) == [case(7).to_dict()]


def test_while_a_cell_runs_the_page_gets_time_to_answer(
    notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(test_cases, "FRONTEND_WAIT_S", 0.02)
    asked: list[bool] = []  # each time the store checks whether a cell runs: yes
    store = NotebookCases(notebook, busy=lambda: asked.append(True) or True)
    page = FakeComm()
    store._use(page)
    page.answer({"type": "cases", "tests": []})
    store.save_case(SPEC, case(3))
    wait_for(lambda: len(asked) >= 3, 5)  # the wait ran out three times, a cell running
    assert store.pending and cases_in(notebook) == []  # its answer waits behind the cell
    page.answer({"type": "saved"})
    assert not store.pending and cases_in(notebook) == []


def test_a_page_that_could_not_save_says_so(store: NotebookCases) -> None:
    page = FakeComm()
    store._use(page)
    page.answer({"type": "cases", "tests": []})
    store.save_case(SPEC, case(4))
    page.answer({"type": "save-failed", "error": "permission denied"})
    problems: list[Any] = []
    store.on_written(problems.append)
    assert problems and "could not save work.ipynb: permission denied" in problems[0]


def test_saved_for_an_earlier_list_does_not_settle_a_later_case(
    store: NotebookCases, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two cases saved before the page answers: its "saved" for the first list (one case)
    does not say the second is in the notebook; its "saved" for the second list does."""
    monkeypatch.setattr(test_cases, "FRONTEND_WAIT_S", 30.0)  # no file write meanwhile
    page = FakeComm()
    store._use(page)
    page.answer({"type": "cases", "tests": []})
    store.save_case(SPEC, case(1))
    store.save_case(SPEC, case(2))
    settled: list[Any] = []
    store.on_written(settled.append)
    page.answer({"type": "saved", "count": 1})
    assert settled == [] and store.pending
    page.answer({"type": "saved", "count": 2})
    assert settled == [None] and not store.pending


def test_the_kernel_never_writes_behind_a_page_that_saves_the_notebook(
    store: NotebookCases, notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page that saves the notebook but whose confirmation is late is alive: writing the
    file then could put back older cells over its save. The kernel waits, and in the end
    says the cases are in the open notebook; the page's file is left as it saved it."""
    monkeypatch.setattr(test_cases, "UNCONFIRMED_ROUNDS", 3)
    page = FakeComm()
    store._use(page)
    page.answer({"type": "cases", "tests": []})
    store.save_case(SPEC, case(5))
    # the page saves the notebook (a new cell, and the case in its metadata) but its
    # "saved" never arrives
    saved = nbformat.read(notebook, as_version=4)
    saved.cells.append(nbformat.v4.new_code_cell("x = 2"))
    saved.metadata["nexus_jupyter"] = {"tests": [case(5).to_dict()]}
    nbformat.write(saved, notebook)
    as_the_page_saved = test_cases.file_stamp(notebook)
    problems: list[Any] = []
    done = threading.Event()
    store.on_written(lambda problem: (problems.append(problem), done.set()))
    assert done.wait(5), "the kernel never said what became of the case"
    assert problems[0] is not None and "did not confirm" in problems[0]
    assert "Ctrl+S" in problems[0]
    assert test_cases.file_stamp(notebook) == as_the_page_saved  # the kernel never wrote


def test_writing_the_cases_refuses_a_file_that_changed_since_its_stamp(notebook: Path) -> None:
    stamp = test_cases.file_stamp(notebook)
    before = notebook.read_text()
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("changed = True"))
    nbformat.write(nb, notebook)  # another writer, after the stamp was taken
    changed = notebook.read_text()
    assert changed != before
    with pytest.raises(test_cases.ChangedMeanwhile):
        test_cases.write_notebook_cases(notebook, [case(1).to_dict()], unchanged=stamp)
    assert notebook.read_text() == changed  # untouched
    test_cases.write_notebook_cases(
        notebook, [case(1).to_dict()], unchanged=test_cases.file_stamp(notebook)
    )
    assert cases_in(notebook) == [case(1).to_dict()]
