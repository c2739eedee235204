"""One human-readable line per call (``@tool(summary=...)``), through the call pipeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nexus_jupyter import Registry, tool
from nexus_jupyter.core.policy.credentials import CredentialStore


@tool(summary="Calculating: {a} {operation} {b}")
def calc(a: float, b: float, operation: str = "add") -> float:
    """Add or multiply."""
    return a + b if operation == "add" else a * b


@tool(summary=lambda who: f"Greeting {who.title()}")
def greet(who: str, loud: bool = False) -> str:
    """Greet someone."""
    return f"hi {who}" + ("!" if loud else "")


def _everything(**arguments: Any) -> str:
    return "Sending " + ", ".join(f"{k}={v}" for k, v in sorted(arguments.items()))


@tool(summary=_everything)
def send(to: str, retries: int = 2) -> str:
    """Send a message."""
    return to


@tool
def fetch(url: str, token: str = "") -> str:
    """Fetch a URL."""
    return url


def _registry(tmp_path: Path) -> Registry:
    store = CredentialStore(home=tmp_path / "home")
    store.set("svc", "token", "s3cr3t-value-99", provider="file")
    reg = Registry(search="keyword", credentials=store)
    for fn in (calc, greet, send, fetch):
        reg.add(fn)
    return reg


def test_a_template_fills_in_the_defaults_the_call_left_out(tmp_path: Path) -> None:
    with _registry(tmp_path) as reg:
        assert reg.call_sync("calc", {"a": 2, "b": 3}).summary == "Calculating: 2 add 3"
        assert reg.call_sync("calc", {"a": 2, "b": 3, "operation": "mul"}).summary == (
            "Calculating: 2 mul 3"
        )


def test_a_function_gets_the_arguments_it_takes(tmp_path: Path) -> None:
    with _registry(tmp_path) as reg:
        assert reg.call_sync("greet", {"who": "ann", "loud": True}).summary == "Greeting Ann"
        assert reg.call_sync("send", {"to": "bo"}).summary == "Sending retries=2, to=bo"


def test_the_default_names_the_arguments_given_with_secrets_masked(tmp_path: Path) -> None:
    with _registry(tmp_path) as reg:
        result = reg.call_sync("fetch", {"url": "https://e.org", "token": "s3cr3t-value-99"})
        assert result.summary == "fetch(url='https://e.org', token='***')"


def test_the_built_in_tools_say_what_each_call_does(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\n")
    reg = Registry.default(
        root=tmp_path, config={"audit": False}, watch=False, mcp=False, search="keyword"
    )
    with reg:
        calls = {
            "read": ({"path": "notes.txt"}, "Reading notes.txt"),
            "ls": ({}, "Listing ."),
            "glob": ({"pattern": "*.txt"}, "Finding files matching *.txt in ."),
            "grep": ({"pattern": "on+"}, "Searching . for 'on+'"),
            "bash": ({"command": "echo hi"}, "Running: echo hi"),
            "tool_search": ({"query": "files"}, "Searching the tools for 'files'"),
        }
        for name, (arguments, line) in calls.items():
            result = reg.call_sync(name, arguments, approved=True)
            assert (result.ok, result.summary) == (True, line), (name, result.error)
