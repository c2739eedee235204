"""What an older client is not sent: fields of later protocol revisions, taken out of the
answers of a session that negotiated an older one.

The SDK's per-revision sieve keeps fields it does not know, so without this a
2024-11-05 client would get ``outputSchema`` and ``structuredContent`` (2025-06-18) and a
2025-06-18 client ``capabilities.tasks`` and a tool's ``execution`` (2025-11-25).
"""

from __future__ import annotations

from typing import Any

__all__ = ["VersionSieve"]

#: the first revision that has structured tool output (``outputSchema``,
#: ``structuredContent``)
STRUCTURED_SINCE = "2025-06-18"
#: the first revision with tasks (``capabilities.tasks``, a tool's ``execution``)
TASKS_SINCE = "2025-11-25"


def _before(version: str | None, since: str) -> bool:
    # Revisions are dates: they order as text. Unknown means the latest, so nothing goes.
    return bool(version) and str(version) < since


class VersionSieve:
    """A ``Server`` middleware that drops what the session's protocol
    revision does not have from ``initialize``, ``tools/list`` and ``tools/call`` answers."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        result = await call_next(ctx)
        if not isinstance(result, dict) or ctx.request_id is None:
            return result
        method = ctx.method
        if method == "initialize":
            # the revision this answer agrees on, not the connection's (not set yet)
            version = result.get("protocolVersion")
            capabilities = result.get("capabilities")
            if _before(version, TASKS_SINCE) and isinstance(capabilities, dict):
                result["capabilities"] = {k: v for k, v in capabilities.items() if k != "tasks"}
            return result
        version = ctx.protocol_version
        if method == "tools/list" and isinstance(result.get("tools"), list):
            dropped = set()
            if _before(version, TASKS_SINCE):
                dropped.add("execution")
            if _before(version, STRUCTURED_SINCE):
                dropped.add("outputSchema")
            if dropped:
                result["tools"] = [
                    {k: v for k, v in tool.items() if k not in dropped}
                    if isinstance(tool, dict)
                    else tool
                    for tool in result["tools"]
                ]
        elif method == "tools/call" and _before(version, STRUCTURED_SINCE):
            result.pop("structuredContent", None)
        return result
