"""The package's log lines in the Jupyter server's log.

The registry, its sources and its test monitor log through ``logging.getLogger(__name__)``
(``nexus_jupyter.*``), which the server does not configure: a warning reached
``logging.lastResort`` and the server's terminal as a bare line (``tool hello: its test
broke ...``), with no level, time or origin. While the extension runs, those lines go through
the server's own logger (``serverapp.log``), prefixed ``nexus_jupyter:`` as the extension's
own lines are.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

__all__ = ["PREFIX", "log_through_server"]

PREFIX = "nexus_jupyter: "


class _ToServerLog(logging.Handler):
    def __init__(self, target: logging.Logger) -> None:
        super().__init__(logging.INFO)
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: still say what was logged
            message = f"{record.msg!r} {record.args!r}"
        if not message.startswith(PREFIX):
            message = PREFIX + message
        if record.stack_info:  # logged with stack_info=True: the stack, as a formatter adds it
            message += "\n" + record.stack_info
        self.target.log(record.levelno, "%s", message, exc_info=record.exc_info)


def log_through_server(server_log: logging.Logger) -> Callable[[], None]:
    """Send the package's log lines that its loggers let through (warnings and above,
    unless configured) to ``server_log``; returns what stops it (the server's shutdown).

    One forwarder at a time: a second load of the extension replaces the first's. While it
    forwards, the lines do not also propagate to the root logger (configured root logging
    would print each twice); stopping restores propagation."""
    package = logging.getLogger("nexus_jupyter")
    for old in [h for h in package.handlers if isinstance(h, _ToServerLog)]:
        package.removeHandler(old)
    handler = _ToServerLog(server_log)
    package.addHandler(handler)  # the level stays as configured (WARNING unless set)
    package.propagate = False

    def stop() -> None:
        package.removeHandler(handler)
        if not any(isinstance(h, _ToServerLog) for h in package.handlers):
            package.propagate = True

    return stop
