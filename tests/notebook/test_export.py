"""Export: cells run in a real InteractiveShell (sources come from linecache, as in a
notebook), exported files imported in a fresh Python process give the same schema and
results; refusals name the variable; the hand-over makes the file own the tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from export_shapes import IMPORT, SHAPES
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import run_ok
from waiting import wait_until  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import ExportError, Registry
from nexus_jupyter.notebook.export import export_tool
from nexus_jupyter.sources.tool_files import stamp_state


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    return tmp_path / "tools" / "dynamic"


def _run_in_fresh_process(files: dict[str, Path], calls: dict[str, list[dict]]) -> dict:
    script = textwrap.dedent("""
        import importlib.util, json, sys
        from nexus_jupyter import Registry
        from nexus_jupyter.core.tools.decorator import get_tool_meta
        files, calls = json.loads(sys.argv[1]), json.loads(sys.argv[2])
        out = {}
        for name, path in files.items():
            spec = importlib.util.spec_from_file_location("exported_" + name.replace("-", "_"), path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
            reg = Registry(search="keyword")
            marked = [v for v in vars(module).values()
                      if get_tool_meta(v) is not None and getattr(v, "__module__", "") == spec.name]
            for fn in marked:
                reg.add(fn)
            tool = reg.get(name)
            results = [reg.call_sync(name, args).structured for args in calls[name]]
            out[name] = {"schema": tool.spec.input_schema, "description": tool.spec.description,
                         "permission": tool.spec.permission, "tools": sorted(reg.names()),
                         "results": results}
        print(json.dumps(out))
    """)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            json.dumps({k: str(v) for k, v in files.items()}),
            json.dumps(calls),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_cell_shapes_round_trip_in_a_fresh_process(
    shell: InteractiveShell, registry: Registry, tools_dir: Path
) -> None:
    expected, files, calls = {}, {}, {}
    for shape_id, cells, name, samples in SHAPES:
        for cell in cells:
            run_ok(shell, cell)
        tool = registry.get(name)
        assert tool.spec.source_kind == "notebook", shape_id
        expected[name] = {
            "schema": json.loads(json.dumps(tool.spec.input_schema)),
            "description": tool.spec.description,
            "permission": tool.spec.permission,
            "results": [registry.call_sync(name, args).structured for args in samples],
        }
        result = export_tool(name, registry=registry, tools_dir=tools_dir)
        assert result.written and result.path == (tools_dir / f"{name}.py").resolve()
        files[name], calls[name] = result.path, samples
        entry = registry.entry(name)  # handed over: the file owns the tool now
        assert entry.tool.spec.source_kind == "directory", shape_id
        assert [r for r in (registry.call_sync(name, a).structured for a in samples)] == expected[
            name
        ]["results"]
    fresh = _run_in_fresh_process(files, calls)
    assert len(fresh) == len(SHAPES) >= 15
    for name, want in expected.items():
        got = fresh[name]
        assert got["tools"] == [name], (
            f"{name}: the file must define only its tool, got {got['tools']}"
        )
        assert got["schema"] == want["schema"], name
        assert got["description"] == want["description"], name
        assert got["permission"] == want["permission"], name
        assert got["results"] == json.loads(json.dumps(want["results"])), name


def test_exported_text_reconstructs_imports_and_options(
    shell: InteractiveShell, registry: Registry, tools_dir: Path
) -> None:
    for cell in SHAPES[4][1] + SHAPES[5][1] + SHAPES[12][1]:
        run_ok(shell, cell)
    stats = export_tool("stats", registry=registry, tools_dir=tools_dir, dry_run=True)
    assert not stats.written and not stats.path.exists()
    for line in (
        "import json as js",
        "import collections.abc as cabc",
        "import numpy as np",
        "from nexus_jupyter import tool",
        "def json_round(d):",
    ):
        assert line in stats.text
    geo = export_tool("geo", registry=registry, tools_dir=tools_dir, dry_run=True).text
    assert (
        "from math import pi, sqrt as root" in geo and "from os.path import join" in geo
    ) or "import join" in geo
    renamed = export_tool("renamed", registry=registry, tools_dir=tools_dir, dry_run=True).text
    assert "@tool(name='renamed', permission='workspace_write', categories=['x', 'y']" in renamed
    assert stamp_state(renamed) == "ours" and "# nexus-export: sha256=" in renamed


@pytest.mark.parametrize(
    ("setup", "variable", "what"),
    [
        ("import numpy as np\nDATA = np.arange(5)", "DATA", "numpy.ndarray"),
        ("import tempfile\nHANDLE = tempfile.TemporaryFile()", "HANDLE", "open file"),
        ("DATA = (lambda v: v + 1)", "DATA", "lambda"),
        ("class Conn:\n    pass\nDATA = Conn()", "DATA", "Conn object"),
    ],
)
def test_export_refuses_what_cannot_be_source(
    shell: InteractiveShell,
    registry: Registry,
    tools_dir: Path,
    setup: str,
    variable: str,
    what: str,
) -> None:
    run_ok(shell, setup)
    run_ok(
        shell,
        IMPORT
        + f"@tool\ndef uses(x: int) -> str:\n    'Uses it.'\n    return str({variable}) + str(x)",
    )
    with pytest.raises(ExportError) as info:
        export_tool("uses", registry=registry, tools_dir=tools_dir)
    message = str(info.value)
    assert repr(variable) in message and what in message
    assert "parameter" in message or "def" in message  # says what to do
    assert not (tools_dir / "uses.py").exists()
    assert registry.entry("uses").tool.spec.source_kind == "notebook"  # nothing handed over
    if variable == "HANDLE":
        run_ok(shell, "HANDLE.close()")


def test_names_are_validated_and_foreign_files_need_force(
    shell: InteractiveShell, registry: Registry, tools_dir: Path
) -> None:
    run_ok(shell, IMPORT + "@tool(name='has.dot')\ndef dotted() -> int:\n    'x'\n    return 1")
    with pytest.raises(ExportError, match=r"Invalid tool file name 'has\.dot'"):
        export_tool("has.dot", registry=registry, tools_dir=tools_dir)
    run_ok(shell, SHAPES[0][1][0])
    tools_dir.mkdir(parents=True)
    (tools_dir / "add.py").write_text("# my own file\n")
    with pytest.raises(ExportError, match="was not written by export; overwrite it with --force"):
        export_tool("add", registry=registry, tools_dir=tools_dir)
    assert (tools_dir / "add.py").read_text() == "# my own file\n"
    first = export_tool("add", registry=registry, tools_dir=tools_dir, force=True)
    assert stamp_state(first.path.read_text()) == "ours"
    assert first.path.stat().st_mode & 0o777 == 0o666 & ~_umask()  # not mkstemp's 0600
    run_ok(shell, SHAPES[0][1][0])  # re-running the cell takes the tool back ...
    assert registry.entry("add").tool.spec.source_kind == "notebook"
    assert registry.entry("add").shadowed[0].spec.source_kind == "directory"  # ... file shadowed
    export_tool("add", registry=registry, tools_dir=tools_dir)  # ours and unedited: no force
    first.path.write_text(first.path.read_text() + "# edited by hand\n")
    run_ok(shell, SHAPES[0][1][0])
    with pytest.raises(ExportError, match="was edited since it was exported"):
        export_tool("add", registry=registry, tools_dir=tools_dir)


def test_exported_file_edits_are_live_in_the_session(
    shell: InteractiveShell, registry: Registry, tools_dir: Path
) -> None:
    run_ok(shell, SHAPES[0][1][0])
    result = export_tool("add", registry=registry, tools_dir=tools_dir)
    source = registry.source(registry.entry("add").tool.spec.source)
    assert source.wait_ready(10)
    assert "add" not in registry.source("notebook").names()
    result.path.write_text(result.path.read_text().replace("return a + b", "return a * b"))
    wait_until(registry, lambda: registry.call_sync("add", {"a": 3, "b": 4}).structured == 12)
    run_ok(shell, "1 + 1")  # an unrelated cell does not take the tool back
    assert registry.entry("add").tool.spec.source_kind == "directory"


def test_magic_export_dry_run_and_errors(
    shell: InteractiveShell, registry: Registry, tools_dir: Path
) -> None:
    run_ok(shell, SHAPES[0][1][0])
    shown = run_ok(shell, f"%tool export add --dir {tools_dir} --dry-run")
    assert not shown.written and "def add(a: int, b: int = 2) -> int:" in shown.text
    assert not tools_dir.exists()
    written = run_ok(shell, f"%tool export add --dir {tools_dir}")
    assert written.written and written.path.exists()
    bad = shell.run_cell(f"%tool export nothing --dir {tools_dir}")
    assert "No tool named 'nothing'" in str(bad.error_in_exec)
    bad = shell.run_cell("%tool export add --bogus")
    assert "has no option '--bogus'" in str(bad.error_in_exec)


def test_export_says_whether_the_jupyter_server_serves_the_file(
    shell: InteractiveShell,
    registry: Registry,
    tools_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kernel started by a nexus-enabled Jupyter server knows which folders that server
    watches (NEXUS_JUPYTER_SERVER_TOOLS): export says the server serves the file, or warns
    that it does not; outside such a kernel it says neither."""
    run_ok(shell, SHAPES[0][1][0])
    monkeypatch.delenv("NEXUS_JUPYTER_SERVER_TOOLS", raising=False)
    assert export_tool("add", registry=registry, tools_dir=tools_dir).served is None

    monkeypatch.setenv("NEXUS_JUPYTER_SERVER_TOOLS", str(tools_dir))
    run_ok(shell, SHAPES[0][1][0])  # take it back, export again
    shown = run_ok(shell, f"%tool export add --dir {tools_dir}")
    assert shown.served is not None and "The Jupyter server watches this folder" in shown.served
    assert shown.served in shown._repr_markdown_() and shown.served in repr(shown)

    elsewhere = tmp_path / "server" / "tools" / "dynamic"
    monkeypatch.setenv("NEXUS_JUPYTER_SERVER_TOOLS", str(elsewhere))
    run_ok(shell, SHAPES[0][1][0])
    warned = export_tool("add", registry=registry, tools_dir=tools_dir).served
    assert warned is not None and warned.startswith("**Warning:** the Jupyter server does not")
    assert f"`{tools_dir.resolve()}`" in warned and f"`--dir {elsewhere}`" in warned


def test_export_names_the_setting_when_the_jupyter_server_watches_no_folder(
    shell: InteractiveShell,
    registry: Registry,
    tools_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server that watches nothing cannot be told to serve the file with ``--dir``: the
    warning says what gives it a folder (in its root's nex.yaml, or the default folder)."""
    root = tmp_path / "server"
    monkeypatch.setenv("NEXUS_JUPYTER_SERVER_ROOT", str(root))
    monkeypatch.setenv("NEXUS_JUPYTER_SERVER_TOOLS", "")
    run_ok(shell, SHAPES[0][1][0])
    warned = export_tool("add", registry=registry, tools_dir=tools_dir).served
    assert warned is not None and "(it watches no tools folder)" in warned
    assert f"create `{root / 'tools' / 'dynamic'}`" in warned
    assert f"set `tools_dir:` in `{root / 'nex.yaml'}`" in warned
    assert "restart the Jupyter server" in warned
    assert "--dir" not in warned
