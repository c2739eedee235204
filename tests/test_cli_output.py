"""Where ``nexus-tools`` writes (:mod:`nexus_jupyter.cli.output`): the masking streams a
command puts in ``sys.stdout``/``sys.stderr`` outlive it a little, never without bound."""

from __future__ import annotations

import sys

import pytest

from nexus_jupyter.cli import output


def _mask(text: str) -> str:
    return text.replace("hunter2", "*******")


def test_a_process_that_runs_many_commands_keeps_only_the_last_streams(
    capsys: pytest.CaptureFixture[str],
) -> None:
    used = []
    for i in range(300):  # as a notebook or a test suite calling main() over and over
        with output.masked_output(_mask):
            used.append(sys.stdout)
            print(f"run {i}: the password is hunter2")
    assert "hunter2" not in capsys.readouterr().out  # masked every time
    assert len(output._retired) <= output.RETIRED_KEPT
    # the streams of the latest commands are still held: a print() of a thread left running
    # may be inside one of them
    assert used[-1] in output._retired and used[-2] in output._retired
    assert used[0] not in output._retired
