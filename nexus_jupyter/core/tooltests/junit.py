"""A test run as JUnit XML, the report format CI systems read (GitLab, Jenkins, GitHub
actions that publish test results).

One ``<testsuite>`` per case file (or notebook), one ``<testcase>`` per case with ``classname``
the tool, ``name`` the case, ``file`` and ``line`` where it is written; a failed case has a
``<failure>``, an error an ``<error>``, a skipped case ``<skipped>``, each with the message.
Unreadable case files are suites with one ``<error>``.
"""

from __future__ import annotations

import datetime as _dt
import socket
from collections.abc import Iterable
from pathlib import Path
from xml.etree import ElementTree as ET

from .outcomes import CaseOutcome, TestReport

__all__ = ["junit_xml", "write_junit"]

_ELEMENT = {"failed": "failure", "error": "error", "skipped": "skipped"}


def _relative(path: str) -> str:
    """``path`` relative to the current folder when it is inside it (how CI maps reports
    onto the repository)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return path


def _suite_name(outcome: CaseOutcome) -> str:
    case = outcome.case
    return _relative(case.file) if case.file else case.where.split(" case ")[0] or case.tool


def _case_name(outcome: CaseOutcome) -> str:
    """``case 2 (line 4): add(a=1, b=2)``: unique within its file."""
    case = outcome.case
    label = case.label
    if case.where and " case " in case.where:
        label = "case " + label.split(" case ", 1)[1]
    return label


def _counts(outcomes: Iterable[CaseOutcome]) -> dict[str, str]:
    listed = list(outcomes)
    return {
        "tests": str(len(listed)),
        "failures": str(sum(o.state == "failed" for o in listed)),
        "errors": str(sum(o.state == "error" for o in listed)),
        "skipped": str(sum(o.state == "skipped" for o in listed)),
        "time": f"{sum(o.duration for o in listed):.6f}",
    }


def junit_xml(report: TestReport, *, name: str = "nexus-tools") -> str:
    """The report as a JUnit XML document (UTF-8 text with its declaration)."""
    root = ET.Element("testsuites", name=name)
    suites: dict[str, list[CaseOutcome]] = {}
    for outcome in report.outcomes:
        suites.setdefault(_suite_name(outcome), []).append(outcome)
    stamp = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat()
    host = socket.gethostname()
    for suite_name, outcomes in suites.items():
        head = {"name": suite_name, "timestamp": stamp, "hostname": host, **_counts(outcomes)}
        suite = ET.SubElement(root, "testsuite", head)
        for outcome in outcomes:
            case = outcome.case
            attributes = {
                "classname": case.tool or suite_name,  # a malformed case may name no tool
                "name": _case_name(outcome),
                "time": f"{outcome.duration:.6f}",
            }
            if case.file:
                attributes["file"] = _relative(case.file)
            if case.line:
                attributes["line"] = str(case.line)
            element = ET.SubElement(suite, "testcase", attributes)
            if outcome.state == "passed":
                continue
            detail = ET.SubElement(
                element, _ELEMENT[outcome.state], message=outcome.message[:1000], type=outcome.state
            )
            detail.text = outcome.describe()
    for where, problem in report.problems.items():
        where = _relative(where) if Path(where).is_absolute() else where
        head = {"name": where, "timestamp": stamp, "hostname": host, "tests": "1"}
        head.update(failures="0", errors="1", skipped="0", time="0")
        suite = ET.SubElement(root, "testsuite", head)
        element = ET.SubElement(suite, "testcase", classname=where, name="read the test cases")
        ET.SubElement(element, "error", message=problem[:1000], type="unreadable").text = problem
    root.attrib.update(_counts(report.outcomes))
    root.set("errors", str(int(root.get("errors", "0")) + len(report.problems)))
    root.set("tests", str(int(root.get("tests", "0")) + len(report.problems)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: TestReport, path: str | Path) -> Path:
    """Write :func:`junit_xml` to ``path`` (folders made as needed)."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(junit_xml(report), encoding="utf-8")
    return file
