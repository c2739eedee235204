"""Approval at the MCP client: a call whose policy says ``ask`` asks the calling client's
user (elicitation) instead of being refused, when the client can be asked.

The question names the tool, its permission and the exact arguments; the answer approves
that call once. It cannot approve another: mid-call (2025-11-25) it is part of the call
itself, and at 2026-07-28 the answer travels in a request state that is signed, bound to the
tool and arguments, and used up when the approved call runs (:mod:`.mcp_input`). Clients that
cannot be asked keep the clear refusal that says how to pre-approve the tool.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.tools.channel import ClientChannel

__all__ = ["APPROVAL_KEY", "APPROVE", "DENY", "ask_client"]

APPROVAL_KEY = "nexus_approval"
APPROVE, DENY = "approve once", "deny"


def _question(tool: str, permission: str, arguments: dict[str, Any]) -> str:
    shown = json.dumps(arguments, ensure_ascii=False, indent=2, default=str)
    if len(shown) > 2000:
        shown = shown[:2000] + "\n…"
    return (
        f"Allow the tool {tool!r} to run? It needs permission {permission!r}.\nArguments:\n{shown}"
    )


async def ask_client(
    caller: ClientChannel, tool: str, permission: str, arguments: dict[str, Any]
) -> bool:
    """Whether the client's user approved this one call. Raises ``CallerUnavailable``
    when the client cannot be asked, ``InputRequired`` while the answer is pending."""
    answer = await caller.elicit(
        _question(tool, permission, arguments),
        {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Decision",
                    "enum": [APPROVE, DENY],
                    "default": DENY,
                }
            },
            "required": ["decision"],
        },
        key=APPROVAL_KEY,
    )
    return answer.accepted and answer.content.get("decision") == APPROVE
