"""``serve --auth`` settings that would leave a server open, or refuse every token, without
saying why: OAuth options without ``--auth oauth``, and an ``--issuer`` spelt differently
from the issuer's own metadata (the ``iss`` its tokens carry)."""

from __future__ import annotations

import pytest
from oauth_issuer import running_issuer

from nexus_jupyter.core.errors import ConfigError
from nexus_jupyter.serve.auth.settings import ServeAuth, discover_jwks_url


@pytest.mark.parametrize(
    ("configured", "given"),
    [
        (None, {"issuer": "https://login.example.com", "audience": "nexus-tools"}),
        ({"issuer": "https://login.example.com", "audience": "nexus-tools"}, {}),
        ("tokens", {"issuer": "https://login.example.com"}),
        (None, {"mode": "none", "jwks_url": "https://login.example.com/keys"}),
    ],
)
def test_oauth_options_without_oauth_mode_are_refused(configured: object, given: dict) -> None:
    with pytest.raises(ConfigError, match=r"only appl(y|ies) with (--auth oauth|`mode: oauth`)"):
        ServeAuth.resolve(configured, **given)


def test_the_command_line_mode_replaces_an_oauth_block_of_nex_yaml() -> None:
    configured = {"mode": "oauth", "issuer": "https://login.example.com", "audience": "a"}
    assert ServeAuth.resolve(configured, mode="none").mode == "none"
    assert ServeAuth.resolve(configured, mode="tokens").issuer is None
    oauth = ServeAuth.resolve(configured, audience="b")
    assert (oauth.mode, oauth.issuer, oauth.audience) == ("oauth", configured["issuer"], "b")


def test_an_issuer_spelt_unlike_its_metadata_is_named_at_start() -> None:
    with running_issuer() as issuer:
        assert discover_jwks_url(issuer.url).startswith(issuer.url)
        with pytest.raises(ConfigError) as caught:
            discover_jwks_url(issuer.url + "/")
    message = str(caught.value)
    assert f"names the issuer {issuer.url!r}" in message
    assert f"pass --issuer {issuer.url} " in message
