"""Test cases of a notebook's tools, kept in the notebook's metadata.

A tool defined in a cell keeps its cases with the notebook, under
``metadata["nexus_jupyter"]["tests"]`` (a list shaped like a ``.tests.yaml`` file), so they
travel with the ``.ipynb`` and come back when it is opened again. ``%tool export`` copies a
tool's cases into ``<tools folder>/<tool>.tests.yaml`` beside the file it writes
(:func:`carry_cases_to_file`).

Who writes the metadata:

- In JupyterLab with the nexus sidebar, the notebook's model is the truth (it may hold unsaved
  edits): the kernel opens a comm (target ``nexus_jupyter.tests``); the extension answers with
  the cases the model holds and, whenever a case is saved here, puts the new list into the
  model's metadata, saves the notebook and answers ``saved``. Writing the file behind an open
  editor's back would make JupyterLab ask "the file changed on disk" at the next save.
- A page loaded while the kernel runs (a reload, the notebook opened again) opens a comm of its
  own to the kernel, and from then on that page keeps the cases: the comm of the old page leads
  nowhere. A case sent that no page confirms within :data:`FRONTEND_WAIT_S` (once no cell
  runs) is written into the file by the kernel, so "saved" is never only a claim; unless the
  file changed since the case was sent (a page is saving it, only slowly): the kernel never
  writes behind a page that saves, and after :data:`UNCONFIRMED_ROUNDS` waits it says the
  case is in the open notebook, to be saved there.
- The kernel opens that comm only when a Jupyter server started it for a notebook
  (``JPY_SESSION_NAME`` is set): only there can a page with the extension be. A headless run
  (nbconvert, nbclient, papermill) or VS Code gets no comm, so no "No handler found for comm
  target" warning; the kernel writes the metadata into the ``.ipynb`` itself, at once, where
  it knows the file (VS Code's ``__vsc_ipynb_file__``). The target stays registered either
  way, so a page may still open a comm of its own.
- Under a Jupyter server whose page has no extension (classic Notebook) nobody answers the
  comm; after :data:`FRONTEND_WAIT_S` the kernel writes the metadata into the ``.ipynb``
  itself (``JPY_SESSION_NAME`` is the notebook's path), atomically.
- With no notebook file known (a terminal IPython, nbconvert), cases stay in memory for the session, and
  ``%tool export`` still writes them beside the exported file.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from ..core.errors import TestCaseError
from ..core.tools.spec import ToolSpec
from ..core.tooltests.cases import TestCase

__all__ = [
    "COMM_TARGET",
    "FRONTEND_WAIT_S",
    "UNCONFIRMED_ROUNDS",
    "ChangedMeanwhile",
    "NotebookCases",
    "attach_notebook_cases",
    "carry_cases_to_file",
    "notebook_cases_of",
    "notebook_path",
]

log = logging.getLogger(__name__)

COMM_TARGET = "nexus_jupyter.tests"
METADATA_KEY = "nexus_jupyter"
#: How long a saved case waits for a frontend to take it before the kernel writes the file.
FRONTEND_WAIT_S = 3.0
#: How many times :data:`FRONTEND_WAIT_S` the kernel waits for a page that saved the notebook
#: since the cases went out but has not confirmed them, before saying so (it never writes then).
UNCONFIRMED_ROUNDS = 10


def notebook_path(namespace: Mapping[str, Any] | None = None) -> Path | None:
    """The ``.ipynb`` this kernel runs (``None`` when it cannot be known)."""
    namespace = namespace or {}
    for candidate in (
        namespace.get("__vsc_ipynb_file__"),
        os.environ.get("JPY_SESSION_NAME"),
        namespace.get("__session__"),
    ):
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            path = Path(candidate)
            if path.is_absolute() and path.exists():
                return path
    return None


def read_notebook_cases(path: Path) -> list[dict[str, Any]]:
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("cannot read the test cases in %s: %s", path, exc)
        return []
    tests = ((notebook.get("metadata") or {}).get(METADATA_KEY) or {}).get("tests") or []
    return [dict(t) for t in tests if isinstance(t, Mapping)]


class ChangedMeanwhile(Exception):
    """The notebook file changed while the kernel was about to write it (a page saved it)."""


def file_stamp(path: Path) -> tuple[int, int] | None:
    """The file's modification time (ns) and size, or ``None`` when it is not there."""
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size)


def write_notebook_cases(
    path: Path, cases: list[dict[str, Any]], *, unchanged: tuple[int, int] | None = None
) -> None:
    """Put ``cases`` into the notebook file's metadata (everything else kept), atomically.
    With ``unchanged`` (a :func:`file_stamp`), raise :class:`ChangedMeanwhile` instead of
    writing when the file's stamp differs, checked before reading and again just before
    the file is replaced: another writer's save is never overwritten with older cells."""
    if unchanged is not None and file_stamp(path) != unchanged:
        raise ChangedMeanwhile(str(path))
    notebook = json.loads(path.read_text(encoding="utf-8"))
    metadata = notebook.setdefault("metadata", {})
    metadata.setdefault(METADATA_KEY, {})["tests"] = cases
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(notebook, out, indent=1, ensure_ascii=False)  # nbformat's own layout
            out.write("\n")
        os.chmod(temporary, path.stat().st_mode & 0o777)
        if unchanged is not None and file_stamp(path) != unchanged:
            raise ChangedMeanwhile(str(path))
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class NotebookCases:
    """The cases of the session's notebook tools (a
    :class:`~nexus_jupyter.core.tooltests.stores.CaseStore` for source kind ``notebook``).

    ``problem`` says why the cases saved last are not in the notebook (``None`` once they
    are); :meth:`on_written` tells a caller (the form's "Save as test") when that is settled.
    """

    def __init__(
        self, path: Path | None, *, on_change: Any = None, busy: Callable[[], bool] | None = None
    ) -> None:
        self.path = path
        self._cases: list[dict[str, Any]] = read_notebook_cases(path) if path else []
        self._lock = threading.RLock()
        self._comm: Any = None
        self._frontend = False  # a frontend answered the comm: it keeps the metadata
        self._dirty = False  # saved here, not yet written anywhere (nor confirmed written)
        self._timer: threading.Timer | None = None
        self._sent_over: tuple[int, int] | None = None  # the file's stamp when cases went out
        self._rounds = 0  # waits for a page that saves the file but has not confirmed yet
        self._on_change = on_change  # called with None when the frontend changed the cases
        # A running cell holds the frontend's answer in the kernel's queue: wait for it.
        self._busy = busy or (lambda: False)
        self._waiting: list[Callable[[str | None], Any]] = []
        self.problem: str | None = None

    @property
    def where(self) -> str:
        return (
            f"{self.path.name} (notebook metadata)" if self.path else "this session (no notebook)"
        )

    # -- the store protocol ---------------------------------------------------------------

    def cases_for(self, spec: ToolSpec) -> list[TestCase] | None:
        if spec.source_kind != "notebook":
            return None
        with self._lock:
            raw = list(self._cases)
        label = self.path.name if self.path else "notebook"
        out = []
        for i, data in enumerate(raw):
            if data.get("tool") != spec.name:
                continue
            where = f"{label} metadata case {i + 1}"
            out.append(
                TestCase.from_dict(data, where=where).located(where, str(self.path or ""), 0)
            )
        return out

    def save_case(self, spec: ToolSpec, case: TestCase) -> str | None:
        if spec.source_kind != "notebook":
            return None
        with self._lock:
            self._cases.append(case.to_dict())
            self._persist()
        return self.where

    def raw_cases(self, tool: str) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(c) for c in self._cases if c.get("tool") == tool]

    @property
    def pending(self) -> bool:
        """Cases saved here that no one has written into the notebook yet."""
        return self._dirty and self.path is not None

    def on_written(self, callback: Callable[[str | None], Any]) -> None:
        """Call ``callback(problem)`` once the cases saved so far are in the notebook
        (``problem`` is ``None``) or could not be put there (why); at once if settled."""
        with self._lock:
            if self.pending:
                self._waiting.append(callback)
                return
            problem = self.problem
        callback(problem)

    # -- where the list goes ---------------------------------------------------------------

    def _persist(self) -> None:
        self._dirty = True
        if self._frontend and self._comm is not None:
            # The frontend answers "saved" once the notebook is saved; a page that was
            # reloaded or closed never does, and then the file is written here (_no_answer).
            if self._sent_over is None and self.path is not None:  # the batch's first send
                self._sent_over = file_stamp(self.path)
            self._comm.send({"type": "tests", "tests": self._cases})
            self._wait_for_answer()
        elif self._comm is None:
            self._write_file()
        else:  # nobody answered yet: give a frontend a moment
            self._wait_for_answer()

    def _wait_for_answer(self) -> None:
        if self._timer is None:
            self._timer = threading.Timer(FRONTEND_WAIT_S, self._no_answer)
            self._timer.daemon = True
            self._timer.start()

    def _no_answer(self) -> None:
        with self._lock:
            self._timer = None
            if not self._dirty:
                return
            if self._busy():
                self._wait_for_answer()
                return
            if self._frontend and self._page_saves():
                return
            if self._frontend:
                log.info("no frontend confirmed the test cases of %s; writing the file", self.path)
                self._frontend = False  # its page was reloaded or closed
            self._write_file(unchanged=self._sent_over)

    def _page_saves(self) -> bool:
        """Whether the notebook file changed since the cases were sent: a page is saving it
        and its confirmation is late, so the kernel must not write behind it. Waits again,
        and after :data:`UNCONFIRMED_ROUNDS` says the cases are in the open notebook."""
        if self.path is None or file_stamp(self.path) == self._sent_over:
            return False
        self._rounds += 1
        if self._rounds < UNCONFIRMED_ROUNDS:
            self._wait_for_answer()
        else:
            self._settled(
                f"The page of {self.path.name} saved the notebook but did not confirm the "
                "test cases; they are in the open notebook: save it there (Ctrl+S)."
            )
        return True

    def _write_file(self, unchanged: tuple[int, int] | None = None) -> None:
        with self._lock:
            if not self._dirty or self.path is None:
                return
            try:
                write_notebook_cases(self.path, self._cases, unchanged=unchanged)
            except ChangedMeanwhile:  # a page saved it just now: it is alive after all
                self._frontend = True
                self._page_saves()
                return
            except (OSError, ValueError) as exc:
                log.warning("could not write the test cases into %s: %s", self.path, exc)
                self._settled(f"The test cases could not be written into {self.path}: {exc}")
                return
            self._settled(None)

    def _settled(self, problem: str | None) -> None:
        with self._lock:
            self._dirty = False
            self._sent_over, self._rounds = None, 0
            self.problem = problem
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            waiting, self._waiting = self._waiting, []
        for callback in waiting:
            try:
                callback(problem)
            except Exception:  # a closed widget: the problem stays in .problem
                log.exception("a test-case listener failed")

    # -- the comm with the JupyterLab extension --------------------------------------------

    def open_comm(self, announce: bool = True) -> None:
        """Take comms that a frontend opens (a reloaded page asks again) and, if ``announce``,
        offer the cases to a frontend (in a kernel); see the module docstring."""
        try:
            from comm import create_comm, get_comm_manager

            get_comm_manager().register_target(COMM_TARGET, self._frontend_opened)
            if not announce:
                return
            comm = create_comm(target_name=COMM_TARGET, data={"type": "hello"})
        except Exception:  # no comm support here: the file is the place
            log.debug("no comm for test cases", exc_info=True)
            return
        self._use(comm)

    def _use(self, comm: Any) -> None:
        comm.on_msg(self._on_message)
        comm.on_close(lambda _msg: self._closed(comm))
        # The old page's comm stays registered with the kernel: dropped, it would be closed
        # when collected, and its close would reach the new page as an unknown comm.
        with self._lock:
            self._comm = comm

    def _frontend_opened(self, comm: Any, msg: Mapping[str, Any]) -> None:
        """A frontend opened the comm (a page loaded while this kernel ran): it answers with
        the cases its notebook holds, and from now on it keeps them."""
        self._use(comm)
        self._on_message(msg)

    def _closed(self, comm: Any) -> None:
        with self._lock:
            if comm is not self._comm:
                return  # an older page's comm
            self._comm = None
            self._frontend = False
            self._write_file()

    def _on_message(self, msg: Mapping[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data") or {}
        if not isinstance(data, Mapping):
            return
        kind = data.get("type")
        if kind == "saved":
            with self._lock:  # the save of an earlier list: the latest is still on its way
                earlier = data.get("count") not in (None, len(self._cases))
            if not earlier:
                self._settled(None)
        elif kind == "save-failed":
            self._settled(
                f"JupyterLab could not save {self.path.name if self.path else 'the notebook'}"
                f": {data.get('error')}; the cases are in the open notebook, save it by hand."
            )
        elif kind == "cases":
            self._take_cases([dict(t) for t in data.get("tests") or [] if isinstance(t, Mapping)])

    def _take_cases(self, theirs: list[dict[str, Any]]) -> None:
        """Merge the cases a frontend's notebook holds with the ones saved here; send the
        frontend what it lacks."""
        with self._lock:
            first = not self._frontend
            self._frontend = True
            merged = theirs + [c for c in self._cases if c not in theirs]
            changed = merged != self._cases
            self._cases = merged
            if merged != theirs and self._comm is not None:
                self._dirty = True
                self._comm.send({"type": "tests", "tests": merged})
                self._wait_for_answer()
            elif self._dirty:
                self._settled(None)  # the frontend's notebook already holds every case
        if (changed or first) and self._on_change is not None:
            self._on_change(None)


_lock = threading.Lock()
_stores: WeakKeyDictionary[Any, NotebookCases] = WeakKeyDictionary()


def notebook_cases_of(registry: Any) -> NotebookCases | None:
    """The notebook store of a session registry (``None`` outside a notebook session)."""
    return _stores.get(registry)


def attach_notebook_cases(registry: Any, shell: Any = None) -> NotebookCases:
    """Give the session registry its notebook store and turn its live tests on (once)."""
    with _lock:
        existing = _stores.get(registry)
        if existing is not None:
            return existing
        namespace = getattr(shell, "user_ns", None) if shell is not None else None
        store = NotebookCases(
            notebook_path(namespace),
            on_change=registry.tests.cases_changed,
            busy=_cell_running(shell),
        )
        registry.tests.add_store(store)
        _stores[registry] = store
    if shell is not None and getattr(shell, "kernel", None) is not None:
        store.open_comm(announce=_served_by_jupyter())
    registry.tests.watch()
    return store


def _served_by_jupyter() -> bool:
    """Whether a Jupyter server started this kernel for a notebook (it sets
    ``JPY_SESSION_NAME``): only there may a page with the extension answer the comm."""
    return bool(os.environ.get("JPY_SESSION_NAME"))


def _cell_running(shell: Any) -> Callable[[], bool]:
    """Whether a cell of ``shell`` runs now (its kernel answers comms only after it ends)."""
    running = [False]
    events = getattr(shell, "events", None)
    if events is not None:
        events.register("pre_run_cell", lambda *_: running.__setitem__(0, True))
        events.register("post_run_cell", lambda *_: running.__setitem__(0, False))
    return lambda: running[0]


def carry_cases_to_file(registry: Any, name: str, tool_file: Path) -> int:
    """Copy notebook tool ``name``'s cases into the ``.tests.yaml`` beside ``tool_file``
    (the ones not there yet); returns how many were added."""
    from ..sources.tool_tests import append_case, case_file_for, read_case_file

    store = notebook_cases_of(registry)
    if store is None:
        return 0
    target = case_file_for(tool_file)
    try:
        present = read_case_file(target)
    except TestCaseError as exc:
        raise TestCaseError(
            f"The tool was exported, but its test cases were not: {exc}. Fix {target.name}, "
            "then export again."
        ) from None
    added = 0
    for data in store.raw_cases(name):
        case = TestCase.from_dict(data, tool=name)
        if case in present:
            continue
        append_case(target, case, title=tool_file.name)
        present.append(case)
        added += 1
    return added
