"""``nexus-tools tokens``: the API tokens of ``nexus-tools serve --auth tokens``.

nexus-tools tokens create alice --grant read_only    # prints the secret, once
nexus-tools tokens list                              # names, grants, dates (never secrets)
nexus-tools tokens revoke alice                      # refused from the next request on
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.tools.spec import PERMISSIONS

__all__ = ["add_parser", "run"]


def add_parser(sub: Any, shared: Sequence[argparse.ArgumentParser]) -> None:
    """Add ``tokens create|list|revoke`` to the ``nexus-tools`` subparsers ``sub``."""
    p = sub.add_parser(
        "tokens", help="create, list or revoke API tokens for `serve --auth tokens`", parents=shared
    )
    tsub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))
    c = tsub.add_parser(
        "create", help="create NAME's token and print its secret (shown once)", parents=shared
    )
    c.add_argument("name", help="the principal of the calls made with this token")
    c.add_argument(
        "--grant",
        choices=PERMISSIONS,
        default="workspace_write",
        help="the highest permission level the token allows (default workspace_write; "
        "nex.yaml's grant.mcp still caps it)",
    )
    tsub.add_parser("list", help="list tokens (never their secrets)", parents=shared)
    c = tsub.add_parser("revoke", help="revoke NAME's token", parents=shared)
    c.add_argument("name")
    for parser in (p, *tsub.choices.values()):
        parser.add_argument(
            "--token-file",
            default=argparse.SUPPRESS,
            metavar="FILE",
            help="the token store (default <NEXUS_HOME>/tokens.json)",
        )


def run(args: argparse.Namespace) -> int:
    """Run ``nexus-tools tokens ACTION``; returns the exit code."""
    from ..core.errors import ConfigError
    from ..serve.auth.tokens import check_token_request, open_token_store
    from .commands import _table
    from .main import UsageProblem

    if args.action is None:
        raise UsageProblem("tokens needs an action: create, list or revoke.")
    named = getattr(args, "token_file", None)
    if named and "://" not in named and args.action != "create":
        where = Path(named).expanduser()
        if not where.is_file():
            raise UsageProblem(
                f"No token file at {where}"
                + ("" if where.parent.is_dir() else f" (no folder {where.parent})")
                + ": check the --token-file path, or make the file with `nexus-tools tokens "
                f"create NAME --token-file {named}`."
            )
    store = open_token_store(named or _cluster_of(args))
    if args.action == "create":
        try:
            check_token_request(args.name, args.grant)
        except ConfigError as exc:
            raise UsageProblem(str(exc)) from None
        token, secret = store.create(args.name, args.grant)
        if args.json:
            print(json.dumps({"name": token.name, "grant": token.grant, "token": secret}))
        else:
            print(secret)
            print(
                f"Token for {token.name!r} ({token.grant}). It is shown only now: store it "
                "where the client reads it. Clients send 'Authorization: Bearer <token>'.",
                file=sys.stderr,
            )
        return 0
    if args.action == "revoke":
        if not store.revoke(args.name):
            raise UsageProblem(f"No token named {args.name!r}; see `nexus-tools tokens list`.")
        print(f"Revoked the token of {args.name!r}.")
        return 0
    rows = [{"name": t.name, "grant": t.grant, "created": _when(t.created)} for t in store.tokens()]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print("No tokens. Create one with `nexus-tools tokens create NAME`.")
    else:
        _table(rows, ["name", "grant", "created"])
    return 0


def _when(timestamp: float) -> str:
    moment = datetime.datetime.fromtimestamp(timestamp, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _cluster_of(args: argparse.Namespace) -> str | None:
    """nex.yaml's ``cluster:``: a cluster keeps its tokens in its Redis, for every replica."""
    from ..app import resolve_settings

    return resolve_settings(Path(args.root).resolve(), args.config).cluster
