"""Tool tests in the notebook: save (Python, magic, the form's button), run, live re-runs
after a cell changes a tool, the notebook's metadata, export, info, stats and eval; each
behaviour through the Python function and through the magic where both exist."""

from __future__ import annotations

import html
import json
import time
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import run_ok
from waiting import wait_for_test_state, wait_until  # tests/ is on sys.path

from nexus_jupyter import Registry
from nexus_jupyter.notebook import api, testing
from nexus_jupyter.notebook.export import export_tool
from nexus_jupyter.sources.tool_tests import read_case_file

ADD = '''
from nexus_jupyter import tool

@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a {op} b
'''


def metadata_cases(path: Path) -> list[dict]:
    return nbformat.read(path, as_version=4).metadata.get("nexus_jupyter", {}).get("tests", [])


@pytest.fixture(params=["func", "magic"])
def save(request: pytest.FixtureRequest, shell: InteractiveShell):
    """Save a case through the Python function or the magic."""

    def through_func(name: str, arguments: dict, **expectation: object) -> str:
        return str(testing.save_test(name, arguments, **expectation))

    def through_magic(name: str, arguments: dict, **expectation: object) -> str:
        options = ""
        for key, value in expectation.items():
            flag = {
                "expect": "--expect",
                "expect_error": "--expect-error",
                "subset": "--subset",
            }.get(key, "--check")
            shown = json.dumps(value) if key in ("expect", "subset") else f'"{value}"'
            options += f" {flag} {shown}"
        result = shell.run_cell(f"%tool test save {name} {json.dumps(arguments)}{options}")
        if result.error_in_exec is not None:
            raise result.error_in_exec
        return str(result.result)

    return through_func if request.param == "func" else through_magic


def test_a_notebook_tools_case_goes_into_the_notebook_metadata(
    shell: InteractiveShell, registry: Registry, notebook: Path, save
) -> None:
    run_ok(shell, ADD.format(op="+"))
    where = save("add", {"a": 1, "b": 2}, expect=3)
    assert "work.ipynb (notebook metadata)" in where
    save("add", {"a": "x", "b": 1}, expect_error="expected an integer")
    save("add", {"a": 2, "b": 2}, check="result == 4")
    assert metadata_cases(notebook) == [
        {"tool": "add", "arguments": {"a": 1, "b": 2}, "expect": 3},
        {"tool": "add", "arguments": {"a": "x", "b": 1}, "expect_error": "expected an integer"},
        {"tool": "add", "arguments": {"a": 2, "b": 2}, "check": "result == 4"},
    ]
    nbformat.validate(nbformat.read(notebook, as_version=4))  # still a valid notebook
    report = testing.run_tests("add")
    assert report.ok and report.report.counts["passed"] == 3


def test_running_tests_from_a_cell_shows_the_difference(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, ADD.format(op="+"))
    testing.save_test("add", {"a": 1, "b": 2}, expect=4, case_name="wrong on purpose")
    shown = run_ok(shell, "%tool test add")
    assert not shown.ok
    shown_html = shown._repr_html_()
    assert "$: expected 4, got 3" in shown_html and "1 failed" in shown_html
    every = run_ok(shell, "%tool test")
    assert not every.ok and "1 failed" in every.report.summary()
    run_ok(
        shell, "from nexus_jupyter import tool\n@tool\ndef other() -> int:\n    'x'\n    return 1"
    )
    untested = shell.run_cell("%tool test other")
    assert "'other' has no test cases yet" in str(untested.error_in_exec)


@pytest.mark.timing  # a latency target: runs alone, after the parallel phase
def test_rerunning_a_cell_that_breaks_the_tool_fails_its_tests_within_a_second(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, ADD.format(op="+"))
    testing.save_test("add", {"a": 1, "b": 2}, expect=3)
    reg = api.current_registry()
    wait_for_test_state(reg, "add", "passed", time.monotonic() + 10)
    ran = time.monotonic()
    run_ok(shell, ADD.format(op="-"))
    wait_for_test_state(reg, "add", "failed", ran + 1.0)
    status = reg.test_status("add")
    assert status.broke is not None and status.broke.message == "$: expected 3, got -1"
    info = run_ok(shell, "%tool info add")
    text = repr(info)
    assert "tests: 1 failed" in text and "broke by the last change" in text
    assert "broke by the last change" in info._repr_html_()
    ran = time.monotonic()
    run_ok(shell, ADD.format(op="+"))
    wait_for_test_state(reg, "add", "passed", ran + 1.0)


def test_export_carries_the_cases_beside_the_file(
    shell: InteractiveShell, registry: Registry, notebook: Path, tmp_path: Path
) -> None:
    run_ok(shell, ADD.format(op="+"))
    testing.save_test("add", {"a": 1, "b": 2}, expect=3)
    testing.save_test("add", {"a": 1}, expect_error="missing")
    tools = tmp_path / "tools"
    result = export_tool("add", registry=api.current_registry(), tools_dir=tools)
    assert result.cases == 2 and "2 test case(s) to `add.tests.yaml`" in result._repr_markdown_()
    cases = read_case_file(tools / "add.tests.yaml")
    assert [(c.arguments, c.expectation.kind) for c in cases] == [
        ({"a": 1, "b": 2}, "equals"),
        ({"a": 1}, "error"),
    ]
    reg = api.current_registry()
    assert reg.entry("add").spec.source_kind == "directory"
    assert len(reg.tests.cases("add")) == 2  # the file's cases now
    assert reg.tests.run(["add"]).ok


def test_the_forms_save_as_test_button(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, ADD.format(op="+"))
    form = api.try_tool("add")
    form.fields.fields["a"].set(20)
    form.fields.fields["b"].set(22)
    form.run()
    assert form.result.wait(10)
    assert (form.saver.kind.value, form.saver.value.value) == ("equals", "42")
    form.saver.save_button.click()
    assert "Saved a test of 'add' (expect 42)" in html.unescape(form.saver.status.value)
    assert metadata_cases(notebook)[-1] == {
        "tool": "add",
        "arguments": {"a": 20, "b": 22},
        "expect": 42,
    }
    form.fields.fields["a"].set(None)
    form.run()  # invalid: the error is offered as the expectation
    assert form.saver.kind.value == "error" and "a" in form.saver.value.value
    form.saver.kind.value = "check"
    form.saver.value.value = ""
    form.saver.save_button.click()
    assert "Say what to check" in form.saver.status.value
    form.close()


def test_the_catalog_shows_a_test_badge_that_follows_the_status(
    shell: InteractiveShell, registry: Registry, notebook: Path
) -> None:
    run_ok(shell, ADD.format(op="+"))
    testing.save_test("add", {"a": 1, "b": 2}, expect=3)
    reg = api.current_registry()
    wait_for_test_state(reg, "add", "passed", time.monotonic() + 10)
    catalog = api.browse()

    def badge_shows(text: str) -> bool:
        # A new test state is visible a moment before its event is queued: wait for the
        # event and the catalog's redraw, not just for the state.
        reg.wait_for_events()
        row = next(r for r in catalog.rows.children if r.children[0].description == "add")
        return text in row.children[1].value

    wait_until(reg, lambda: badge_shows("tests 1/1"), timeout=10)
    run_ok(shell, ADD.format(op="*"))
    wait_for_test_state(reg, "add", "failed", time.monotonic() + 5)
    wait_until(reg, lambda: badge_shows("tests failed"), timeout=10)
    catalog.select("add")
    assert "$: expected 3, got 2" in catalog.details.value
    catalog.close()


def test_stats_and_eval_magics(
    shell: InteractiveShell, registry: Registry, notebook: Path, tmp_path: Path
) -> None:
    run_ok(shell, ADD.format(op="+"))
    run_ok(shell, "%tool call add a=1 b=2")
    run_ok(shell, "%tool call add a=5 b=2")
    stats = run_ok(shell, "%tool stats add")
    assert stats.stats["add"].calls == 2
    assert "p95" in stats._repr_html_()
    queries = tmp_path / "q.yaml"
    queries.write_text(
        "- {query: add two integers, relevant: [add]}\n- {query: multiply matrices, relevant: [matmul]}\n"
    )
    shown = run_ok(shell, f"%tool eval {queries}")
    assert shown.metrics["recall@1"] == 0.5
    assert "multiply matrices" in shown._repr_html_()  # the miss is listed
    bad = shell.run_cell("%tool eval")
    assert "Give the queries file" in str(bad.error_in_exec)


def test_bad_save_lines_are_one_sentence(shell: InteractiveShell, registry: Registry) -> None:
    run_ok(shell, ADD.format(op="+"))
    for line, words in [
        ("%tool test save", "Give the tool and its arguments"),
        ('%tool test save add {"a": 1} --expekt 3', "Did you mean '--expect'?"),
        ('%tool test save add {"a": 1} --expect 3 --check "result"', "Give one expectation"),
        ('%tool test save add {"a": 1} --check "__import__(1)"', "names starting with '_'"),
        ("%tool test save nope {}", "No tool named 'nope'"),
    ]:
        result = shell.run_cell(line)
        assert words in str(result.error_in_exec), (line, result.error_in_exec)
