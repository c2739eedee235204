"""The package's log lines through the Jupyter server's log (serve.server_log): once each,
however often the extension loads, not again through the root logger, with their stack."""

from __future__ import annotations

import logging

import pytest

from nexus_jupyter.serve.server_log import log_through_server


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def server_log() -> tuple[logging.Logger, Lines]:
    log = logging.getLogger("test_server_log.ServerApp")
    log.propagate = False
    lines = Lines()
    log.addHandler(lines)
    return log, lines


def test_each_line_reaches_the_server_log_once_and_not_the_root_log(server_log) -> None:
    log, lines = server_log
    root_lines = Lines()
    logging.getLogger().addHandler(root_lines)  # root logging configured
    stops = [log_through_server(log), log_through_server(log)]  # the extension loaded twice
    try:
        logging.getLogger("nexus_jupyter.sources.x").warning("tool hello broke", stack_info=True)
    finally:
        for stop in stops:
            stop()
        logging.getLogger().removeHandler(root_lines)
    assert len(lines.lines) == 1 and lines.lines[0].startswith("nexus_jupyter: tool hello broke")
    assert "Stack (most recent call last)" in lines.lines[0]
    assert [m for m in root_lines.lines if "tool hello broke" in m] == []
    assert logging.getLogger("nexus_jupyter").propagate is True  # stopped: as before
