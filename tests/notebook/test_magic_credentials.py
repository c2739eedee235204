"""``%tool credentials``: prompted with getpass, listed without values, deleted."""

from __future__ import annotations

import getpass
import stat
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from nexus_jupyter import Registry
from nexus_jupyter.core.policy.credentials import CredentialStore, count_secret

CANARY = "magic-canary-Vb81Lm-secret"


@pytest.fixture
def store(registry: Registry, tmp_path: Path) -> CredentialStore:
    registry.credentials = CredentialStore(home=tmp_path / "home")
    return registry.credentials


def run(shell: InteractiveShell, line: str) -> tuple[object, str]:
    with capture_output() as out:
        result = shell.run_line_magic("tool", line)
    return result, out.stdout


def test_set_list_delete(
    shell: InteractiveShell, store: CredentialStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompts: list[str] = []

    def fake_getpass(prompt: str = "") -> str:
        prompts.append(prompt)
        return CANARY

    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    _, said = run(shell, "credentials set weather-api api_key --provider file")
    assert prompts == ["Value for weather-api/api_key (not shown): "]
    assert said.strip() == "Stored weather-api/api_key in file."
    assert store.lookup("weather-api", "api_key") == CANARY
    path = tmp_path / "home" / "credentials.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    listing, _ = run(shell, "credentials list")
    shown = repr(listing) + listing._repr_html_()  # type: ignore[attr-defined]
    assert "weather-api/api_key  (file)" in repr(listing) and ">weather-api</td>" in shown
    assert shell.history_manager is not None
    history = "\n".join(str(h) for h in shell.history_manager.input_hist_raw)
    for text in (said, shown, history):
        assert count_secret(text, CANARY) == 0
    _, said = run(shell, "credentials delete weather-api")
    assert said.strip() == "Deleted weather-api." and store.list() == {}


def test_mistakes_are_usage_errors(shell: InteractiveShell, store: CredentialStore) -> None:
    for line, message in [
        ("credentials", "Give an action"),
        ("credentials frob", "Unknown action 'frob'"),
        ("credentials delete nothing", "No stored credential 'nothing'"),
        ("credentials set a b c", "takes SERVICE [KEY]"),
        ("credentials set a --provider vault", "--provider must be"),
    ]:
        result = shell.run_cell(f"%tool {line}")
        assert result.error_in_exec is not None and message in str(result.error_in_exec), line
