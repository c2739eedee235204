"""The sdist installs like a JupyterLab extension: it carries the prebuilt labextension, so
``pip install`` from it needs no Node, and its metadata names the license (MIT)."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parent.parent
BUILT = REPO / "nexus_jupyter" / "labextension" / "static" / "style.js"


def test_the_sdist_installs_without_node(tmp_path: Path) -> None:
    assert BUILT.is_file(), "build the labextension first (pip install -e . or make setup)"
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [str(bin_dir / "hatchling"), "build", "-t", "sdist", "-d", str(tmp_path / "dist")],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (sdist,) = (tmp_path / "dist").glob("nexus_jupyter-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        top = names[0].split("/")[0]
        info = archive.extractfile(f"{top}/PKG-INFO")
        assert info is not None
        metadata = info.read().decode()
    assert f"{top}/nexus_jupyter/labextension/static/style.js" in names
    assert f"{top}/LICENSE" in names
    assert not any("node_modules" in n for n in names)
    assert "License-Expression: MIT" in metadata and "example.invalid" not in metadata

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # Only the new venv on PATH: no node, no npm.
    clean = {k: v for k, v in os.environ.items() if k not in ("PATH", "VIRTUAL_ENV")}
    clean["PATH"] = str(venv / "bin")
    install = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--no-deps", str(sdist)],
        env=clean,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    shared = venv / "share" / "jupyter" / "labextensions" / "nexus-jupyter"
    assert (shared / "package.json").is_file() and (shared / "static" / "style.js").is_file()
    server_config = venv / "etc" / "jupyter" / "jupyter_server_config.d" / "nexus_jupyter.json"
    assert server_config.is_file()
    # The search package's data files (word lists, the English words and their notice).
    (site,) = (venv / "lib").glob("python3*/site-packages")
    data = site / "nexus_jupyter" / "core" / "search" / "data"
    shipped = {"english-words.txt.gz", "english-words.NOTICE", "services.json", "calibration.txt"}
    assert shipped <= {p.name for p in data.iterdir()}
