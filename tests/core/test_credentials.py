"""Credentials: providers, checks before calls, and a canary secret that must never show."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter import MissingCredential, Registry, ToolContext, tool
from nexus_jupyter.core.policy.audit import AuditLog
from nexus_jupyter.core.policy.credentials import CredentialStore, count_secret
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.core.policy.providers import CredentialFileError, env_name

keyring_backend = pytest.importorskip("keyring.backend")  # the `keyring` extra

CANARY = "canary-Zq9x7Wv3-secret"


def assert_no_secret(text: str, secret: str = CANARY) -> None:
    found = count_secret(text, secret)
    assert found == 0, f"secret appears {found} time(s) in: {text[:300]!r}"


class MemoryKeyring(keyring_backend.KeyringBackend):  # type: ignore[name-defined]
    """A real keyring backend (the keyring API) that keeps passwords in memory."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.data.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.data[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.data.pop((service, username), None)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEXUS_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _store(provider: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> CredentialStore:
    store = CredentialStore(home=home, keyring_backend=MemoryKeyring())
    if provider == "env":
        monkeypatch.setenv(env_name("weather-api", "api_key"), CANARY)
    else:
        store.set("weather-api", "api_key", CANARY, provider=provider)
    return store


@tool(requires_credentials=["weather-api"])
async def weather(city: str, *, ctx: ToolContext) -> str:
    """Weather for a city."""
    key = await ctx.credentials.get("weather-api", "api_key")
    ctx.log.warning("calling the weather API with key %s", key)
    raise ValueError(f"the API rejected key {key!r} for {city}")


@tool(requires_credentials=["weather-api/api_key"])
def sync_weather(city: str) -> str:
    """Weather, sync flavour."""
    raise RuntimeError(f"boom {os.environ.get(env_name('weather-api', 'api_key'), '')}")


@pytest.mark.parametrize("provider", ["env", "file", "keyring"])
async def test_canary_never_appears(
    provider: str,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    store = _store(provider, home, monkeypatch)
    audit = AuditLog(tmp_path / "audit.jsonl", masker=store.mask)
    reg = Registry(search="keyword", policy=Policy(), credentials=store, audit=audit)
    try:
        reg.add(weather)
        reg.add(sync_weather)
        assert reg.entry("weather").status == "ok"
        result = await reg.call("weather", {"city": "Oslo"})
        assert result.is_error and "***" in str(result.error)
        seen = [
            repr(result),
            str(result.to_dict()),
            repr(store),
            repr(store.view()),
            str(store.list()),
            str(store.describe()),
            repr(reg),
            str(reg.status()),
            str([e.to_dict() for e in reg.entries()]),
            audit.path.read_text(),
            caplog.text,
            repr(store.providers),
        ]
        if provider == "env":
            sync_result = reg.call_sync("sync_weather", {"city": "Oslo"})
            seen += [str(sync_result.to_dict())]
        for text in seen:
            assert_no_secret(text)
        assert store.lookup("weather-api", "api_key") == CANARY  # the value is really there
    finally:
        reg.close()


def test_log_records_are_masked_with_exception_text(
    home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = _store("file", home, monkeypatch)  # masking lasts as long as the store
    log = logging.getLogger("nexus_jupyter.test")
    try:
        raise ValueError(f"bad {CANARY}")
    except ValueError:
        log.exception("failed with %s", CANARY)
    assert "failed with ***" in caplog.text and "bad ***" in caplog.text
    assert_no_secret(caplog.text)
    del store


def test_file_is_0600_and_refused_when_others_can_read(home: Path) -> None:
    store = CredentialStore(home=home, providers=None)
    store.set("svc", "token", CANARY, provider="file")
    path = home / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert_no_secret(repr(store.provider("file")))
    path.chmod(0o644)
    fresh = CredentialStore(home=home)
    with pytest.raises(CredentialFileError, match="chmod 600") as info:
        fresh.lookup("svc", "token")
    assert_no_secret(str(info.value))
    assert fresh.has("svc") is False
    with pytest.raises(CredentialFileError):
        fresh.require(_spec("svc"))


def _spec(*needs: str) -> Any:
    from nexus_jupyter import ToolSpec

    return ToolSpec("t", requires_credentials=needs)


def test_missing_credential_says_how_to_set_it(home: Path) -> None:
    store = CredentialStore(home=home)
    assert store.missing(_spec("github/token", "other")) == ["github/token", "other"]
    with pytest.raises(MissingCredential) as info:
        store.require(_spec("github/token"))
    message = str(info.value)
    assert "credentials set github token" in message and "NEXUS_CRED_GITHUB_TOKEN" in message


def test_service_or_service_key_requirements(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = CredentialStore(home=home)
    store.set("github", "token", "t0ken-value", provider="file")
    assert store.missing(_spec("github")) == []
    assert store.missing(_spec("github/token")) == []
    assert store.missing(_spec("github/api_key")) == ["github/api_key"]
    monkeypatch.setenv("NEXUS_CRED_SLACK_BOT_TOKEN", "xoxb-value")
    assert store.missing(_spec("slack/bot_token", "slack")) == []
    assert store.list() == {"github": ["token"], "slack_bot": ["token"]}


async def test_tool_without_its_credential_is_unavailable_with_reason(home: Path) -> None:
    store = CredentialStore(home=home)
    reg = Registry(search="keyword", credentials=store)
    try:
        reg.add(weather)
        entry = reg.entry("weather")
        assert entry.status == "unavailable" and "weather-api" in (entry.reason or "")
        assert [e.name for e in reg.entries(available=False)] == ["weather"]
        with pytest.raises(MissingCredential, match="nexus-tools credentials set weather-api"):
            await reg.call("weather", {"city": "x"})  # the refusal says how to set it
        store.set("weather-api", "api_key", CANARY, provider="file")
        assert reg.entry("weather").status == "ok"
    finally:
        reg.close()


def test_keyring_set_list_delete_never_stores_value_in_the_index(home: Path) -> None:
    ring = MemoryKeyring()
    store = CredentialStore(home=home, keyring_backend=ring)
    assert store.default_provider() == "keyring"
    store.set("svc", "token", CANARY)
    assert ring.data == {("nexus:svc", "token"): CANARY}
    assert_no_secret((home / "keyring-index.json").read_text())
    assert store.list() == {"svc": ["token"]}
    assert store.delete("svc") is True
    assert store.lookup("svc", "token") is None and store.list() == {}


def test_env_is_read_only_and_overrides_the_file(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CredentialStore(home=home)
    store.set("svc", "api_key", "from-file", provider="file")
    monkeypatch.setenv("NEXUS_CRED_SVC_API_KEY", "from-env")
    assert store.lookup("svc") == "from-env"
    with pytest.raises(Exception, match="read-only"):
        store.set("svc", "api_key", "x", provider="env")


def test_mask_replaces_every_known_value(home: Path) -> None:
    store = CredentialStore(home=home)
    store.set("a", "k", "short-but-ok", provider="file")
    store.set("b", "k", "short-but-ok-longer", provider="file")
    assert store.mask("x short-but-ok-longer y short-but-ok") == "x *** y ***"
    assert store.mask("") == ""


@tool(requires_credentials=["weather-api"])
async def leaky(*, ctx: ToolContext) -> dict:
    """Returns its own key: a tool bug that must not reach a screen."""
    key = await ctx.credentials.get("weather-api", "api_key")
    return {"auth": {"header": f"Bearer {key}"}, "keys": [key]}


@pytest.mark.parametrize("provider", ["env", "file"])
async def test_a_secret_returned_by_a_tool_is_masked_wherever_it_is_shown(
    provider: str, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nexus_jupyter.notebook.history import CallHistory
    from nexus_jupyter.render.display import html_of
    from nexus_jupyter.render.results import result_html, result_text

    store = _store(provider, home, monkeypatch)
    reg = Registry(search="keyword", policy=Policy(), credentials=store)
    try:
        reg.add(leaky)
        result = await reg.call("leaky")
        assert result.structured["keys"] == [CANARY]  # code still gets what the tool returned
        history = CallHistory()
        record = history.record_result({}, result)
        shown = result.redacted()
        for text in (
            repr(result),
            str(result.to_dict()),
            html_of(result),
            result_html(shown),
            result_text(shown),
            str(record.to_dict()),
            str(shown.value),
            shown.text,
        ):
            assert_no_secret(text)
        assert shown.structured == {"auth": {"header": "Bearer ***"}, "keys": ["***"]}
    finally:
        reg.close()


def test_a_result_without_secrets_is_shown_as_it_is(home: Path) -> None:
    store = CredentialStore(home=home)
    reg = Registry(search="keyword", credentials=store)
    try:
        reg.add(add_numbers)
        result = reg.call_sync("add_numbers", {"a": 1, "b": 2})
        assert result.masker is not None and result.redacted() is result
    finally:
        reg.close()


@tool
def add_numbers(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
def bearer_sync(*, ctx: ToolContext) -> str:
    """A sync tool that forgot it cannot await ``get``."""
    return "Bearer " + ctx.credentials.get("weather-api")  # type: ignore[operator]


@tool
def header_sync(*, ctx: ToolContext) -> str:
    """The same mistake in an f-string (it used to send the coroutine's repr quietly)."""
    return f"Bearer {ctx.credentials.get('weather-api')}"


@tool
def header_run(*, ctx: ToolContext) -> str:
    """A sync tool that runs ``get`` to completion itself."""
    import asyncio

    return "Bearer " + asyncio.run(ctx.credentials.get("weather-api"))  # type: ignore[arg-type]


@tool
async def header_async(*, ctx: ToolContext) -> str:
    """The async way."""
    return "Bearer " + await ctx.credentials.get("weather-api")


@tool
def header_get_sync(*, ctx: ToolContext) -> str:
    """The sync way."""
    return "Bearer " + ctx.credentials.get_sync("weather-api")


@pytest.mark.filterwarnings("error::RuntimeWarning")  # no "coroutine was never awaited"
@pytest.mark.parametrize("with_store", [True, False])
def test_an_unawaited_credential_says_to_await_it_or_use_get_sync(
    with_store: bool, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env_name("weather-api", "api_key"), CANARY)
    store = CredentialStore(home=home) if with_store else None
    reg = Registry(search="keyword", credentials=store)
    try:
        for fn in (bearer_sync, header_sync, header_run, header_async, header_get_sync):
            reg.add(fn)
        fix = (
            "ctx.credentials.get('weather-api', 'api_key') was not awaited: it gives an "
            "awaitable, not the value. In an async tool write `await ctx.credentials.get("
            "'weather-api', 'api_key')`; in a sync tool call `ctx.credentials.get_sync("
            "'weather-api', 'api_key')`."
        )
        for name in ("bearer_sync", "header_sync"):
            result = reg.call_sync(name, {})
            assert result.is_error and result.error_type == "CredentialNotAwaited", result
            assert result.error == fix and "coroutine" not in (result.error or "")
        for name in ("header_run", "header_async", "header_get_sync"):
            result = reg.call_sync(name, {})
            if with_store:
                assert result.ok and result.value == f"Bearer {CANARY}", result.error
            else:  # no store: awaited, it is missing as before
                assert result.error_type == "MissingCredential", result
    finally:
        reg.close()


async def test_a_credential_awaited_twice_is_refused_as_a_coroutine_would_be(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second ``await`` of one ``get(...)`` must not quietly give ``None`` (which would
    end up as "Bearer None" in a header): a coroutine refuses to be awaited again."""
    monkeypatch.setenv(env_name("weather-api", "api_key"), CANARY)
    pending = CredentialStore(home=home).view().get("weather-api")
    assert await pending == CANARY
    with pytest.raises(RuntimeError, match="awaited already"):
        await pending
