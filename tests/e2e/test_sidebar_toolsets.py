"""The sidebar groups and filters its tools by toolset, and shows each call's summary, in a
real headless Chromium (``toolsets.spec.mjs``). Screenshots:
``test-artifacts/sidebar-toolsets-{grouped,filtered,summary}.png``."""

from __future__ import annotations

import pytest
from test_sidebar import ARTIFACTS, _run_spec, lab  # noqa: F401 - lab is a fixture

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]


def test_sidebar_groups_and_filters_by_toolset(
    lab: dict[str, str],  # noqa: F811
) -> None:
    shots = [f"sidebar-toolsets-{s}.png" for s in ("grouped", "filtered", "summary")]
    stdout, report = _run_spec(
        lab, "toolsets.spec.mjs", ARTIFACTS / "sidebar-toolsets-grouped.png", shots=shots
    )
    for step in (
        "grouped by toolset: Toolset · files 6",
        "the web toolset alone",
        "grouped by source with the filter kept",
        'the result pane and the history say "Listing ."',
    ):
        assert step in stdout, report
    print(stdout)
