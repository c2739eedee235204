"""``nexus-tools test | eval | stats | check`` as real subprocesses: exit codes, JUnit XML a CI
can read, eval figures that match the search benchmark, stats from the audit log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

EXE = str(Path(sys.executable).parent / "nexus-tools")
TOOLRET = Path(os.environ.get("TOOLRET_DIR", "/work/shared/data/toolret"))
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

ADD = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "tools" / "dynamic").mkdir(parents=True)
    (root / "nex.yaml").write_text("search: {mode: keyword}\n")
    (root / "tools" / "dynamic" / "add.py").write_text(ADD)
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("NEXUS_CRED_")}
    out["NEXUS_HOME"] = str(tmp_path / "home")
    return out


def run(env: dict[str, str], ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EXE, "--root", str(ws), "--wait", "5", *args],
        env=env,
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write_cases(ws: Path, text: str) -> Path:
    path = ws / "tools" / "dynamic" / "add.tests.yaml"
    path.write_text(text)
    return path


def test_passing_cases_exit_0_and_a_failure_exits_1_with_a_junit_report(
    env: dict[str, str], ws: Path
) -> None:
    write_cases(
        ws,
        "- tool: add\n  arguments: {a: 1, b: 2}\n  expect: 3\n"
        "- tool: add\n  arguments: {a: x}\n  expect_error: expected an integer\n",
    )
    ok = run(env, ws, "test")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "2 passed" in ok.stdout

    write_cases(
        ws,
        "- tool: add\n  arguments: {a: 1, b: 2}\n  expect: 3\n"
        "- tool: add\n  name: wrong on purpose\n  arguments: {a: 1, b: 2}\n  expect: 4\n",
    )
    failed = run(env, ws, "test", "add", "--junit", "reports/junit.xml")
    assert failed.returncode == 1
    assert (
        "FAILED  add.tests.yaml case 2 (line 4) 'wrong on purpose': add(a=1, b=2)" in failed.stdout
    )
    assert "$: expected 4, got 3" in failed.stdout

    tree = ET.parse(ws / "reports" / "junit.xml")  # well-formed XML
    suites = tree.getroot()
    assert suites.tag == "testsuites"
    assert (suites.get("tests"), suites.get("failures"), suites.get("errors")) == ("2", "1", "0")
    suite = suites.find("testsuite")
    assert suite is not None and suite.get("name") == "tools/dynamic/add.tests.yaml"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "case 1 (line 1): add(a=1, b=2)",
        "case 2 (line 4) 'wrong on purpose': add(a=1, b=2)",
    ]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message") == "$: expected 4, got 3"
    assert cases[1].get("file") == "tools/dynamic/add.tests.yaml" and cases[1].get("line") == "4"
    assert all(float(c.get("time")) >= 0 for c in cases)

    as_json = json.loads(run(env, ws, "test", "--json").stdout)
    assert as_json["ok"] is False and as_json["counts"]["failed"] == 1


def test_a_malformed_case_is_an_error_and_the_files_other_cases_still_run(
    env: dict[str, str], ws: Path
) -> None:
    write_cases(
        ws,
        "- tool: add\n  arguments: {a: 1, b: 2}\n  expect: 3\n"
        "- tool: add\n  arguments: {a: 1}\n  expcet: 4\n"
        "- tool: add\n  arguments: {a: 2, b: 2}\n  expect: 4\n",
    )
    proc = run(env, ws, "test", "--junit", "junit.xml")
    assert proc.returncode == 1
    assert (
        "ERROR   add.tests.yaml case 2 (line 4): add(a=1)" in proc.stdout
        and "\n        unknown key 'expcet'. Did you mean 'expect'?" in proc.stdout
    ), proc.stdout
    assert proc.stdout.count("ok      add.tests.yaml") == 2
    assert "1 error, 2 passed in" in proc.stdout
    suite = ET.parse(ws / "junit.xml").getroot()
    assert (suite.get("tests"), suite.get("errors")) == ("3", "1")
    error = suite.find(".//testcase[@line='4']/error")
    assert error is not None and error.get("message", "").startswith("unknown key 'expcet'")


def test_a_case_whose_tool_does_not_exist_is_an_error_that_names_it(
    env: dict[str, str], ws: Path
) -> None:
    write_cases(
        ws,
        "- tool: add\n  arguments: {a: 1, b: 2}\n  expect: 3\n"
        "- tool: nosuchtool\n  arguments: {r: 1}\n  expect: 3\n"
        "- tool: ad\n  arguments: {a: 1, b: 2}\n"
        "- arguments: {a: 1, b: 2}\n  expect: 3\n",
    )
    proc = run(env, ws, "test")
    assert proc.returncode == 1
    out = proc.stdout
    assert "ERROR   add.tests.yaml case 2 (line 4): nosuchtool(r=1)" in out
    assert (
        "No tool named 'nosuchtool'. Correct the case's `tool:`, or delete the case if the "
        "tool is gone." in out
    )
    assert "ERROR   add.tests.yaml case 3 (line 7): ad(a=1, b=2)" in out
    assert "No tool named 'ad'. Did you mean 'add'" in out
    assert "ERROR   add.tests.yaml case 4 (line 9)  (" in out
    assert "`tool:` must name the tool to call; add `tool: NAME` to the case." in out
    assert "3 errors, 1 passed in" in out
    report = json.loads(run(env, ws, "--json", "test").stdout)
    assert report["counts"] == {"failed": 0, "error": 3, "passed": 1, "skipped": 0}


def test_an_unreadable_case_file_is_reported_once_whatever_tools_it_covers(
    env: dict[str, str], ws: Path
) -> None:
    (ws / "tools" / "dynamic" / "add.py").write_text(
        ADD + "\n\n@tool\ndef sub(a: int, b: int) -> int:\n    return a - b\n"
    )
    write_cases(ws, "- tool: add\n  arguments: {a: 1, b: 2}\n- tool: sub\n  arguments: {a: [\n")
    everything = run(env, ws, "test", "--junit", "junit.xml")
    assert everything.returncode == 1
    assert everything.stdout.count("not valid YAML") == 1, everything.stdout
    assert "/tools/dynamic/add.tests.yaml: not valid YAML (line 5)" in everything.stdout
    assert "1 unreadable case file(s)" in everything.stdout
    suites = ET.parse(ws / "junit.xml").getroot()
    assert (suites.get("tests"), suites.get("errors")) == ("1", "1")
    assert suites.find("testsuite").get("name") == "tools/dynamic/add.tests.yaml"
    named = run(env, ws, "test", "add", "sub")
    assert named.returncode == 1
    assert named.stdout.count("not valid YAML") == 1, named.stdout
    assert "ERROR   add, sub: add.tests.yaml: not valid YAML (line 5)" in named.stdout
    assert "1 unreadable case file(s)" in named.stdout
    assert "no test cases for" not in named.stderr


def test_naming_a_tool_without_cases_or_an_unknown_tool(env: dict[str, str], ws: Path) -> None:
    untested = run(env, ws, "test", "add")
    assert untested.returncode == 1
    assert "no test cases for add" in untested.stderr
    unknown = run(env, ws, "test", "ad")
    assert unknown.returncode == 2
    assert "No tool named 'ad'. Did you mean 'add'" in unknown.stderr


def test_check_shows_each_tools_test_state_and_fails_on_a_broken_one(
    env: dict[str, str], ws: Path
) -> None:
    write_cases(ws, "- tool: add\n  arguments: {a: 1, b: 2}\n  expect: 5\n")
    proc = run(env, ws, "check")
    assert proc.returncode == 1
    row = next(line for line in proc.stdout.splitlines() if line.startswith("add "))
    assert "failed" in row
    assert "add: tests 1 failed; first: add.tests.yaml case 1 (line 1)" in proc.stdout
    assert run(env, ws, "check", "--no-tests").returncode == 0
    report = json.loads(run(env, ws, "--json", "check").stdout)
    assert report["tests"]["add"]["state"] == "failed"


def test_check_says_web_search_is_unavailable_until_a_provider_and_its_key_are_set(
    env: dict[str, str], ws: Path
) -> None:
    def web_search_row(environment: dict[str, str]) -> str:
        proc = run(environment, ws, "check", "--no-tests")
        return next(line for line in proc.stdout.splitlines() if line.startswith("web_search "))

    row = web_search_row(env)
    assert " unavailable " in row and "web_search has no search provider configured" in row
    assert "{search: {provider: brave}}" in row and "NEXUS_CRED_BRAVE_API_KEY" in row
    assert "web_search" not in run(env, ws, "list", "--available").stdout
    (ws / "nex.yaml").write_text(
        "search: {mode: keyword}\ntoolsets: {web: {options: {search: {provider: tavily}}}}\n"
    )
    row = web_search_row(env)
    assert " unavailable " in row and "missing credential 'tavily/api_key'" in row
    assert "NEXUS_CRED_TAVILY_API_KEY" in row
    row = web_search_row({**env, "NEXUS_CRED_TAVILY_API_KEY": "tvly-key"})
    assert row.split()[2] == "ok" and row.rstrip().endswith("available")


def test_stats_come_from_the_audit_log(env: dict[str, str], ws: Path) -> None:
    for args in (
        ["call", "add", "a=1", "b=2"],
        ["call", "add", "a=2", "b=2"],
        ["call", "add", "a=x"],
    ):
        run(env, ws, *args)
    proc = run(env, ws, "--json", "stats")
    assert proc.returncode == 0, proc.stderr
    stats = json.loads(proc.stdout)["add"]
    assert (stats["calls"], stats["errors"], stats["refused"]) == (2, 0, 1)
    assert stats["p50_ms"] is not None and stats["p95_ms"] >= stats["p50_ms"]
    text = run(env, ws, "stats", "add", "--since", "1h")
    assert "add" in text.stdout and "p95" in text.stdout
    bad = run(env, ws, "stats", "--since", "yesterday")
    assert bad.returncode == 2 and "--since takes 30m, 12h, 7d" in bad.stderr


def _benchmark_figures(mode: str) -> dict[str, float]:
    """What benchmarks/search_quality.py computes for the toolret dev queries."""
    saved = list(sys.path)  # the benchmark puts benchmarks/ on the path when imported: undo it,
    sys.path.insert(0, str(BENCHMARKS))  # or its cluster.py shadows tests/cluster later
    try:
        import search_quality
    finally:
        sys.path[:] = saved
    specs = search_quality.load_catalog(TOOLRET / "catalog.json")
    queries = json.loads((TOOLRET / "queries-dev.json").read_text())
    index = search_quality.SearchIndex(mode)
    index.update(specs)
    try:
        return search_quality.evaluate(
            lambda q: [h.name for h in index.search(q, limit=10)], queries
        )
    finally:
        index.close()


@pytest.mark.skipif(not (TOOLRET / "catalog.json").exists(), reason="toolret data not here")
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_eval_of_the_toolret_catalog_reproduces_the_benchmark(
    env: dict[str, str], ws: Path, mode: str
) -> None:
    if mode == "hybrid":
        from nexus_jupyter.core.search.model_files import semantic_missing

        if semantic_missing(None):
            pytest.skip(f"hybrid search cannot run here: {semantic_missing(None)}")
    proc = run(
        env,
        ws,
        "--json",
        "eval",
        str(TOOLRET / "queries-dev.json"),
        "--catalog",
        str(TOOLRET / "catalog.json"),
        "--mode",
        mode,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert (report["mode"], report["tools"], report["queries"]) == (mode, 395, 100)
    expected = _benchmark_figures(mode)
    for key, value in expected.items():
        assert report["metrics"][key] == pytest.approx(round(value, 4), abs=1e-4), key
    if mode == "hybrid":
        return  # the text report is the keyword run's (its layout does not depend on the mode)
    text = run(
        env,
        ws,
        "eval",
        str(TOOLRET / "queries-dev.json"),
        "--catalog",
        str(TOOLRET / "catalog.json"),
        "--mode",
        mode,
    ).stdout
    assert f"recall@1               {expected['recall@1']:.3f}" in text
    assert "Misses (" in text


def test_eval_of_the_configured_registry_and_bad_query_files(env: dict[str, str], ws: Path) -> None:
    queries = ws / "queries.yaml"
    queries.write_text(
        "- {query: add two integers, relevant: [add]}\n"
        "- {query: read the contents of a file, relevant: [read]}\n"
        "- {query: book a table at an Acmeboard restaurant, relevant: []}\n"
    )
    proc = run(env, ws, "--json", "eval", str(queries))
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["metrics"]["recall@1"] == 1.0
    assert report["tools"] > 10 and report["mode"] == "keyword"
    queries.write_text("- {query: add two integers, relevant: add}\n")
    bad = run(env, ws, "eval", str(queries))
    assert bad.returncode == 1
    assert "queries.yaml: query 1: `relevant` must be a list of tool names" in bad.stderr
