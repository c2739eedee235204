"""Signing in to an OAuth-protected MCP server from the notebook: ``%tool mcp add --auth
oauth`` in a real IPython shell with the extension loaded, against a real protected
``nexus-tools serve --auth oauth`` and a real authorization server made by the test. The
sign-in link shows in the cell's output as a link to click; following it (as the person's
browser does) signs in, and the server's tools join the registry."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from nbhelpers import run_ok, wait_for
from oauth_issuer import Issuer, running_issuer
from serving import serve_http

from nexus_jupyter import Registry

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with running_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def upstream(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("protected")
    (root / "hello.txt").write_text("hi from the team server\n")
    with serve_http(
        root, "--auth", "oauth", "--issuer", issuer.url, "--audience", issuer.audience
    ) as served:
        yield served.url


def test_the_sign_in_link_shows_in_the_cell_and_signing_in_brings_the_tools(
    shell: InteractiveShell,
    registry: Registry,
    issuer: Issuer,
    upstream: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NEXUS_HOME", str(tmp_path / "home"))  # tokens in a fresh store
    monkeypatch.setenv("BROWSER", "true")  # no desktop browser here: the link is the way in
    with capture_output() as shown:
        run_ok(
            shell,
            f"%tool mcp add team --url {upstream} --auth oauth --client-id notebook "
            "--scope 'tools:read tools:write'",
        )
        wait_for(lambda: any("sign in" in o.data.get("text/html", "") for o in shown.outputs), 30)
    (html,) = [
        o.data["text/html"] for o in shown.outputs if "sign in" in o.data.get("text/html", "")
    ]
    assert "MCP server <code>team</code> needs you to sign in" in html
    link = re.search(r'href="([^"]+)"', html)
    assert link is not None and 'target="_blank"' in html
    url = link.group(1).replace("&amp;", "&")
    assert url.startswith(issuer.url) and "code_challenge_method=S256" in url
    with httpx.Client(follow_redirects=True, timeout=10) as browser:  # the person clicks it
        assert browser.get(url).status_code == 200
    wait_for(lambda: "mcp__team__read" in registry, 30)
    result = run_ok(shell, "%tool call mcp__team__read path=hello.txt")
    assert "hi from the team server" in str(result.content)


def test_auth_mistakes_are_one_sentence(shell: InteractiveShell, registry: Registry) -> None:
    refused = shell.run_cell("%tool mcp add x --url http://127.0.0.1:9/mcp --auth password")
    assert isinstance(refused.error_in_exec, UsageError)  # shown without a traceback
    assert "--auth takes oauth" in str(refused.error_in_exec)
