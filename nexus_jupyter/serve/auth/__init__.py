"""Client authentication for ``nexus-tools serve --transport http``: static API tokens and
an OAuth 2.1 resource server, on the MCP SDK's auth middleware (see :mod:`.settings`)."""

from __future__ import annotations

from .scopes import SCOPE_GRANTS, grant_of_scopes, scopes_for_grant
from .settings import ServeAuth, auth_app_options, identity_of
from .tokens import ApiToken, FileTokenStore, TokenStore, open_token_store

__all__ = [
    "SCOPE_GRANTS",
    "ApiToken",
    "FileTokenStore",
    "ServeAuth",
    "TokenStore",
    "auth_app_options",
    "grant_of_scopes",
    "identity_of",
    "open_token_store",
    "scopes_for_grant",
]
