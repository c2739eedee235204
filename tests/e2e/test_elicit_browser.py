"""A tool's question to the notebook user (``ctx.elicit``), answered in a real headless
Chromium: ``elicit.spec.mjs`` runs a call from the test-call form, fills in the form generated
from the requested schema and submits it. Screenshots: ``test-artifacts/elicit-asked.png``
(the question) and ``test-artifacts/elicit.png`` (the result). Uses the JupyterLab of
``test_sidebar.py``."""

from __future__ import annotations

import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]


def test_elicitation_form_in_browser(lab: dict[str, str]) -> None:  # noqa: F811
    stdout, report = _run_spec(lab, "elicit.spec.mjs", ARTIFACTS / "elicit.png")
    for step in (
        "the tool asked: elicitation form shown",
        "Submit pressed: the tool finished with the answer",
    ):
        assert step in stdout, report
    assert (ARTIFACTS / "elicit-asked.png").stat().st_size > 1000
