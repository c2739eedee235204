"""A tool test that a save broke is told where the user looks (its test status: %tool list,
info, test, the sidebar), not logged to stderr, which a kernel shows under an old cell."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from waiting import wait_for_test_state  # tests/ is on sys.path

from nexus_jupyter import Registry
from nexus_jupyter.core.tooltests.monitor import SHOWN_AS_STATUS
from nexus_jupyter.notebook import extension, kernel_logging

ADD = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a {op} b
'''


def _break_and_fix(reg: Registry, folder: Path) -> None:
    (folder / "add.py").write_text(ADD.format(op="-"))
    wait_for_test_state(reg, "add", {"failed"}, time.monotonic() + 10)
    assert reg.test_status("add").broke is not None
    (folder / "add.py").write_text(ADD.format(op="+"))
    wait_for_test_state(reg, "add", {"passed"}, time.monotonic() + 10)


def test_a_broken_test_is_no_stray_log_line_in_the_kernel(
    shell: InteractiveShell, registry: Registry, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "add.py").write_text(ADD.format(op="+"))
    (folder / "add.tests.yaml").write_text("- tool: add\n  arguments: {a: 1, b: 2}\n  expect: 3\n")
    with Registry(search="keyword") as reg:
        assert reg.watch(folder).wait_ready(10)
        reg.tests.watch()
        wait_for_test_state(reg, "add", {"passed"}, time.monotonic() + 15)
        caplog.set_level(logging.WARNING)

        _break_and_fix(reg, folder)  # the extension is loaded: the status says it, no line
        assert not [r for r in caplog.records if "its test broke" in r.getMessage()]

        extension.unload(shell)  # outside a kernel (serve, the server) the line is logged
        try:
            _break_and_fix(reg, folder)
        finally:
            extension.load(shell)
        [line] = [r for r in caplog.records if "its test broke" in r.getMessage()]
        assert getattr(line, SHOWN_AS_STATUS) is True
        assert kernel_logging.SHOWN_AS_STATUS == SHOWN_AS_STATUS  # one mark, spelt twice
        assert line.getMessage().startswith("tool add: its test broke after a change: failed: ")
