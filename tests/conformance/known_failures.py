"""Scenarios that the conformance suite requires and ``nexus-tools serve`` does not pass yet,
each with the reason, per protocol revision (``{"scenario": "why it fails"}``). The one place
to look: ``test_conformance.py`` fails on any other failing required scenario, and also when
one listed here starts passing (then delete it here).

Every required scenario passes today, server and client, so these lists are empty.
"""

from __future__ import annotations

#: Client scenarios (the nexus MCP client, ``McpSource``) that fail today, with the reason.
KNOWN_CLIENT_FAILURES: dict[str, dict[str, str]] = {
    "2025-11-25": {},
    "2026-07-28": {},
}

#: revision -> scenario -> why it fails today
KNOWN_FAILURES: dict[str, dict[str, str]] = {
    "2025-11-25": {},
    "2026-07-28": {},
}
