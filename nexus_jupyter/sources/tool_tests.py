"""Test cases beside tool files: ``<tool file stem>.tests.yaml``.

``tools/dynamic/add.py`` keeps its tools' cases in ``tools/dynamic/add.tests.yaml``, a YAML
list a person can also write (see :mod:`nexus_jupyter.core.tooltests.cases` for a case's
keys). Tools that come from no file (built-ins, MCP servers, declared tools) keep theirs in
``<tools folder>/<tool name>.tests.yaml`` (:class:`ProjectCases`).

- Reading parses the file once per version (size and mtime); a malformed file or case is a
  :class:`~nexus_jupyter.core.errors.TestCaseError` naming the file, the case, its line and
  the key.
- Saving appends one case and keeps everything else of the file as it was (comments,
  order, quoting: a round-trip YAML writer), then replaces the file atomically.
- :func:`watch_case_files` follows hand edits of ``*.tests.yaml`` files in a folder, so a
  live registry re-runs the cases that changed.
"""

from __future__ import annotations

import io
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml

from ..core.errors import TestCaseError
from ..core.tools.spec import ToolSpec
from ..core.tooltests.cases import TestCase
from ..core.tooltests.stores import CasesChanged
from .tool_files import new_file_mode

__all__ = [
    "CASE_SUFFIX",
    "ProjectCases",
    "append_case",
    "case_file_for",
    "case_files_under",
    "read_case_file",
    "watch_case_files",
]

log = logging.getLogger(__name__)

CASE_SUFFIX = ".tests.yaml"
_HEADER = (
    "# Test cases of the tools in {name}: each entry calls a tool with arguments and says what\n"
    "# it must give (expect, expect_error, expect_subset or check). `nexus-tools test` runs\n"
    "# them, as do `%tool test` and `pytest --nexus-tools`; a saved tool file re-runs them.\n"
)
_cache: dict[Path, tuple[tuple[int, int], list[TestCase]]] = {}
_cache_lock = threading.Lock()


def case_file_for(tool_file: str | Path) -> Path:
    """``tools/add.py`` -> ``tools/add.tests.yaml``."""
    path = Path(tool_file)
    return path.with_name(path.stem + CASE_SUFFIX)


def case_files_under(folder: str | Path, *, recursive: bool = True) -> list[Path]:
    """Every ``*.tests.yaml`` under ``folder`` (hidden folders skipped), sorted."""
    root = Path(folder)
    if not root.is_dir():
        return []
    found = root.rglob(f"*{CASE_SUFFIX}") if recursive else root.glob(f"*{CASE_SUFFIX}")
    return sorted(
        p for p in found if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def read_case_file(path: str | Path, *, strict: bool = True) -> list[TestCase]:
    """The cases of a case file (``[]`` when it does not exist or is empty). Raises
    :class:`TestCaseError` for a file that is not a YAML list of cases, and (``strict``) for
    its first malformed case; with ``strict=False`` a malformed case comes back invalid
    (:meth:`TestCase.read`) and the others are read."""
    cases = _read_case_file(Path(path))
    invalid = next((c.error for c in cases if c.problem), None) if strict else None
    if invalid is not None:
        raise invalid
    return cases


def _read_case_file(file: Path) -> list[TestCase]:
    try:
        stat = file.stat()
    except FileNotFoundError:
        return []
    key = (stat.st_size, stat.st_mtime_ns)
    with _cache_lock:
        cached = _cache.get(file)
    if cached is not None and cached[0] == key:
        return list(cached[1])
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TestCaseError(f"{file}: cannot read the test cases: {exc}") from None
    cases = [
        case.located(case.where, str(file), case.line) for case in parse_cases(text, file.name)
    ]
    with _cache_lock:
        _cache[file] = (key, cases)
    return list(cases)


def parse_cases(text: str, name: str) -> list[TestCase]:
    """The cases of a case file's ``text`` (``name`` is used in messages), a malformed one
    as an invalid case (its ``problem`` says what is wrong)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc
        raise TestCaseError(f"{name}: not valid YAML{where}: {problem}.") from None
    if data is None:
        return []
    if not isinstance(data, list):
        raise TestCaseError(
            f"{name}: a case file is a YAML list (each entry starting with `- tool: ...`), "
            f"got a {type(data).__name__}."
        )
    lines = _item_lines(text)
    cases = []
    for i, item in enumerate(data):
        line = lines[i] if i < len(lines) else 0
        where = f"{name} case {i + 1}" + (f" (line {line})" if line else "")
        cases.append(TestCase.read(item, where=where).located(where, name, line))
    return cases


def _item_lines(text: str) -> list[int]:
    """The line (1-based) where each entry of the top-level list starts."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if not isinstance(node, yaml.SequenceNode):
        return []
    return [item.start_mark.line + 1 for item in node.value]


def _round_trip() -> Any:
    from ruamel.yaml import YAML

    writer = YAML()
    writer.indent(mapping=2, sequence=2, offset=0)  # `- tool: add` / `  arguments: ...`
    writer.width = 100
    writer.preserve_quotes = True
    return writer


def _yaml_value(value: Any, *, top: bool = False) -> Any:
    """``value`` for the round-trip writer: short mappings and lists in flow style
    (``{a: 1, b: 2}``), as a person writes them."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        out: Any = CommentedMap((k, _yaml_value(v)) for k, v in value.items())
    elif isinstance(value, list | tuple):
        out = CommentedSeq(_yaml_value(v) for v in value)
    else:
        return value
    if top or len(repr(value)) <= 80:
        out.fa.set_flow_style()
    return out


def _entry_text(case: TestCase) -> str:
    """``case`` as a one-entry YAML list, in the style people write by hand."""
    from ruamel.yaml.comments import CommentedMap

    entry = CommentedMap()
    for key, value in case.to_dict().items():
        entry[key] = _yaml_value(value, top=key == "arguments")
    buffer = io.StringIO()
    _round_trip().dump([entry], buffer)
    return buffer.getvalue()


def _appendable(text: str) -> bool:
    """Whether ``text`` ends in a top-level block list that a new entry can follow as text."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return False
    return (
        isinstance(node, yaml.SequenceNode) and not node.flow_style and node.start_mark.column == 0
    )


def append_case(path: str | Path, case: TestCase, *, title: str | None = None) -> Path:
    """Add ``case`` at the end of the case file ``path`` (made with a short header when it
    is new). What is already in the file stays byte for byte; a file in another shape (a
    flow list ``[...]``) is rewritten by a round-trip writer, which keeps its comments."""
    file = Path(path)
    text = file.read_text(encoding="utf-8") if file.exists() else ""
    entry = _entry_text(case)
    invalid = next((c.error for c in parse_cases(text, file.name) if c.problem), None)
    if invalid is not None:
        raise invalid  # never add to a file that does not read
    if not text.strip() or yaml.safe_load(text) is None:
        header = _HEADER.format(name=title or file.name.removesuffix(CASE_SUFFIX) + ".py")
        new = (text.rstrip() + "\n" if text.strip() else header) + entry
    elif _appendable(text):
        new = text + ("" if text.endswith("\n") else "\n") + entry
    else:
        writer = _round_trip()
        data = writer.load(text)
        data.append(writer.load(entry)[0])
        buffer = io.StringIO()
        writer.dump(data, buffer)
        new = buffer.getvalue()
    _write_atomically(file, new)
    return file


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        # an existing file keeps its mode; a new one is made as a tool file is (not 0600)
        os.chmod(temporary, path.stat().st_mode & 0o777 if path.exists() else new_file_mode())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def cases_of_tool_file(spec: ToolSpec) -> list[TestCase] | None:
    """The cases of a tool defined by a file (its ``origin``), ``None`` for other tools."""
    if spec.source_kind != "directory" or not spec.origin:
        return None
    cases = read_case_file(case_file_for(spec.origin), strict=False)
    return [c for c in cases if c.tool == spec.name]


def save_case_of_tool_file(spec: ToolSpec, case: TestCase) -> str | None:
    if spec.source_kind != "directory" or not spec.origin:
        return None
    return str(append_case(case_file_for(spec.origin), case, title=Path(spec.origin).name))


class ProjectCases:
    """Cases of tools that come from no file or notebook (built-ins, MCP servers, declared
    tools, toolsets): ``<folder>/<tool name>.tests.yaml``, in the project's tools folder."""

    _OTHERS = frozenset({"notebook", "kernel", "directory"})

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser().resolve()

    def __repr__(self) -> str:
        return f"ProjectCases({str(self.folder)!r})"

    def path_for(self, name: str) -> Path:
        return self.folder / f"{name}{CASE_SUFFIX}"

    def cases_for(self, spec: ToolSpec) -> list[TestCase] | None:
        if spec.source_kind in self._OTHERS:
            return None
        cases = read_case_file(self.path_for(spec.name), strict=False)
        return [c for c in cases if c.tool == spec.name]

    def save_case(self, spec: ToolSpec, case: TestCase) -> str | None:
        if spec.source_kind in self._OTHERS:
            return None
        return str(append_case(self.path_for(spec.name), case, title=f"tool {spec.name!r}"))

    def watch_cases(self, changed: CasesChanged) -> Callable[[], None]:
        return watch_case_files(self.folder, changed)

    def case_files(self) -> list[str]:
        """Every case file in the tools folder (beside tool files too): a run of every
        tool's cases reads them whole (see :class:`~nexus_jupyter.core.tooltests.stores.CaseFiles`)."""
        return [str(path) for path in case_files_under(self.folder)]

    def read_cases(self, file: str) -> list[TestCase]:
        return read_case_file(file, strict=False)


def watch_case_files(folder: str | Path, changed: CasesChanged) -> Callable[[], None]:
    """Call ``changed(None)`` after ``*.tests.yaml`` files under ``folder`` change (on a
    daemon thread); returns the function that stops watching."""
    root = Path(folder)
    stop = threading.Event()

    def is_case_file(_change: Any, path: str) -> bool:
        return path.endswith(CASE_SUFFIX) and not os.path.basename(path).startswith(".")

    def run() -> None:
        import watchfiles

        while not stop.is_set() and not root.is_dir():
            stop.wait(1.0)  # the folder may be made later
        if stop.is_set():
            return
        try:
            for _changes in watchfiles.watch(
                root, watch_filter=is_case_file, stop_event=stop, debounce=200, step=20
            ):
                try:
                    changed(None)
                except Exception:
                    log.exception("reacting to edited test cases in %s failed", root)
        except Exception:
            log.exception("watching the test cases in %s stopped", root)

    thread = threading.Thread(target=run, name=f"nexus-cases:{root.name}", daemon=True)
    thread.start()

    def stop_watching() -> None:
        stop.set()

    return stop_watching


def tools_in_case_files(paths: Iterable[Path]) -> set[str]:
    """The tools the cases of ``paths`` call (unreadable files are skipped)."""
    names: set[str] = set()
    for path in paths:
        try:
            names.update(c.tool for c in read_case_file(path))
        except TestCaseError:
            continue
    return names
