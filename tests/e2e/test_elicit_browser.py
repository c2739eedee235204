"""A tool's question to the notebook user (``ctx.elicit``), answered in a real headless
Chromium: ``elicit.spec.mjs`` runs a call from the test-call form, fills in the form generated
from the requested schema and submits it. Screenshots: ``test-artifacts/elicit-asked.png``
(the question), ``test-artifacts/elicit.png`` (the result) and, with server-everything
installed, ``test-artifacts/elicit-upstream.png`` (its research task's question, asked from
inside an upstream task). Uses the JupyterLab of ``test_sidebar.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

TESTS = Path(__file__).resolve().parents[1]
EVERYTHING = TESTS / "mcp_peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
NODE22 = TESTS / "conformance/node_modules/.bin/node"

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]


def test_elicitation_form_in_browser(
    lab: dict[str, str],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps = [
        "the tool asked: elicitation form shown",
        "Submit pressed: the tool finished with the answer",
    ]
    if EVERYTHING.exists() and NODE22.exists():  # an upstream task's question, too
        monkeypatch.setenv("NEXUS_E2E_EVERYTHING", str(EVERYTHING))
        monkeypatch.setenv("NEXUS_E2E_NODE", str(NODE22))
        steps += [
            "the upstream task asked: its question shown as a form",
            "the upstream task finished with the answer",
        ]
    stdout, report = _run_spec(lab, "elicit.spec.mjs", ARTIFACTS / "elicit.png")
    for step in steps:
        assert step in stdout, report
    assert (ARTIFACTS / "elicit-asked.png").stat().st_size > 1000
