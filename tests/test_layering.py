"""The core sits below everything else: it never imports a source, a face or Jupyter."""

from __future__ import annotations

import ast
from pathlib import Path

import nexus_jupyter

PACKAGE = Path(nexus_jupyter.__file__).parent
#: Everything above the core: the sources, the faces, the wiring that knows both.
ABOVE_CORE = ("sources", "notebook", "serve", "cli", "render", "app", "session")
JUPYTER = ("IPython", "ipywidgets", "ipykernel", "jupyter_server", "jupyter_client")


def _module_name(path: Path, package_root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package_root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, package_root: Path = PACKAGE) -> list[str]:
    """Every module ``path`` imports (relative imports resolved), at any depth in the file."""
    here = _module_name(path, package_root).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append(module)
            found += [f"{module}.{alias.name}" for alias in node.names]
    return found


def _core_modules() -> list[Path]:
    return sorted((PACKAGE / "core").rglob("*.py"))


def test_the_core_imports_no_source_face_or_jupyter() -> None:
    forbidden = tuple(f"nexus_jupyter.{name}" for name in ABOVE_CORE)
    offenders = {}
    for path in _core_modules():
        bad = [m for m in _imports(path) if m.startswith(forbidden) or m.split(".")[0] in JUPYTER]
        if bad:
            offenders[str(path.relative_to(PACKAGE))] = sorted(set(bad))
    assert offenders == {}


def test_the_import_graph_check_sees_relative_imports(tmp_path: Path) -> None:
    """The check above resolves relative imports, also inside functions, as a module at
    that place in the package would."""
    probe = PACKAGE / "core" / "registry" / "registry.py"
    imports = _imports(probe)
    assert "nexus_jupyter.core.registry.state" in imports
    assert "nexus_jupyter.core.errors" in imports
    fake = tmp_path / "nexus_jupyter" / "core" / "registry" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def later():\n    from ...sources.directory import DirectorySource\n")
    found = _imports(fake, package_root=tmp_path / "nexus_jupyter")
    assert "nexus_jupyter.sources.directory" in found


def test_the_core_is_a_package_per_concept() -> None:
    """No flat prefix families (``search_*``, ``config_*``) at the top of the core."""
    top = sorted(p.stem for p in (PACKAGE / "core").glob("*.py") if p.stem != "__init__")
    assert top == ["errors"]
    packages = sorted(p.name for p in (PACKAGE / "core").iterdir() if (p / "__init__.py").exists())
    assert packages == [
        "config",
        "evals",
        "policy",
        "registry",
        "search",
        "tasks",
        "telemetry",
        "tools",
        "toolsets",
        "tooltests",
    ]


def test_the_jupyter_server_face_imports_nothing_of_the_notebook_face() -> None:
    """The server reads what a kernel's listing carries (``_meta`` keys, the kernel's private
    tool) from the core, where both faces agree on it; the kernel's side is its own."""
    offenders = {}
    for path in sorted((PACKAGE / "serve").rglob("*.py")):
        bad = [m for m in _imports(path) if m.startswith("nexus_jupyter.notebook")]
        if bad:
            offenders[str(path.relative_to(PACKAGE))] = sorted(set(bad))
    assert offenders == {}
