"""Tool files import helper modules beside them; editing a helper reloads its users (a real
folder and the real watcher)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from waiting import wait_until  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry

GREET = '''from nexus_jupyter import tool
import helpers


@tool
def greet(name: str) -> str:
    """Greet someone."""
    return helpers.decorate(name)
'''

SHOUT = '''from nexus_jupyter import tool
from _shared.text import loud


@tool
def shout(text: str) -> str:
    """Shout a text."""
    return loud(text)
'''

WHISPER = '''from nexus_jupyter import tool
from _shared.text import loud


@tool
def whisper(text: str) -> str:
    """Whisper, using the same helper."""
    return loud(text).lower()
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "tools"
    (root / "_shared").mkdir(parents=True)
    (root / "helpers.py").write_text("def decorate(name):\n    return f'Hello, {name}!'\n")
    (root / "_shared" / "text.py").write_text("def loud(text):\n    return text.upper() + '!'\n")
    (root / "greet.py").write_text(GREET)
    (root / "shout.py").write_text(SHOUT)
    (root / "whisper.py").write_text(WHISPER)
    return root


@pytest.fixture(params=["thread", "process"])
def reg(folder: Path, request: pytest.FixtureRequest) -> Iterator[Registry]:
    """The folder's files in this process, and in worker processes (the servers' default)."""
    registry = Registry(search="keyword")
    source = registry.watch(folder, isolation=request.param)
    assert source.wait_ready()
    yield registry
    registry.close()


def test_tool_files_import_sibling_and_shared_helpers(reg: Registry) -> None:
    assert reg.call_sync("greet", {"name": "Ada"}).value == "Hello, Ada!"
    assert reg.call_sync("shout", {"text": "hi"}).value == "HI!"
    assert reg.call_sync("whisper", {"text": "Hi"}).value == "hi!"
    assert not any(name.split(".")[0] in ("helpers", "_shared") for name in sys.modules)


def test_editing_a_helper_reloads_every_file_that_imports_it(reg: Registry, folder: Path) -> None:
    before = {n: reg.get(n).spec.version for n in ("greet", "shout", "whisper")}
    (folder / "_shared" / "text.py").write_text(
        "def loud(text):\n    return text.upper() + '!!!'\n"
    )
    wait_until(reg, lambda: reg.call_sync("shout", {"text": "a"}).value == "A!!!")
    assert reg.call_sync("whisper", {"text": "a"}).value == "a!!!"
    assert reg.get("shout").spec.version != before["shout"]
    assert reg.get("greet").spec.version == before["greet"]  # does not import it
    (folder / "helpers.py").write_text("def decorate(name):\n    return f'Hi {name}'\n")
    wait_until(reg, lambda: reg.call_sync("greet", {"name": "Bo"}).value == "Hi Bo")


def test_a_broken_helper_is_the_error_of_the_files_that_import_it(
    reg: Registry, folder: Path
) -> None:
    (folder / "helpers.py").write_text("def decorate(name):\n    return (\n")
    state = reg.watch(folder)
    wait_until(reg, lambda: "greet.py" in state.errors)
    assert "helpers.py" in state.errors["greet.py"] or "SyntaxError" in state.errors["greet.py"]
    assert reg.call_sync("greet", {"name": "x"}).value == "Hello, x!"  # last good version
