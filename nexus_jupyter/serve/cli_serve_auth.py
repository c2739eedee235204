"""The authentication options of ``nexus-tools serve`` (``--auth`` and friends)."""

from __future__ import annotations

import argparse
from typing import Any

from .auth.settings import ServeAuth, discover_jwks_url

__all__ = ["add_auth_arguments", "auth_from_arguments", "serve_settings_problem"]


def add_auth_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "authentication (HTTP)",
        "Every MCP request then needs 'Authorization: Bearer TOKEN'; the token's subject is "
        "the calls' principal. Required to bind anything but loopback. Default: serve.auth "
        "in nex.yaml, else none.",
    )
    group.add_argument(
        "--auth",
        choices=("none", "tokens", "oauth"),
        default=None,
        help="tokens: API tokens from `nexus-tools tokens create NAME`; oauth: JWT access "
        "tokens from an OAuth 2.1 issuer (needs --issuer and --audience)",
    )
    group.add_argument("--issuer", default=None, metavar="URL", help="the OAuth issuer (iss)")
    group.add_argument(
        "--audience", default=None, metavar="AUD", help="the audience (aud) tokens must name"
    )
    group.add_argument(
        "--jwks-url",
        default=None,
        metavar="URL",
        help="the issuer's signing keys (default: jwks_uri of the issuer's metadata)",
    )
    group.add_argument(
        "--public-url",
        default=None,
        metavar="URL",
        help="this server's /mcp URL as clients see it, e.g. behind a TLS reverse proxy "
        "(default http://HOST:PORT/mcp); named in the OAuth metadata",
    )


def auth_from_arguments(args: argparse.Namespace, reg: Any) -> ServeAuth:
    """The command line's auth options over ``serve.auth`` of nex.yaml.
    Raises :class:`~nexus_jupyter.core.errors.ConfigError`."""
    settings = getattr(reg, "settings", None)
    configured = dict(getattr(settings, "serve", None) or {})
    auth = ServeAuth.resolve(
        configured.get("auth"),
        getattr(settings, "files", ()),
        mode=args.auth,
        issuer=args.issuer,
        audience=args.audience,
        jwks_url=args.jwks_url,
        public_url=args.public_url,
    )
    if auth.mode == "oauth" and not auth.jwks_url:
        # Found now, so a wrong issuer is reported as such before the port is bound.
        assert auth.issuer is not None
        auth = auth.model_copy(update={"jwks_url": discover_jwks_url(auth.issuer)})
    return auth


def serve_settings_problem(settings: Any) -> str | None:
    """What is wrong with ``serve.auth`` of nex.yaml (``settings`` is the loaded
    :class:`~nexus_jupyter.core.config.model.Settings`), with its file and line; ``None``
    when nothing is. For ``nexus-tools check``: the issuer is not contacted."""
    from ..core.errors import ConfigError

    configured = dict(getattr(settings, "serve", None) or {})
    try:
        ServeAuth.resolve(configured.get("auth"), getattr(settings, "files", ()))
    except ConfigError as exc:
        return str(exc)
    return None
