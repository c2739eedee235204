"""Which failures carry a traceback worth showing: those raised through a tool's own code."""

from __future__ import annotations

import json
from collections.abc import Callable

from nexus_jupyter.core.tools.tool_traceback import has_tool_frames


def _raised(fn: Callable[[], object]) -> BaseException:
    try:
        fn()
    except Exception as exc:  # the exception is what is looked at
        return exc
    raise AssertionError("it did not raise")


def test_a_failure_in_a_tools_own_code_has_frames_worth_showing() -> None:
    def tool_code() -> None:  # this file stands for a tool file: it is not the package's
        raise ValueError("the tool's own bug")

    assert has_tool_frames(_raised(tool_code))


def test_frames_of_the_standard_library_alone_are_not_a_tools() -> None:
    exc = _raised(lambda: json.loads("{not json"))
    assert exc.__traceback__ is not None
    exc.__traceback__ = exc.__traceback__.tb_next.tb_next  # keep json's frames only
    assert exc.__traceback__ is not None
    assert not has_tool_frames(exc)
