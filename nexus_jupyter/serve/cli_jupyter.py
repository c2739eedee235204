"""``nexus-tools serve --jupyter URL --token T``: also serve a running Jupyter server's
registry, kernel tools included (through its ``/nexus/mcp``), so an agent pointed at
``nexus-tools serve`` sees a cell's tool the moment the cell runs."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..core.errors import ConfigError

__all__ = ["add_jupyter_arguments", "attach_jupyter"]


def add_jupyter_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--jupyter",
        default=None,
        metavar="URL",
        help="also serve the tools of the Jupyter server at URL (its registry, live kernel "
        "tools included), e.g. http://127.0.0.1:8888/",
    )
    parser.add_argument(
        "--token",
        default=None,
        metavar="T",
        help="the Jupyter server's token for --jupyter (default: $JUPYTER_TOKEN)",
    )


def attach_jupyter(reg: Any, args: argparse.Namespace) -> None:
    """Add the ``--jupyter`` server as a source of ``reg`` (nothing without ``--jupyter``).
    Raises :class:`ConfigError` when the token is missing."""
    url = getattr(args, "jupyter", None)
    if not url:
        return
    token = getattr(args, "token", None)
    token_from = "--token"
    if not token:
        token, token_from = os.environ.get("JUPYTER_TOKEN"), "$JUPYTER_TOKEN"
    if not token:
        raise ConfigError(
            f"--jupyter {url} needs the server's token: pass --token T or set JUPYTER_TOKEN "
            "(`jupyter server list` shows it)."
        )
    # Import the SDK fully here: the source connects on the registry's thread while this
    # one builds the server, and two threads importing mcp's circular modules at once fail.
    import mcp  # noqa: F401

    from .nexus_upstream import JupyterServerSource

    reg.add_source(JupyterServerSource(url, token, token_from=token_from))
