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
        "- tool: add\n  arguments: {a: x}\n  expect_error: valid integer\n",
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


def test_an_unreadable_case_file_fails_the_run_and_says_where(
    env: dict[str, str], ws: Path
) -> None:
    write_cases(ws, "- tool: add\n  expect: 3\n  expcet: 4\n")
    proc = run(env, ws, "test")
    assert proc.returncode == 1
    assert (
        "add.tests.yaml case 1 (line 1): unknown key 'expcet'. Did you mean 'expect'?"
        in proc.stdout
    )


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
