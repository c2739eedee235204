"""Scenarios that the conformance suite requires and ``nexus-tools serve`` does not pass yet,
each with the reason. The one place to look: ``test_conformance.py`` fails on any other
failing required scenario, and also when one listed here starts passing (then delete it here).
"""

from __future__ import annotations

_COMPLETION = "completion/complete is not implemented"
_RESOURCES = "resources are not served yet"
_PROMPTS = "prompts are not served yet"
_INPUT_REQUIRED = "prompts cannot ask the client yet: only tools get input-required results"

_COMMON = {}

#: revision -> scenario -> why it fails today
KNOWN_FAILURES: dict[str, dict[str, str]] = {
    "2025-11-25": {
        **_COMMON,
    },
    "2026-07-28": {
        **_COMMON,
        "input-required-result-non-tool-request": _INPUT_REQUIRED,
    },
}
