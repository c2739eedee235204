"""OAuth scopes of ``nexus-tools serve`` and the permission levels they grant.

``tools:read`` lets a client list and call ``read_only`` tools, ``tools:write`` adds
``workspace_write`` tools and ``tools:admin`` adds ``danger_full_access`` ones. A higher scope
implies the lower ones, so a token issued with ``tools:admin`` alone passes the server's
``tools:read`` requirement. The level a token grants is a ceiling: nex.yaml's ``grant.mcp``
(and any ACL for the principal) still caps it.

>>> grant_of_scopes(["tools:write", "email"])
'workspace_write'
>>> scopes_for_grant("workspace_write")
['tools:read', 'tools:write']
"""

from __future__ import annotations

from collections.abc import Iterable

from ...core.tools.spec import PERMISSIONS, Permission, permission_rank

__all__ = [
    "READ_SCOPE",
    "SCOPE_GRANTS",
    "expand_scopes",
    "grant_of_scopes",
    "scopes_for_grant",
]

READ_SCOPE = "tools:read"
SCOPE_GRANTS: dict[str, Permission] = {
    READ_SCOPE: "read_only",
    "tools:write": "workspace_write",
    "tools:admin": "danger_full_access",
}
_SCOPE_OF_GRANT = {grant: scope for scope, grant in SCOPE_GRANTS.items()}


def grant_of_scopes(scopes: Iterable[str]) -> Permission | None:
    """The highest level ``scopes`` grant; ``None`` when they name no ``tools:`` scope."""
    levels: list[Permission] = [SCOPE_GRANTS[s] for s in scopes if s in SCOPE_GRANTS]
    if not levels:
        return None
    return max(levels, key=permission_rank)


def scopes_for_grant(grant: Permission) -> list[str]:
    """The ``tools:`` scopes up to ``grant`` (a token granting a level holds every lower one)."""
    return [_SCOPE_OF_GRANT[p] for p in PERMISSIONS if permission_rank(p) <= permission_rank(grant)]


def expand_scopes(scopes: Iterable[str]) -> list[str]:
    """``scopes`` plus the ``tools:`` scopes their highest one implies, in a stable order."""
    given = list(dict.fromkeys(scopes))
    grant = grant_of_scopes(given)
    implied = scopes_for_grant(grant) if grant is not None else []
    return given + [s for s in implied if s not in given]
