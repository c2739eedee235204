"""``%tool credentials set SERVICE [KEY] | list | delete SERVICE [KEY]``.

``set`` prompts with getpass (the value is never echoed, stored in the cell or in the
history); ``list`` shows services, keys and providers, never values.
"""

from __future__ import annotations

import getpass
import html
from typing import Any

from ..core.errors import NexusError
from ..render.tables import left_aligned
from .subcommands import MagicContext, subcommand

__all__ = ["CredentialList"]

_USAGE = (
    "%tool credentials set SERVICE [KEY] [--provider file|keyring] | list | delete SERVICE [KEY]"
)


class CredentialList:
    """What ``%tool credentials list`` shows: service, key and provider per row."""

    def __init__(self, rows: list[dict[str, str]]) -> None:
        self.rows = rows

    def __repr__(self) -> str:
        if not self.rows:
            return "No credentials stored. Set one with `%tool credentials set SERVICE KEY`."
        return "\n".join(f"{r['service']}/{r['key']}  ({r['provider']})" for r in self.rows)

    def _repr_html_(self) -> str:
        if not self.rows:
            return f"<p>{html.escape(repr(self))}</p>"
        body = "".join(
            f"<tr><td>{html.escape(r['service'])}</td><td>{html.escape(r['key'])}</td>"
            f"<td>{html.escape(r['provider'])}</td></tr>"
            for r in self.rows
        )
        return left_aligned(
            "<table><thead><tr><th>service</th><th>key</th><th>provider</th></tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )


def _store(ctx: MagicContext) -> Any:
    store = getattr(ctx.registry, "credentials", None)
    if store is None:
        from ..core.policy.credentials import CredentialStore

        store = CredentialStore()
    return store


def _split(argv: list[str]) -> tuple[list[str], str | None]:
    provider = None
    rest: list[str] = []
    it = iter(argv)
    for item in it:
        if item == "--provider":
            provider = next(it, None)
            if provider not in ("file", "keyring"):
                raise NexusError(f"--provider must be 'file' or 'keyring', got {provider!r}.")
        elif item.startswith("--provider="):
            provider = item.split("=", 1)[1]
        elif item.startswith("-"):
            raise NexusError(f"Unknown option {item!r}; usage: {_USAGE}")
        else:
            rest.append(item)
    return rest, provider


def _prompt(service: str, key: str) -> str:
    """Ask for the value without echoing it; a kernel that cannot ask says what to do."""
    from IPython.core.error import StdinNotImplementedError

    try:
        return getpass.getpass(f"Value for {service}/{key} (not shown): ")
    except (StdinNotImplementedError, EOFError):
        # nbconvert, nbclient, papermill: no frontend answers an input request. A `--value`
        # option would put the secret into the notebook and its history, so none is offered.
        from ..core.policy.providers import env_name

        raise NexusError(
            f"This kernel cannot ask for the value of {service}/{key}: nothing answers input "
            "requests here (a notebook run by nbconvert, nbclient or papermill). Store it "
            f"from a terminal with `nexus-tools credentials set {service} {key}`, or set "
            f"the environment variable {env_name(service, key)} for the kernel; then run "
            "the notebook again."
        ) from None


@subcommand(
    "credentials",
    usage=_USAGE,
    summary="Set (prompted, never shown), list or delete credentials for tools.",
    example="%tool credentials set weather-api api_key",
    details="Values are kept in the system keyring when available, else in "
    "~/.nexus/credentials.json (mode 0600). Environment variables "
    "NEXUS_CRED_<SERVICE>_<KEY> are read too.",
)
def credentials(ctx: MagicContext, argv: list[str]) -> Any:
    if not argv:
        raise NexusError(f"Give an action: {_USAGE}")
    action, (args, provider) = argv[0], _split(argv[1:])
    store = _store(ctx)
    if action == "list":
        if args:
            raise NexusError("`%tool credentials list` takes no arguments.")
        return CredentialList(store.describe())
    if action in ("set", "delete"):
        if not 1 <= len(args) <= 2:
            raise NexusError(f"`%tool credentials {action}` takes SERVICE [KEY]; got {args!r}.")
        service = args[0]
        key = args[1] if len(args) == 2 else ("api_key" if action == "set" else None)
        if action == "delete":
            if not store.delete(service, key, provider=provider):
                what = f"{service}/{key}" if key else service
                raise NexusError(f"No stored credential {what!r}; see `%tool credentials list`.")
            print(f"Deleted {service}" + (f"/{key}" if key else "") + ".")
            return None
        assert key is not None
        value = _prompt(service, key)
        if not value:
            raise NexusError(f"No value entered for {service}/{key}; nothing was stored.")
        where = store.set(service, key, value, provider=provider)
        print(f"Stored {service}/{key} in {where}.")
        return None
    raise NexusError(f"Unknown action {action!r}; usage: {_USAGE}")
