"""The pytest plugin: ``pytest --nexus-tools`` runs the tools' saved test cases in CI.

Installed with the package (entry point ``pytest11``: ``nexus_tools``). Without
``--nexus-tools`` it only adds its options and collects nothing, so a project's own suite is
untouched. With it, every ``*.tests.yaml`` under the tools folder of ``nex.yaml`` (default
``tools/dynamic``, relative to ``--nexus-tools-root``, default pytest's rootdir), under each
``--nexus-tools-dir=DIR`` (write it with ``=``: pytest reads its ini file before plugins, and
would take a separate ``DIR`` for a test path) and under the ini option ``nexus_tools_dirs`` is
collected as well as the usual tests; each case is one test item named after its file and
case::

    $ pytest --nexus-tools -q
    tools/dynamic/add.tests.yaml::case 2 (line 4): add(a=1, b=2) FAILED
    ...
    E   $: expected 4, got 3

A case runs through ``Registry.default()`` of the root (the tools folder loaded once, MCP
servers connected), the same call path as ``nexus-tools test``: a failed or errored case
fails its item with the first difference; a case that needs an approval or a credential is
skipped with the reason (``--nexus-tools-yes`` approves). A malformed case is an item of its
own that fails with what is wrong (file, case, line and key) while the file's other cases
run; a file that cannot be read at all (not YAML, not a list of cases) is a collection error
naming it. ``pytest --junitxml`` reports them like any other test.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from .core.tooltests.cases import TestCase
    from .core.tooltests.outcomes import CaseOutcome

__all__ = ["CaseFile", "CaseItem"]

_REGISTRY = pytest.StashKey[Any]()
_FOLDERS = pytest.StashKey[list[Path]]()
_SUFFIX = ".tests.yaml"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nexus-tools", "nexus_jupyter tool tests")
    group.addoption(
        "--nexus-tools",
        action="store_true",
        default=False,
        help="also run the tools' saved test cases (*.tests.yaml under the tools folders)",
    )
    group.addoption(
        "--nexus-tools-root",
        default=None,
        metavar="DIR",
        help="workspace whose nex.yaml and tools folder to use (default: the rootdir)",
    )
    group.addoption(
        "--nexus-tools-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="another folder of *.tests.yaml to collect (may repeat)",
    )
    parser.addini(
        "nexus_tools_dirs",
        type="paths",
        default=[],
        help="more folders of *.tests.yaml to collect with --nexus-tools",
    )
    group.addoption(
        "--nexus-tools-yes",
        action="store_true",
        default=False,
        help="run cases whose tools ask for approval",
    )


def _enabled(config: pytest.Config) -> bool:
    return bool(config.getoption("nexus_tools", False))


def _root(config: pytest.Config) -> Path:
    given = config.getoption("nexus_tools_root")
    return Path(given).resolve() if given else Path(config.rootpath).resolve()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "nexus_tools: a saved tool test case (--nexus-tools)")
    if not _enabled(config):
        return
    from .app import resolve_settings
    from .core.config.paths import resolve_tools_dir

    root = _root(config)
    settings = resolve_settings(root, None)
    folders = [resolve_tools_dir(root, settings.tools_dir)]
    folders += [Path(d).resolve() for d in config.getoption("nexus_tools_dir")]
    folders += [Path(d).resolve() for d in config.getini("nexus_tools_dirs")]
    config.stash[_FOLDERS] = folders
    # Collect the tools folders too, whatever testpaths or paths were given.
    for folder in folders:
        if folder.is_dir() and not any(_inside(folder, Path(a)) for a in config.args):
            config.args.append(str(folder))


def _inside(path: Path, arg: Path) -> bool:
    try:
        target = arg.resolve()
    except OSError:
        return False
    return path == target or target in path.parents


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    config = parent.config
    if not _enabled(config) or not file_path.name.endswith(_SUFFIX):
        return None
    folders = config.stash.get(_FOLDERS, [])
    if not any(folder == file_path.parent or folder in file_path.parents for folder in folders):
        return None
    return CaseFile.from_parent(parent, path=file_path)


def pytest_unconfigure(config: pytest.Config) -> None:
    opened = config.stash.get(_REGISTRY, None)
    if opened is not None:
        opened.close()


class _OpenRegistry:
    """The run's registry and what closes it."""

    def __init__(self, root: Path) -> None:
        from .cli.commands import one_shot_registry

        self._stack = contextlib.ExitStack()
        self.registry = self._stack.enter_context(one_shot_registry(root))

    def close(self) -> None:
        self._stack.close()


def _registry(config: pytest.Config) -> Any:
    """The registry every case of this run calls through (made at the first case)."""
    opened = config.stash.get(_REGISTRY, None)
    if opened is None:
        opened = config.stash[_REGISTRY] = _OpenRegistry(_root(config))
    return opened.registry


class CaseFileError(Exception):
    """A case file that cannot be read (reported as a collection error, message only)."""


class CaseFile(pytest.File):
    """One ``*.tests.yaml``: an item per case, a malformed one included (it fails)."""

    def collect(self) -> Iterator[CaseItem]:
        from .core.errors import TestCaseError
        from .sources.tool_tests import read_case_file

        try:
            cases = read_case_file(self.path, strict=False)
        except TestCaseError as exc:  # the file as a whole: no case can be told apart
            raise CaseFileError(str(exc)) from None
        for case in cases:
            name = case.label.split(" case ", 1)[1] if " case " in case.label else case.label
            yield CaseItem.from_parent(self, name=f"case {name}", case=case)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, CaseFileError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class CaseFailed(Exception):
    """A case that failed or errored (its outcome says what differed)."""

    def __init__(self, outcome: CaseOutcome) -> None:
        super().__init__(outcome.describe())
        self.outcome = outcome


class CaseInvalid(Exception):
    """A case that cannot be run as written (the message says where and what is wrong)."""


class CaseItem(pytest.Item):
    """One saved call of a tool and its expectation."""

    def __init__(self, *, case: TestCase, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.add_marker(pytest.mark.nexus_tools)

    def runtest(self) -> None:
        from .core.tools.context import CLI_CALLER
        from .core.tooltests.runner import request_for_tests, run_case_sync

        if self.case.error is not None:  # never called: the registry need not even open
            raise CaseInvalid(str(self.case.error))
        registry = _registry(self.config)
        outcome = run_case_sync(
            registry,
            self.case,
            approved=bool(self.config.getoption("nexus_tools_yes")),
            request=request_for_tests(CLI_CALLER),
        )
        if outcome.state == "skipped":
            pytest.skip(outcome.message)
        if outcome.state != "passed":
            raise CaseFailed(outcome)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        if isinstance(excinfo.value, CaseFailed):
            outcome = excinfo.value.outcome
            return f"{outcome.state}: {outcome.case.label}\n{outcome.message}"
        if isinstance(excinfo.value, CaseInvalid):
            return f"invalid case: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.case.line - 1 if self.case.line else None
        return self.path, line, f"{self.case.tool}: {self.name}"
