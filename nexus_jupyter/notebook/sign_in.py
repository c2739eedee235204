"""Sign-in links of OAuth-protected MCP servers, shown in the notebook as a link to click
(registered by ``%load_ext nexus_jupyter``; see :mod:`nexus_jupyter.sources.mcp_auth`)."""

from __future__ import annotations

import html
from collections.abc import Callable

__all__ = ["install_sign_in_links"]


def show_sign_in_link(server: str, url: str) -> None:
    """Display the link in the output of the cell that is running (or ran last)."""
    from IPython.display import HTML, display

    display(
        HTML(
            f"<p>MCP server <code>{html.escape(server)}</code> needs you to sign in: "
            f'<a href="{html.escape(url, quote=True)}" target="_blank" rel="noopener noreferrer">'
            "open the sign-in page</a>. Its tools appear once you have signed in.</p>"
        )
    )


def install_sign_in_links() -> Callable[[], None]:
    """Show every sign-in link in the notebook; returns the function that stops it."""
    from ..sources.sign_in_links import add_link_opener

    return add_link_opener(show_sign_in_link)
