"""The pytest plugin, loaded the way pip installs it (the ``pytest11`` entry point of
pyproject.toml), in a real pytest subprocess on a project with tool files and cases."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

REPO = Path(__file__).resolve().parents[1]

ADD = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(permission="danger_full_access")
def wipe(path: str) -> str:
    """Pretend to delete a path."""
    return "wiped " + path
'''
CASES = """- tool: add
  arguments: {a: 1, b: 2}
  expect: 3
- tool: add
  name: wrong on purpose
  arguments: {a: 1, b: 2}
  expect: 4
- tool: wipe
  arguments: {path: /tmp/x}
"""
OWN_TEST = "def test_the_project_s_own_test():\n    assert 1 + 1 == 2\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "tools" / "dynamic").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "nex.yaml").write_text("search: {mode: keyword}\naudit: false\n")
    # (the asyncio option only quiets pytest-asyncio, which this venv has installed)
    (root / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\nasyncio_default_fixture_loop_scope = function\n"
    )
    (root / "tools" / "dynamic" / "add.py").write_text(ADD)
    (root / "tools" / "dynamic" / "add.tests.yaml").write_text(CASES)
    (root / "tests" / "test_own.py").write_text(OWN_TEST)
    return root


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """A dist-info folder declaring exactly the pytest11 entry points of pyproject.toml, as
    pip writes it, so pytest finds the plugin the way it does once the package is installed."""
    entry_points = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]
    plugins = entry_points["pytest11"]
    site = tmp_path / "site"
    info = site / "nexus_plugin_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nexus-plugin-probe\nVersion: 0\n")
    lines = "".join(f"{name} = {target}\n" for name, target in plugins.items())
    (info / "entry_points.txt").write_text("[pytest11]\n" + lines)
    return site


def pytest_run(project: Path, site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEXUS_CRED_", "PYTEST_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO), env.get("PYTHONPATH", "")])
    env["NEXUS_HOME"] = str(project.parent / "home")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-W", "error", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_without_the_flag_the_plugin_collects_nothing_and_warns_nothing(
    project: Path, installed: Path
) -> None:
    proc = pytest_run(project, installed, "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
    assert "tests.yaml" not in proc.stdout
    plugins = pytest_run(project, installed, "--co", "-q", "--trace-config")
    assert "nexus_jupyter/pytest_plugin.py" in plugins.stdout  # loaded by its entry point


def test_with_the_flag_every_case_is_a_test_item(project: Path, installed: Path) -> None:
    proc = pytest_run(project, installed, "--nexus-tools", "-v", "-rs", "--junitxml=report.xml")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "tests/test_own.py::test_the_project_s_own_test PASSED" in out
    assert "tools/dynamic/add.tests.yaml::case 1 (line 1): add(a=1, b=2) PASSED" in out
    assert (
        "tools/dynamic/add.tests.yaml::case 2 (line 4) 'wrong on purpose': add(a=1, b=2) FAILED"
        in out
    )
    assert "$: expected 4, got 3" in out
    assert "SKIPPED" in out and "needs approval (danger_full_access)" in out
    assert "1 failed, 2 passed, 1 skipped" in out
    report = ET.parse(project / "report.xml").getroot()
    suite = report if report.tag == "testsuite" else report.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")

    approved = pytest_run(project, installed, "--nexus-tools", "--nexus-tools-yes", "-q")
    assert "1 failed, 3 passed" in approved.stdout


def test_a_malformed_case_fails_on_its_own_and_the_others_run(
    project: Path, installed: Path
) -> None:
    (project / "tools" / "dynamic" / "add.tests.yaml").write_text(
        "- tool: add\n  arguments: {a: 1, b: 2}\n  expect: 3\n"
        "- tool: add\n  arguments: {a: 2, b: 2}\n  expcet: 4\n"
        "- tool: add\n  arguments: {a: 2, b: 3}\n  expect: 5\n"
    )
    proc = pytest_run(project, installed, "--nexus-tools", "-v")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr  # a failed test, not a collection error
    assert "add.tests.yaml::case 1 (line 1): add(a=1, b=2) PASSED" in out
    assert "add.tests.yaml::case 2 (line 4): add(a=2, b=2) FAILED" in out
    assert "add.tests.yaml::case 3 (line 7): add(a=2, b=3) PASSED" in out
    assert (
        "invalid case: add.tests.yaml case 2 (line 4): unknown key 'expcet'. "
        "Did you mean 'expect'?" in out
    )
    assert "1 failed, 3 passed" in out and "error" not in out.splitlines()[-1]
    assert "Traceback" not in out


def test_a_case_file_that_is_not_a_list_is_a_collection_error_that_says_so(
    project: Path, installed: Path
) -> None:
    (project / "tools" / "dynamic" / "add.tests.yaml").write_text("tool: add\nexpect: 3\n")
    proc = pytest_run(project, installed, "--nexus-tools", "-q")
    assert proc.returncode == 2, proc.stdout
    assert "add.tests.yaml: a case file is a YAML list" in proc.stdout
    assert "Traceback" not in proc.stdout


def test_more_folders_with_nexus_tools_dir(project: Path, installed: Path, tmp_path: Path) -> None:
    other = tmp_path / "shared-cases"
    other.mkdir()
    (other / "more.tests.yaml").write_text(
        "- tool: add\n  arguments: {a: 2, b: 2}\n  check: result == 4\n"
    )
    proc = pytest_run(
        project, installed, "--nexus-tools", f"--nexus-tools-dir={other}", "-q", "-k", "more"
    )
    assert "1 passed" in proc.stdout, proc.stdout + proc.stderr
    ini = project / "pytest.ini"
    ini.write_text(ini.read_text() + f"nexus_tools_dirs = {other}\n")
    proc = pytest_run(project, installed, "--nexus-tools", "-q", "-k", "more")
    assert "1 passed" in proc.stdout, proc.stdout + proc.stderr
