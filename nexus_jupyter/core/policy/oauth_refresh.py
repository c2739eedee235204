"""Refreshing expired OAuth 2 credentials before a call (the refresh-token grant).

A service's credentials are refreshable when it stores ``refresh_token`` and ``token_url``
next to the access token (``client_id``, ``client_secret`` and ``scope`` are sent when
stored; ``expires_at`` is the expiry in Unix seconds)::

    nexus-tools credentials set github token          # the access token
    nexus-tools credentials set github refresh_token
    nexus-tools credentials set github token_url      # https://github.com/login/oauth/access_token
    nexus-tools credentials set github expires_at     # 1767225600

Before a tool that requires ``github/token`` runs, a token that is missing or expires within
:data:`EXPIRY_MARGIN_S` is refreshed: the new ``access_token`` is stored under the required
key, with its new ``expires_at`` (and the new ``refresh_token`` when the server rotates it),
in the provider that held the refresh token. A failed refresh raises
:class:`~nexus_jupyter.core.errors.CredentialRefreshFailed`, which says how to sign in again.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..errors import CredentialRefreshFailed
from ..tools.spec import ToolSpec

__all__ = ["EXPIRY_MARGIN_S", "needs_refresh", "refresh_due", "refresh_expired"]

EXPIRY_MARGIN_S = 30.0
REFRESH_TIMEOUT_S = 15.0
_OPTIONAL_FIELDS = ("client_id", "client_secret", "scope")


def _targets(store: Any, spec: ToolSpec) -> list[tuple[str, str]]:
    from .credentials import parse_requirement

    out = []
    for entry in spec.requires_credentials:
        service, key = parse_requirement(entry)
        if store.lookup(service, "refresh_token") and store.lookup(service, "token_url"):
            out.append((service, key or "access_token"))
    return out


def needs_refresh(store: Any, service: str, key: str, now: float | None = None) -> bool:
    """Whether ``service/key`` is missing or (nearly) expired and can be refreshed."""
    if store.lookup(service, key) is None:
        return True
    expires = store.lookup(service, "expires_at")
    if expires is None:
        return False
    try:
        deadline = float(expires)
    except ValueError:
        return True
    return deadline - EXPIRY_MARGIN_S <= (time.time() if now is None else now)


def refresh_due(store: Any, spec: ToolSpec) -> list[tuple[str, str]]:
    """The ``(service, key)`` credentials of ``spec`` to refresh now (no network)."""
    if not spec.requires_credentials:
        return []
    return [(s, k) for s, k in _targets(store, spec) if needs_refresh(store, s, k)]


def refresh_expired(store: Any, spec: ToolSpec) -> list[str]:
    """Refresh every expired refreshable credential ``spec`` requires; returns the
    ``service/key`` names refreshed. Raises :class:`CredentialRefreshFailed`."""
    refreshed = []
    for service, key in refresh_due(store, spec):
        _refresh(store, service, key)
        refreshed.append(f"{service}/{key}")
    return refreshed


def _refresh(store: Any, service: str, key: str) -> None:
    url = str(store.lookup(service, "token_url"))
    form = {"grant_type": "refresh_token", "refresh_token": store.lookup(service, "refresh_token")}
    for name in _OPTIONAL_FIELDS:
        value = store.lookup(service, name)
        if value:
            form[name] = value
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode(form).encode(),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=REFRESH_TIMEOUT_S) as answer:
            body = json.loads(answer.read().decode() or "{}")
    except urllib.error.HTTPError as exc:
        raise CredentialRefreshFailed(service, key, _oauth_error(exc)) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise CredentialRefreshFailed(service, key, f"{type(exc).__name__}: {exc}") from None
    token = body.get("access_token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token:
        raise CredentialRefreshFailed(service, key, "the answer held no access_token")
    updates = {key: token}
    if isinstance(body.get("expires_in"), int | float):
        updates["expires_at"] = str(int(time.time() + float(body["expires_in"])))
    if isinstance(body.get("refresh_token"), str) and body["refresh_token"]:
        updates["refresh_token"] = body["refresh_token"]
    provider = _holder(store, service)
    for name, value in updates.items():
        store.set(service, name, value, provider=provider)


def _oauth_error(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read().decode() or "{}")
    except (ValueError, OSError):
        body = {}
    code = body.get("error") if isinstance(body, dict) else None
    said = f" ({code})" if code else ""
    return f"the token endpoint answered HTTP {exc.code}{said}"


def _holder(store: Any, service: str) -> str | None:
    """The writable provider that holds the refresh token (the new values go there too)."""
    for provider in store.providers:
        if getattr(provider, "writable", False) and provider.get(service, "refresh_token"):
            return str(provider.name)
    return None
