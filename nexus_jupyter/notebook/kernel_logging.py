"""What a kernel does with the log lines of the package.

A kernel has no log of its own that a user reads: a warning with no handler goes to
``logging.lastResort``, which writes to ``sys.stderr`` when it is emitted, and in ipykernel
that is the output of whichever cell last ran, or started the thread that logs (an old
``%tool info`` cell, say). A line that a tool's test status already says (``tool hello: its
test broke after a change``, shown by ``%tool list | info | test`` and the sidebar's Tests)
is dropped in the kernel; the Jupyter server logs it (see
:mod:`nexus_jupyter.serve.server_log`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

__all__ = ["drop_lines_shown_as_status"]

# monitor.SHOWN_AS_STATUS, spelt out: %load_ext must not import the registry (and pydantic)
SHOWN_AS_STATUS = "nexus_shown_as_status"

_LOGGERS = ("nexus_jupyter.core.tooltests.monitor",)


class _ShownAsStatus(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, SHOWN_AS_STATUS, False)


_FILTER = _ShownAsStatus()


def drop_lines_shown_as_status() -> Callable[[], None]:
    """Drop the package's log lines that a test status shows (see the module docstring);
    returns what undoes it (``%unload_ext``)."""
    loggers = [logging.getLogger(name) for name in _LOGGERS]
    for logger in loggers:
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)

    def undo() -> None:
        for logger in loggers:
            logger.removeFilter(_FILTER)

    return undo
