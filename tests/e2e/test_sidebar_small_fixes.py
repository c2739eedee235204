"""Small things a new user met in the sidebar, in a real headless Chromium
(``smallfixes.spec.mjs``): Run's summary for a decimal in an integer field, the history's
24-hour time, one id per saved version, the stale badge, a skipped case's grey reason with
its real command. Screenshots: ``test-artifacts/smallfixes-*.png``."""

from __future__ import annotations

import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]


def test_small_fixes_in_the_sidebar(lab: dict[str, str]) -> None:  # noqa: F811
    shots = [
        f"smallfixes-{s}.png" for s in ("decimal", "versions", "stale-row", "stale-details", "skip")
    ]
    stdout, report = _run_spec(
        lab, "smallfixes.spec.mjs", ARTIFACTS / "smallfixes.png", shots=shots
    )
    for said in (
        "one value is not an integer (it has decimals)",
        "the history says",
        "versions: ",
        "the row says stale: stale: multiply_tool.py failed to reload",
        "%tool test greet --yes",
    ):
        assert said in stdout, report
    print(stdout)
