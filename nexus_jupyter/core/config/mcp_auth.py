"""``auth:`` of an HTTP MCP server in nex.yaml: how nexus signs in to an OAuth-protected
upstream server (for a static bearer token, ``headers:`` is enough).

    mcp:
      servers:
        - name: team                       # a person signs in (authorization code + PKCE)
          url: https://tools.example.com/mcp
          auth: {type: oauth, client_id: nexus-notebook, scope: "tools:read tools:write"}
        - name: ci                         # a service (client credentials)
          url: https://tools.example.com/mcp
          auth:
            type: client_credentials
            client_id: nexus-ci
            client_secret: ${credentials:team-oauth/client_secret}
            issuer: https://login.example.com

Tokens are kept in the credential store (service ``mcp-oauth:<server name>``) and refreshed.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..errors import SourceError

__all__ = ["McpAuthSettings", "mcp_auth_settings"]


class McpAuthSettings(BaseModel):
    """``type: oauth`` (a person signs in once in the browser; ``client_id`` optional when
    the authorization server registers clients dynamically) or ``type: client_credentials``
    (``client_id`` and ``client_secret`` required)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["oauth", "client_credentials"]
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    issuer: str | None = None  # the authorization server that must answer (recommended)
    redirect_port: int = Field(default=0, ge=0, le=65535)  # 0: a free loopback port

    @model_validator(mode="after")
    def _service_needs_secret(self) -> McpAuthSettings:
        if self.type == "client_credentials" and (not self.client_id or not self.client_secret):
            raise ValueError("auth type client_credentials needs client_id and client_secret")
        return self


def mcp_auth_settings(server: str, auth: object) -> McpAuthSettings:
    """An MCP server's ``auth`` as :class:`McpAuthSettings` (from nex.yaml's mapping)."""
    if isinstance(auth, McpAuthSettings):
        return auth
    try:
        return McpAuthSettings.model_validate(auth)
    except ValueError as exc:
        raise SourceError(f"MCP server {server!r}: invalid auth settings: {exc}") from None
