"""Test cases beside tool files, and live regression after every hot reload (real watcher)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from waiting import wait_for_test_state  # tests/ is on sys.path

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import TestCaseError
from nexus_jupyter.core.tooltests.cases import Expectation, TestCase
from nexus_jupyter.sources.tool_tests import append_case, read_case_file

ADD = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a {op} b
'''
CASES = """# my cases
- tool: add
  arguments: {a: 1, b: 2}
  expect: 3
- tool: add   # a bad argument
  arguments: {a: "x", b: 1}
  expect_error: "expected an integer"
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "add.py").write_text(ADD.format(op="+"))
    (tools / "add.tests.yaml").write_text(CASES)
    return tools


def test_a_case_file_reads_with_lines_and_refuses_a_bad_key(tmp_path: Path) -> None:
    path = tmp_path / "add.tests.yaml"
    path.write_text(CASES)
    cases = read_case_file(path)
    assert [c.where for c in cases] == [
        "add.tests.yaml case 1 (line 2)",
        "add.tests.yaml case 2 (line 5)",
    ]
    path.write_text(CASES + "- tool: add\n  arguments: {a: 1}\n  expcet: 2\n")
    with pytest.raises(TestCaseError) as caught:
        read_case_file(path)
    assert str(caught.value).startswith("add.tests.yaml case 3 (line 8): unknown key 'expcet'")
    *good, bad = read_case_file(path, strict=False)  # the stores read on past a bad case
    assert [c.expectation.kind for c in good] == ["equals", "error"]
    assert (bad.tool, bad.where, bad.line) == ("add", "add.tests.yaml case 3 (line 8)", 8)
    assert bad.problem.startswith("unknown key 'expcet'. Did you mean 'expect'?")
    assert str(bad.error) == str(caught.value)
    with pytest.raises(TestCaseError, match="case 3 \\(line 8\\): unknown key 'expcet'"):
        append_case(path, TestCase("add", {"a": 1, "b": 1}, Expectation("equals", 2)))
    path.write_text("tool: add\n")
    with pytest.raises(TestCaseError, match="a case file is a YAML list"):
        read_case_file(path)
    path.write_text("- tool: [\n")
    with pytest.raises(TestCaseError, match=r"not valid YAML \(line"):
        read_case_file(path)


def test_appending_keeps_what_a_person_wrote(tmp_path: Path) -> None:
    path = tmp_path / "add.tests.yaml"
    path.write_text(CASES)
    append_case(path, TestCase("add", {"a": 2, "b": 2}, Expectation("check", "result == 4")))
    text = path.read_text()
    assert text.startswith(CASES)  # comments, order and quoting untouched
    assert "- tool: add\n  arguments: {a: 2, b: 2}\n  check: result == 4\n" in text
    assert [c.expectation.kind for c in read_case_file(path)] == ["equals", "error", "check"]
    fresh = tmp_path / "new.tests.yaml"
    append_case(fresh, TestCase("add", {"a": 1, "b": 2}, Expectation("subset", {"x": [1, 2]})))
    assert fresh.read_text().startswith("# Test cases of the tools in new.py")
    assert read_case_file(fresh)[0].expectation.value == {"x": [1, 2]}


def test_saving_a_case_for_a_file_tool_writes_beside_the_file(folder: Path) -> None:
    with Registry(search="keyword") as reg:
        reg.watch(folder)
        where = reg.tests.save("add", TestCase("add", {"a": 5, "b": 5}, Expectation("equals", 10)))
        assert where == str(folder / "add.tests.yaml")
        assert len(reg.tests.cases("add")) == 3
        report = reg.tests.run(["add"])
        assert report.ok and report.counts["passed"] == 3
        assert reg.test_status("add").state == "passed"


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_a_new_case_file_gets_the_mode_of_a_tool_file(folder: Path, umask: int) -> None:
    """A case file saved for the first time is an ordinary file (umask applied), as its
    tool file is, not mkstemp's private 0600; an existing one keeps its own mode."""
    (folder / "add.tests.yaml").unlink()
    case = TestCase("add", {"a": 5, "b": 5}, Expectation("equals", 10))
    previous = os.umask(umask)
    try:
        made = append_case(folder / "add.tests.yaml", case, title="add.py")
    finally:
        os.umask(previous)
    assert made.stat().st_mode & 0o777 == 0o666 & ~umask
    made.chmod(0o640)
    append_case(made, case)
    assert made.stat().st_mode & 0o777 == 0o640


def test_an_unreadable_case_file_is_the_tools_test_error(folder: Path) -> None:
    (folder / "add.tests.yaml").write_text("- tool: add\n  arguments: {a: [\n")
    with Registry(search="keyword") as reg:
        reg.watch(folder)
        status = reg.test_status("add")
        assert status.state == "error"
        assert "add.tests.yaml: not valid YAML (line 3)" in (status.problem or "")
        report = reg.tests.run()
        assert not report.ok and list(report.problems) == ["add"]


def test_a_malformed_case_is_an_error_and_the_files_other_cases_still_run(
    folder: Path,
) -> None:
    (folder / "add.tests.yaml").write_text(CASES + "- tool: add\n  expect: 3\n  oops: 1\n")
    lenient = read_case_file(folder / "add.tests.yaml", strict=False)
    assert [bool(c.problem) for c in lenient] == [False, False, True]
    with Registry(search="keyword") as reg:
        reg.watch(folder)
        report = reg.tests.run()
        assert report.counts == {"failed": 0, "error": 1, "passed": 2, "skipped": 0}
        assert report.problems == {}
        bad = next(o for o in report.outcomes if o.state == "error")
        assert bad.case.where == "add.tests.yaml case 3 (line 8)"
        assert bad.message.startswith("unknown key 'oops'. A case has: tool, arguments")
        status = reg.test_status("add")
        assert status.state == "error" and status.counts["passed"] == 2
        assert "first: add.tests.yaml case 3 (line 8): add(): unknown key 'oops'" in (
            status.summary()
        )


@pytest.mark.timing  # a latency target: runs alone, after the parallel phase
def test_a_save_that_breaks_a_tool_fails_its_tests_within_a_second_and_a_fix_passes(
    folder: Path,
) -> None:
    with Registry(search="keyword") as reg:
        source = reg.watch(folder)
        assert source.wait_ready(10)
        reg.tests.watch()
        wait_for_test_state(reg, "add", {"passed"}, time.monotonic() + 15)

        saved = time.monotonic()
        (folder / "add.py").write_text(ADD.format(op="-"))
        assert wait_for_test_state(reg, "add", {"failed"}, saved + 1.0) == "failed"
        print(f"\nbroken save -> failed status in {(time.monotonic() - saved) * 1000:.0f} ms")
        status = reg.test_status("add")
        assert status.broke is not None
        assert status.broke.case.where == "add.tests.yaml case 1 (line 2)"
        assert status.broke.message == "$: expected 3, got -1"
        assert status.version == reg.get("add").spec.version

        saved = time.monotonic()
        (folder / "add.py").write_text(ADD.format(op="+"))
        assert wait_for_test_state(reg, "add", {"passed"}, saved + 1.0) == "passed"
        print(f"fix -> passed status in {(time.monotonic() - saved) * 1000:.0f} ms")
        assert reg.test_status("add").broke is None


def test_a_hand_edited_case_file_runs_again(folder: Path) -> None:
    with Registry(search="keyword") as reg:
        source = reg.watch(folder)
        assert source.wait_ready(10)
        reg.tests.watch()
        wait_for_test_state(reg, "add", {"passed"}, time.monotonic() + 15)
        (folder / "add.tests.yaml").write_text(CASES.replace("expect: 3", "expect: 30"))
        wait_for_test_state(reg, "add", {"failed"}, time.monotonic() + 10)
        assert reg.test_status("add").first_problem.message == "$: expected 30, got 3"


def test_status_changes_reach_subscribers_as_tests_events(folder: Path) -> None:
    seen: list[tuple[str, ...]] = []
    with Registry(search="keyword") as reg:
        reg.watch(folder)
        reg.subscribe(lambda change: seen.append(change.tests) if change.tests else None)
        reg.tests.watch()
        assert reg.tests.wait_idle(15)
        assert reg.wait_for_events()
        assert ("add",) in seen
        assert reg.test_status("add").state == "passed"


NAP = '''import time
from pathlib import Path

from nexus_jupyter import tool


@tool
def nap(seconds: float) -> str:
    """Wait until the test writes let_go beside this file (at most ``seconds``)."""
    end = time.monotonic() + seconds
    while not Path(__file__).with_name("let_go").exists() and time.monotonic() < end:
        time.sleep(0.02)
    return "rested"
'''


def test_waiting_for_one_tool_does_not_wait_for_another(folder: Path) -> None:
    (folder / "nap.py").write_text(NAP)
    (folder / "nap.tests.yaml").write_text(
        "- tool: nap\n  arguments: {seconds: 30}\n  expect: rested\n"
    )
    with Registry(search="keyword") as reg:
        source = reg.watch(folder)
        assert source.wait_ready(10)
        reg.tests.watch()
        wait_for_test_state(reg, "nap", {"running"}, time.monotonic() + 15)
        assert reg.tests.wait_idle(15, "add")  # add's run ends while nap's goes on
        assert reg.test_status("add").state == "passed"
        assert not reg.tests.wait_idle(0.2, "nap")
        assert reg.tests.wait_settled("nap", 0.2).state == "running"  # as it stands then
        (folder / "let_go").write_text("")
        assert reg.tests.wait_settled("nap", 15).state == "passed"
        assert reg.tests.wait_idle(0, "nap")
