"""Tool tests in the core: the case model, comparisons, predicates, the runner and statuses."""

from __future__ import annotations

import pytest

from nexus_jupyter import Registry, tool
from nexus_jupyter.core.errors import TestCaseError
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.core.tooltests.cases import Expectation, TestCase
from nexus_jupyter.core.tooltests.compare import first_difference, subset_difference
from nexus_jupyter.core.tooltests.outcomes import CaseOutcome, TestReport, TestStatus
from nexus_jupyter.core.tooltests.predicate import compile_check, evaluate_check
from nexus_jupyter.core.tooltests.runner import run_case, run_case_sync


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def forecast(city: str) -> dict:
    """A fixed forecast."""
    return {"city": city, "units": "celsius", "days": [{"t": 21}, {"t": 19}]}


@tool(permission="danger_full_access")
def wipe(path: str) -> str:
    """Pretend to delete a path."""
    return f"wiped {path}"


@tool(requires_credentials=["weather"])
def keyed(city: str) -> str:
    """Needs a key."""
    return city


@pytest.fixture
def reg() -> Registry:
    registry = Registry(search="keyword")
    registry.add_many([add, forecast, wipe])
    yield registry
    registry.close()


# -- the case model ---------------------------------------------------------------------------


def test_a_case_reads_and_writes_the_yaml_shape() -> None:
    case = TestCase.from_dict(
        {"tool": "add", "arguments": {"a": 1, "b": 2}, "expect": 3, "name": "small"},
        where="add.tests.yaml case 1",
    )
    assert case.expectation == Expectation("equals", 3)
    assert case.to_dict() == {
        "tool": "add",
        "name": "small",
        "arguments": {"a": 1, "b": 2},
        "expect": 3,
    }
    assert "add.tests.yaml case 1 'small': add(a=1, b=2)" == case.label
    short = TestCase.from_dict({"tool": "f", "subset": {"x": 1}})
    assert short.expectation.kind == "subset"
    assert short.to_dict()["expect_subset"] == {"x": 1}  # written under its long name
    assert TestCase.from_dict({"tool": "f"}).expectation.kind == "succeeds"


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"tool": "add", "expectt": 3}, ["unknown key 'expectt'", "Did you mean 'expect'"]),
        ({"tool": "add", "expect": 3, "check": "result"}, ["one expectation", "expect, check"]),
        ({"arguments": {}}, ["`tool:` must name the tool"]),
        ({"tool": "add", "arguments": [1, 2]}, ["`arguments:` must be a mapping"]),
        ({"tool": "add", "expect_error": ""}, ["the text the error message must contain"]),
        ({"tool": "add", "expect_subset": 3}, ["must be a mapping (or a list)"]),
        ({"tool": "add", "timeout": -1}, ["positive number of seconds"]),
        ("add", ["a test case is a mapping"]),
    ],
)
def test_a_malformed_case_says_where_and_what(data: object, words: list[str]) -> None:
    with pytest.raises(TestCaseError) as caught:
        TestCase.from_dict(data, where="add.tests.yaml case 3 (line 9)")
    message = str(caught.value)
    assert message.startswith("add.tests.yaml case 3 (line 9): ")
    for word in words:
        assert word in message


# -- comparisons --------------------------------------------------------------------------------


def test_equality_is_json_equality_and_names_the_first_difference() -> None:
    assert first_difference(3, 3.0) is None
    assert first_difference(True, 1) == "$: expected true, got 1"
    assert first_difference("3", 3) == '$: expected "3", got 3'
    assert (
        first_difference({"a": [1, {"b": 2}]}, {"a": [1, {"b": 5}]})
        == "$.a[1].b: expected 2, got 5"
    )
    assert first_difference({"a": 1}, {"a": 1, "z": 0}) == "$.z: not expected (got 0)"
    assert first_difference([1, 2], [1]) == "$: expected 2 item(s), got 1: [1]"
    assert first_difference({"odd key": 1}, {}) == '$["odd key"]: missing (expected 1)'


def test_a_subset_ignores_extra_keys_but_not_missing_ones() -> None:
    value = {"city": "Paris", "units": "celsius", "days": [{"t": 21, "rain": 0}]}
    assert subset_difference({"units": "celsius", "days": [{"t": 21}]}, value) is None
    assert (
        subset_difference({"units": "kelvin"}, value) == '$.units: expected "kelvin", got "celsius"'
    )
    assert subset_difference({"wind": 3}, value) == "$.wind: missing (expected 3)"
    assert subset_difference({"days": [{"t": 21}, {"t": 1}]}, value) is not None


# -- predicates ---------------------------------------------------------------------------------


def test_a_check_sees_the_result_and_a_few_builtins() -> None:
    names = {"result": {"days": [1, 2, 3]}, "arguments": {"n": 3}}
    assert evaluate_check("len(result['days']) == arguments['n']", names) is True
    assert evaluate_check("all(d > 0 for d in result['days'])", names) is True
    assert evaluate_check("math.isclose(sum(result['days']) / 3, 2)", names) is True
    assert evaluate_check("re.search('ay', arguments.get('day', 'Monday')) is not None", names)


def test_math_and_re_in_a_check_do_not_lead_to_other_modules() -> None:
    # a module's attributes lead on: re.enum.sys.modules['os'] reached os
    for source in ("re.enum.sys.modules['os'].getpid() > 0", "math.sys is None"):
        with pytest.raises(AttributeError):
            evaluate_check(source, {})


def test_the_accidents_that_run_for_ever_are_bounded_in_a_check() -> None:
    """A catastrophic pattern answers at once (RE2, linear time); a huge range is refused
    with the limit; what RE2 cannot run, and flags, say how to write the check instead."""
    import time

    text = {"text": "a" * 40 + "!"}
    start = time.perf_counter()
    assert evaluate_check("re.search(r'(a+)+$', text) is None", text) is True
    assert time.perf_counter() - start < 1.0  # Python's re takes hours on this
    assert evaluate_check("re.findall(r'(?i)A', text) == ['a'] * 40", text) is True
    assert evaluate_check("re.fullmatch('a+!', text).group() == text", text) is True
    assert evaluate_check("sum(range(10)) == 45", {}) is True
    for huge in ("10**12", "10**20", "0, 10**9, 2"):
        with pytest.raises(TestCaseError, match="counts more than 10,000,000 numbers, the most"):
            evaluate_check(f"max(range({huge})) > 0", {})
    with pytest.raises(TestCaseError, match="lookarounds, backreferences"):
        evaluate_check(r"re.search(r'(a)\1', text)", text)
    with pytest.raises(TestCaseError, match="is not a regular expression: missing \\)"):
        evaluate_check("re.search('(a', text)", text)  # Python's reason, not RE2's
    with pytest.raises(TypeError, match="takes the text as a string, got dict"):
        evaluate_check("re.search('a', result)", {"result": {"a": 1}})
    # Python's end-of-text anchor works; an escaped backslash before Z stays literal
    assert evaluate_check(r"re.search(r'a!\Z', text) is not None", text) is True
    assert evaluate_check(r"re.fullmatch(r'c\\Z', 'c\\Z') is not None", {}) is True
    with pytest.raises(TestCaseError, match=r"put them in the pattern, as in '\(\?i\)error'"):
        evaluate_check("re.search('A', text, 2)", text)


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("__import__('os').system('true')", ["'__import__'", "names starting with '_'"]),
        ("().__class__.__bases__", ["'__bases__'", "attributes starting with '_'"]),
        ("open('/etc/passwd').read()", ["unknown name 'open'"]),
        ("import os", ["not one Python expression"]),
        ("result > 0; True", ["not one Python expression"]),
        ("x" * 600, ["keep it under 500"]),
    ],
)
def test_a_check_refuses_what_it_cannot_see(source: str, words: list[str]) -> None:
    with pytest.raises(TestCaseError) as caught:
        compile_check(source, where="f.tests.yaml case 1")
    message = str(caught.value)
    for word in words:
        assert word in message
    assert "A check sees result" in message or "expression" in message or "under" in message


# -- running ------------------------------------------------------------------------------------


def _run(reg: Registry, data: dict) -> tuple[str, str]:
    outcome = run_case_sync(reg, TestCase.from_dict(data, where="t case 1"))
    return outcome.state, outcome.message


def test_each_expectation_passes_and_fails_with_its_difference(reg: Registry) -> None:
    assert _run(reg, {"tool": "add", "arguments": {"a": 1, "b": 2}, "expect": 3}) == ("passed", "")
    assert _run(reg, {"tool": "add", "arguments": {"a": 1, "b": 2}, "expect": 4}) == (
        "failed",
        "$: expected 4, got 3",
    )
    assert (
        _run(
            reg,
            {"tool": "add", "arguments": {"a": "x", "b": 1}, "expect_error": "expected an integer"},
        )[0]
        == "passed"
    )
    state, message = _run(
        reg, {"tool": "add", "arguments": {"a": 1, "b": 1}, "expect_error": "expected an integer"}
    )
    assert state == "failed" and "but it succeeded: 2" in message
    assert (
        _run(
            reg, {"tool": "forecast", "arguments": {"city": "Oslo"}, "subset": {"units": "celsius"}}
        )[0]
        == "passed"
    )
    state, message = _run(
        reg,
        {
            "tool": "forecast",
            "arguments": {"city": "Oslo"},
            "subset": {"days": [{"t": 21}, {"t": 20}]},
        },
    )
    assert (state, message) == ("failed", "$.days[1].t: expected 20, got 19")
    assert (
        _run(
            reg,
            {
                "tool": "forecast",
                "arguments": {"city": "Oslo"},
                "check": "result['days'][0]['t'] > 20",
            },
        )[0]
        == "passed"
    )
    state, message = _run(
        reg,
        {"tool": "forecast", "arguments": {"city": "Oslo"}, "check": "result['days'][0]['t'] > 30"},
    )
    assert state == "failed" and message.startswith(
        "check `result['days'][0]['t'] > 30` is false (result = {"
    )
    state, message = _run(
        reg, {"tool": "forecast", "arguments": {"city": "Oslo"}, "check": "result['wind'] > 3"}
    )
    assert state == "error" and "raised KeyError: 'wind'" in message


def test_an_invalid_call_without_expect_error_fails_with_the_field(reg: Registry) -> None:
    state, message = _run(reg, {"tool": "add", "arguments": {"a": "x", "b": 1}, "expect": 3})
    assert state == "failed"
    assert '$.a: expected an integer (got "x")' in message


def test_cases_needing_approval_or_credentials_are_skipped_with_the_reason(
    reg: Registry, tmp_path
) -> None:
    reg.policy = Policy(grant="danger_full_access")
    state, message = _run(reg, {"tool": "wipe", "arguments": {"path": "/tmp/x"}})
    assert state == "skipped" and "needs approval (danger_full_access)" in message
    approved = run_case_sync(reg, TestCase("wipe", {"path": "/tmp/x"}), approved=True)
    assert approved.state == "passed"

    from nexus_jupyter.core.policy.credentials import CredentialStore

    reg.credentials = CredentialStore(home=tmp_path)
    reg.add(keyed)
    state, message = _run(reg, {"tool": "keyed", "arguments": {"city": "Oslo"}})
    assert state == "skipped" and "missing credential 'weather'" in message


def test_a_case_needing_approval_says_how_to_approve_it_in_each_faces_words(
    reg: Registry,
) -> None:
    from nexus_jupyter.render.tool_tests import outcome_message, report_html, report_text

    reg.policy = Policy(grant="danger_full_access")
    skipped = run_case_sync(reg, TestCase("wipe", {"path": "/tmp/x"}))
    assert skipped.state == "skipped" and skipped.needs_approval
    # the stored reason is shown by every face: it names no face's command
    assert "`" not in skipped.message and "NAME" not in skipped.message
    assert "nexus-tools" not in skipped.message and "%tool" not in skipped.message
    assert CaseOutcome.from_dict(skipped.to_dict()).needs_approval  # as a kernel reports it
    assert outcome_message(skipped) == (
        "needs approval (danger_full_access), which a test run does not give; "
        "run it with %tool test wipe --yes"
    )
    report = TestReport((skipped,))
    assert "run it with nexus-tools test wipe --yes" in report_text(report, face="cli")
    shown = report_html(report)
    assert "run it with <code>%tool test wipe --yes</code>" in shown
    assert "<p style='color:#757575'><b>1 skipped" in shown  # a skip is not a pass: grey
    passed = run_case_sync(reg, TestCase("add", {"a": 1, "b": 2}, Expectation("equals", 3)))
    assert not passed.needs_approval
    assert "<p style='color:#2e7d32'><b>1 passed" in report_html(TestReport((passed,)))


def test_a_missing_tool_is_an_error_with_close_names(reg: Registry) -> None:
    state, message = _run(reg, {"tool": "ad", "arguments": {}})
    assert state == "error" and "Did you mean 'add'" in message


async def test_the_async_runner_calls_through_the_registry(reg: Registry) -> None:
    outcome = await run_case(reg, TestCase("add", {"a": 2, "b": 2}, Expectation("equals", 4)))
    assert outcome.state == "passed"
    assert outcome.version == reg.get("add").spec.version
    assert "add" not in reg.stats()  # a test run is not use: it counts in no statistics
    await reg.call("add", {"a": 1, "b": 1})
    assert reg.stats()["add"].calls == 1


def test_a_slow_call_past_its_timeout_is_an_error_not_a_failure() -> None:
    import time

    @tool
    def slow() -> str:
        """Sleep."""
        time.sleep(2)
        return "done"

    with Registry(search="keyword") as reg:
        reg.add(slow)
        outcome = run_case_sync(
            reg, TestCase.from_dict({"tool": "slow", "timeout": 0.2, "expect": "done"})
        )
    assert outcome.state == "error"
    assert "TimeoutError" in outcome.message


# -- statuses -----------------------------------------------------------------------------------


def test_a_status_says_which_case_broke_after_a_good_run(reg: Registry) -> None:
    good = run_case_sync(
        reg, TestCase("add", {"a": 1, "b": 2}, Expectation("equals", 3), where="c1")
    )
    bad = run_case_sync(
        reg, TestCase("add", {"a": 1, "b": 2}, Expectation("equals", 4), where="c2")
    )
    passed = TestStatus.finished("add", [good], "v1", None)
    assert passed.state == "passed" and passed.broke is None
    failed = TestStatus.finished("add", [good, bad], "v2", passed)
    assert failed.state == "failed"
    assert failed.broke is not None and failed.broke.case.where == "c2"
    assert "first: c2: add(a=1, b=2): $: expected 4, got 3" in failed.summary()
    never_good = TestStatus.finished("add", [bad], "v1", None)
    assert never_good.broke is None


def test_registry_tests_save_run_and_status_without_a_store_say_where_cases_go(
    reg: Registry,
) -> None:
    assert reg.test_status("add").state == "none"
    with pytest.raises(TestCaseError) as caught:
        reg.tests.save("add", TestCase("add", {"a": 1, "b": 2}, Expectation("equals", 3)))
    assert "No place to keep test cases of 'add'" in str(caught.value)


def test_evaluate_takes_queries_or_a_file(tmp_path) -> None:
    import nexus_jupyter

    with Registry(search="keyword") as reg:
        reg.add_many([add, forecast])
        queries = [
            {"query": "add two integers", "relevant": ["add"]},
            {"query": "weather forecast for a city", "relevant": ["forecast"]},
            {"query": "book a flight to Lisbon", "relevant": []},
        ]
        report = nexus_jupyter.evaluate(reg, queries)
        path = tmp_path / "q.yaml"
        path.write_text(
            "- {query: add two integers, relevant: [add]}\n"
            "- {query: weather forecast for a city, relevant: [forecast]}\n"
            "- {query: book a flight to Lisbon, relevant: []}\n"
        )
        assert nexus_jupyter.evaluate(reg, str(path)).metrics == report.metrics
    assert report.metrics["recall@1"] == 1.0
    assert report.misses == [r for r in report.results if r.missed]
    assert report.mode == "keyword" and report.tools == 2


def test_confusable_pairs_are_tools_that_win_each_others_queries() -> None:
    from nexus_jupyter.core.evals.retrieval import evaluate_ranker

    answers = {
        "list the files": ["ls", "glob"],
        "find files by pattern": ["ls", "glob"],  # glob's query, won by ls
        "show folder contents": ["glob"],  # ls's query, won by glob
        "read a file": ["read"],
        "nothing serves this": ["read"],  # unservable, yet a hit
    }
    queries = [
        {"query": "list the files", "relevant": ["ls"]},
        {"query": "find files by pattern", "relevant": ["glob"]},
        {"query": "show folder contents", "relevant": ["ls"]},
        {"query": "read a file", "relevant": ["read"]},
        {"query": "nothing serves this", "relevant": []},
    ]
    report = evaluate_ranker(lambda q: answers[q], queries)
    assert report.confusable_pairs == [("glob", "ls", 1, 1)]
    assert ("glob", "ls", 1) in report.confusions and ("ls", "glob", 1) in report.confusions
    assert report.metrics["recall@1"] == 0.5  # 2 of 4 servable first
    assert report.metrics["recall@5"] == 0.75  # "show folder contents" never finds ls
    assert report.metrics["unservable_no_hits"] == 0.0
    assert [r.query.query for r in report.misses] == ["show folder contents", "nothing serves this"]
