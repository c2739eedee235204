"""Where a tool's test cases live: the :class:`CaseStore` protocol.

Storage belongs to whoever owns the tool's code, so stores live above the core: a folder of
tool files keeps ``<file stem>.tests.yaml`` beside each file
(:mod:`nexus_jupyter.sources.tool_tests`), a notebook keeps its tools' cases in its metadata
(:mod:`nexus_jupyter.notebook.test_cases`), a live kernel's tools are asked of the kernel
(:mod:`nexus_jupyter.serve.jupyter_kernels`), and tools of other sources (built-ins, MCP
servers, declared tools) get ``<tools folder>/<tool name>.tests.yaml``.

:class:`~nexus_jupyter.core.tooltests.monitor.ToolTests` asks, for a tool, first its source
(when the source object has these methods), then every added store in order; the first
answer that is not ``None`` is the tool's ("not mine" is ``None``, as in FastMCP's
providers). A store that cannot read its cases raises
:class:`~nexus_jupyter.core.errors.TestCaseError`; the tool's test status then shows why.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..tools.spec import ToolSpec
    from .cases import TestCase
    from .outcomes import TestStatus

__all__ = ["CaseFiles", "CaseStore", "CasesChanged", "MirroredStatus", "WatchedCases"]

#: Told the names of the tools whose cases changed (``None``: any tool's may have).
CasesChanged = Callable[[Iterable[str] | None], object]


@runtime_checkable
class CaseStore(Protocol):
    """Reads and adds the test cases of the tools it owns."""

    def cases_for(self, spec: ToolSpec) -> list[TestCase] | None:
        """The cases of the tool ``spec`` describes, in order; ``None`` when not mine."""
        ...

    def save_case(self, spec: ToolSpec, case: TestCase) -> str | None:
        """Add ``case`` to the tool's cases; returns where it was written (a path, a
        notebook), ``None`` when not mine."""
        ...


@runtime_checkable
class CaseFiles(Protocol):
    """A store that can list its case files and read each whole, whatever tools its cases
    call. A run of every tool's cases reads them so that a case calling a tool that does not
    exist (or none at all) is reported, and a file that cannot be read is reported once."""

    def case_files(self) -> list[str]:
        """The paths of the case files it keeps."""
        ...

    def read_cases(self, file: str) -> list[TestCase]:
        """Every case of ``file``, invalid ones included (:meth:`TestCase.read`); raises
        :class:`~nexus_jupyter.core.errors.TestCaseError` when the file cannot be read."""
        ...


@runtime_checkable
class WatchedCases(Protocol):
    """A store that notices its cases being edited (a hand-edited ``.tests.yaml``)."""

    def watch_cases(self, changed: CasesChanged) -> Callable[[], None]:
        """Call ``changed`` after every edit until the returned function is called."""
        ...


@runtime_checkable
class MirroredStatus(Protocol):
    """A source whose tools are tested where they run (a live kernel runs its notebook
    tools' cases itself): their status is read from there, never re-run here."""

    def test_status(self, spec: ToolSpec) -> TestStatus | None: ...
