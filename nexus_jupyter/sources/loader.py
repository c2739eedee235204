"""Load one tool file as a fresh module and collect its ``@tool`` functions.

Every load makes a new module object named after the file's content hash, so no state
survives from an earlier version and two versions never share globals. The module sits in
``sys.modules`` only while its body runs and its tools are built (dataclasses and pydantic
resolve annotations through it); afterwards it is removed again, so loading files never
pollutes ``sys.modules``.

Whatever the file does while it runs (a syntax error, an exception, ``sys.exit()``,
``raise KeyboardInterrupt``, a missing import, a half-written save) comes back as a
:class:`LoadResult` with ``error`` and ``line`` set; it is never raised.

>>> import pathlib, tempfile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "add.py"
>>> _ = path.write_text("from nexus_jupyter import tool\\n@tool\\ndef add(a: int) -> int:\\n    return a\\n")
>>> [t.name for t in load_tool_file(path).tools]
['add']
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import sys
import threading
import traceback
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core.tools.decorator import get_tool_meta
from ..core.tools.offers import PromptDef, ResourceDef, get_offer
from ..core.tools.tool import Tool
from .helper_imports import HelperScope, helper_scope

__all__ = ["LoadResult", "content_hash", "load_tool_file", "load_tool_text"]

_counter_lock = threading.Lock()
_counter = 0


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What loading one file gave: its tools, or an error with the line it points at."""

    path: Path
    text: str
    hash: str
    tools: tuple[Tool, ...] = ()
    error: str | None = None
    line: int | None = None
    names: tuple[str, ...] = field(default=())
    offers: tuple[ResourceDef | PromptDef, ...] = ()  # @resource / @prompt functions
    helpers: tuple[Path, ...] = ()  # helper modules beside the file that it imported

    @property
    def ok(self) -> bool:
        return self.error is None


def content_hash(data: bytes | str) -> str:
    """The sha256 of a file's content (hex); versions and module names use it."""
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def load_tool_file(path: str | Path, *, source: str = "", origin: str | None = None) -> LoadResult:
    """Read ``path`` and load it with :func:`load_tool_text`. A file that cannot be read
    (gone, not UTF-8) is a result with ``error`` set, like any other failure."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return LoadResult(path, "", "", error=f"cannot read the file: {exc.strerror or exc}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return LoadResult(
            path,
            "",
            content_hash(raw),
            error=f"the file is not UTF-8 text (byte {exc.start}); save it as UTF-8",
        )
    return load_tool_text(text, path, source=source, origin=origin)


def load_tool_text(
    text: str,
    path: str | Path,
    *,
    source: str = "",
    origin: str | None = None,
    timeout: float | None = None,
) -> LoadResult:
    """Run ``text`` as the module of file ``path``; return the tools it defines.

    A tool is a function marked with ``@tool`` and defined in this module (imported tools
    are not re-exported). ``source`` is stamped on each tool's spec and ``origin`` (default:
    the path) says where its code lives. With ``timeout``, a module body that runs longer is
    reported as an error and left behind on its (daemon) thread, so a file that hangs at
    import cannot stall every later reload.
    """
    path = Path(path)
    digest = content_hash(text)
    result = LoadResult(path, text, digest)
    try:
        code = compile(text, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        return _failed(result, f"SyntaxError: {exc.msg}", exc.lineno)
    except (ValueError, MemoryError, RecursionError) as exc:  # null bytes, absurd nesting
        return _failed(result, f"{type(exc).__name__}: {exc}", None)
    module = types.ModuleType(_module_name(path, digest))
    module.__file__ = str(path)
    module.__dict__["__builtins__"] = __builtins__
    sys.modules[module.__name__] = module
    scope = HelperScope(path.parent, path)
    try:
        failure = _run_module(code, module, timeout, path, scope)
        if isinstance(failure, BaseException):
            return _failed(result, _describe(failure), _line_in(failure, str(path)))
        if failure is not None:
            return _failed(result, failure, None)
        loaded = _collect(result, module, source, origin if origin is not None else str(path))
        return with_helpers(loaded, scope.files) if scope.files else loaded
    finally:
        sys.modules.pop(module.__name__, None)


def _run_module(
    code: types.CodeType,
    module: types.ModuleType,
    timeout: float | None,
    path: Path,
    helpers: HelperScope,
) -> BaseException | str | None:
    """Run the module body: ``None`` when it finished, else its exception or a message.
    Helper modules beside ``path`` are importable while it runs (see :mod:`.helper_imports`)."""

    def body() -> None:
        with helper_scope(path) as scope:
            try:
                exec(code, module.__dict__)
            finally:
                helpers.roots, helpers.files = scope.roots, scope.files

    if timeout is None:
        try:
            body()
        except (
            BaseException
        ) as exc:  # SystemExit, KeyboardInterrupt in a file: its failure, not ours
            return exc
        return None
    box: list[BaseException] = []

    def run() -> None:
        try:
            body()
        except BaseException as exc:  # reported to the caller below
            box.append(exc)

    worker = threading.Thread(target=run, name=f"nexus-load {module.__name__}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return (
            f"the module did not finish importing within {timeout:g} s (an endless loop or "
            "a blocking call at module level?); move slow work into the tool function"
        )
    return box[0] if box else None


def _module_name(path: Path, digest: str) -> str:
    global _counter
    with _counter_lock:
        _counter += 1
        n = _counter
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    # The counter keeps two loads of the same content apart (fresh state every time).
    return f"nexus_dynamic_{stem}_{digest[:12]}_{n}"


def _collect(result: LoadResult, module: types.ModuleType, source: str, origin: str) -> LoadResult:
    tools: list[Tool] = []
    offers: list[ResourceDef | PromptDef] = []
    seen: dict[str, str] = {}
    for var, obj in list(vars(module).items()):
        try:
            meta = get_tool_meta(obj)
            mine = getattr(obj, "__module__", None) == module.__name__
            offer = get_offer(obj) if mine else None
        except Exception:  # objects whose __getattr__ raises are simply not tools
            continue
        if offer is not None:
            offers.append(offer)
        if isinstance(obj, Tool) and not obj.spec.source:
            # A tool made here with its own JSON Schema (Tool.from_schema): this file's.
            built = obj.with_spec(source=source, source_kind="directory", origin=origin)
            if built.name in seen:
                return _failed(
                    result, f"two definitions of the tool {built.name!r}; rename one", None
                )
            seen[built.name] = var
            tools.append(built)
            continue
        if meta is None or not mine or not callable(obj):
            continue
        try:
            built = Tool.from_function(
                obj, source=source, source_kind="directory", origin=origin, source_code=result.text
            )
        except BaseException as exc:  # a bad signature is this file's failure
            line = getattr(getattr(obj, "__code__", None), "co_firstlineno", None)
            return _failed(result, f"{var!r} cannot be a tool: {_describe(exc)}", line)
        if built.name in seen:
            return _failed(
                result,
                f"two functions ({seen[built.name]!r} and {var!r}) define "
                f"the tool {built.name!r}; rename one",
                None,
            )
        seen[built.name] = var
        tools.append(built)
    return LoadResult(
        result.path,
        result.text,
        result.hash,
        tuple(tools),
        names=tuple(t.name for t in tools),
        offers=tuple(offers),
    )


def with_helpers(result: LoadResult, helper_files: set[Path]) -> LoadResult:
    """``result`` with the helper files it imported, their contents folded into each tool's
    code hash (an edited helper is a new version of every tool that uses it)."""
    digest = hashlib.sha256()
    for helper in sorted(helper_files):
        digest.update(str(helper).encode())
        with contextlib.suppress(OSError):
            digest.update(helper.read_bytes())
    mixed = digest.hexdigest()
    tools = tuple(
        t.with_spec(code_hash=content_hash(t.spec.code_hash + mixed)[:12]) for t in result.tools
    )
    return dataclasses.replace(result, tools=tools, helpers=tuple(sorted(helper_files)))


def _failed(result: LoadResult, message: str, line: int | None) -> LoadResult:
    return LoadResult(result.path, result.text, result.hash, error=message, line=line)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if len(text) > 500:
        text = text[:500] + "…"
    name = type(exc).__name__
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return f"{name}: {text} (is {exc.name.split('.')[0]!r} installed here?)"
    return f"{name}: {text}" if text else name


def _line_in(exc: BaseException, filename: str) -> int | None:
    """The last line of ``filename`` in the traceback (where the file itself failed)."""
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        return exc.lineno
    line = None
    frames: Sequence[traceback.FrameSummary] = traceback.extract_tb(exc.__traceback__)
    for frame in frames:
        if frame.filename == filename:
            line = frame.lineno
    return line
