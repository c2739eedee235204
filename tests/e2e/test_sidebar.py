"""The JupyterLab "Tools" sidebar in a real headless Chromium.

Starts JupyterLab on 127.0.0.1 with a token and a root whose ``tools/dynamic`` holds a tool
file, then runs ``sidebar.spec.mjs`` (playwright-core driving Debian's ``/usr/bin/chromium``):
open the panel from the command palette, search, open a tool, get a per-field error from the
server, run it, see the result, write a new tool file and see it appear within 2 s. The
screenshot lands in ``test-artifacts/sidebar.png``.

Needs: the built labextension (``nexus_jupyter/labextension``; ``pip install -e .`` or
``npm run build:prod`` in ``labextension/``), ``npm ci`` in ``tests/e2e`` (done here when
missing), and a Chromium (``apt-get install -y chromium``). Without a browser it skips, loudly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from live_kernels import server_url  # tests/ is on sys.path (rootdir conftest)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(300)]

HERE = Path(__file__).parent
REPO = HERE.parent.parent
LABEXTENSION = REPO / "nexus_jupyter" / "labextension"
ARTIFACTS = REPO / "test-artifacts"
TOKEN = "nexus-e2e-token"
SERVER_DEADLINE_S = 90.0

MULTIPLY = '''from nexus_jupyter import tool


@tool(categories=["math"])
def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: The first factor.
        b: The second factor.
    """
    return a * b
'''


GREET = '''from nexus_jupyter import tool


@tool(permission="workspace_write", categories=["text"])
def greet(name: str) -> str:
    """Greet someone (asks for approval: see nex.yaml)."""
    return f"Hello, {name}!"
'''


GLOB = '''from nexus_jupyter import tool


@tool
def glob(pattern: str) -> list[str]:
    """A folder's own glob, which shadows the built-in one."""
    return [pattern]
'''


NAP = '''import asyncio
from pathlib import Path

from nexus_jupyter import tool


@tool
async def nap(seconds: float) -> str:
    """Sleep, then answer (for the Cancel button)."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        Path(__file__).with_name("nap.cancelled").write_text("cancelled")
        raise
    return "rested"
'''


def _browser() -> str | None:
    for candidate in (
        os.environ.get("NEXUS_E2E_BROWSER"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _skip_loudly(reason: str) -> None:
    banner = "!" * 78
    message = f"\n{banner}\nE2E SIDEBAR TEST SKIPPED: {reason}\n{banner}\n"
    sys.stderr.write(message)
    pytest.skip(reason)


def _ensure_playwright() -> None:
    if (HERE / "node_modules" / "playwright-core").is_dir():
        return
    npm = shutil.which("npm")
    assert npm, "npm is needed to install playwright-core (tests/e2e/package.json)"
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True, timeout=300)


def _get(url: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _wait_for_tool(base: str, name: str, server: subprocess.Popen[bytes], log: Path) -> None:
    """Poll until the server lists ``name`` (JupyterLab needs a few seconds to start)."""
    deadline = time.monotonic() + SERVER_DEADLINE_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"JupyterLab exited early:\n{log.read_text()[-4000:]}")
        try:
            status, body = _get(f"{base}nexus/api/tools?q={name}")
        except OSError:
            status, body = 0, b""
        if status == 200 and any(t["name"] == name for t in json.loads(body)["tools"]):
            return
        time.sleep(0.25)  # polling a starting process, not waiting for a watcher
    raise AssertionError(
        f"{name!r} never showed up in {base}nexus/api/tools:\n{log.read_text()[-4000:]}"
    )


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A JupyterLab server with the extension, isolated from the user's config and settings."""
    root = tmp_path / "root"
    tools_dir = root / "tools" / "dynamic"
    tools_dir.mkdir(parents=True)
    (tools_dir / "multiply_tool.py").write_text(MULTIPLY)
    (tools_dir / "greet_tool.py").write_text(GREET)
    (tools_dir / "glob_tool.py").write_text(GLOB)  # shadows the built-in glob
    (tools_dir / "nap_tool.py").write_text(NAP)
    # the folder's glob may replace the built-in one (built-in names are reserved otherwise)
    (root / "nex.yaml").write_text("approvals:\n  greet: ask\nallow_overrides: [glob]\n")
    shutil.copytree(REPO / "notebooks", root / "notebooks")
    with lab_server(tmp_path, root, "multiply") as running:
        yield running


@contextmanager
def lab_server(tmp_path: Path, root: Path, listed: str) -> Iterator[dict[str, str]]:
    """JupyterLab on ``root`` (prepared by the caller), isolated from the user's config and
    settings, once its registry lists tool ``listed``."""
    assert (LABEXTENSION / "package.json").is_file(), (
        f"{LABEXTENSION} is not built: run `pip install -e .` or "
        "`npm ci && npm run build:prod` in labextension/"
    )
    tools_dir = root / "tools" / "dynamic"
    # Serve the extension from this checkout's build, whatever is installed in the env.
    labext = tmp_path / "labextensions"
    labext.mkdir()
    (labext / "nexus-jupyter").symlink_to(LABEXTENSION, target_is_directory=True)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "NEXUS_VERSIONS_DIR": str(tmp_path / "versions"),
        "HOME": str(tmp_path / "home"),
    }
    env.pop("NEXUS_TOOLS_DIR", None)
    # No "official Jupyter news?" toast over the screenshots.
    news = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    log = tmp_path / "jupyterlab.log"
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        "--port=0",  # its own pick, a moment before it listens (see server_url)
        f"--IdentityProvider.token={TOKEN}",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.jpserver_extensions={'nexus_jupyter': True}",
        f"--LabApp.extra_labextensions_path={labext}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        # no "is the build up to date" check at each page load (1.7 s of CPU per server,
        # spent while the page loads; the build is this checkout's, linked above)
        "--ServerApp.tornado_settings="
        "{'page_config_data': {'buildCheck': False, 'buildAvailable': False}}",
    ]
    with log.open("wb") as out:
        server = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = server_url(tmp_path / "runtime", server, log, SERVER_DEADLINE_S)
        _wait_for_tool(base, listed, server, log)
        yield {"url": base, "tools_dir": str(tools_dir), "log": str(log)}
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _run_spec(
    lab: dict[str, str],
    spec: str,
    screenshot: Path,
    *,
    extra_env: dict[str, str] | None = None,
    shots: list[str] | None = None,
) -> tuple[str, str]:
    """Run ``spec`` (a playwright-core script) against ``lab``; returns (stdout, report) after
    asserting it passed and saved ``screenshot`` (or each of ``shots``, names in the artifacts
    folder, when the spec saves several). Skips loudly without a browser or node."""
    browser = _browser()
    if browser is None:
        _skip_loudly("no Chromium found (apt-get install -y chromium, or set NEXUS_E2E_BROWSER)")
    node = shutil.which("node")
    if node is None:
        _skip_loudly("node is not installed; it drives the browser through playwright-core")
    _ensure_playwright()
    ARTIFACTS.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "NEXUS_E2E_URL": lab["url"],
        "NEXUS_E2E_TOKEN": TOKEN,
        "NEXUS_E2E_TOOLS_DIR": lab["tools_dir"],
        "NEXUS_E2E_SCREENSHOT": str(screenshot),
        "NEXUS_E2E_BROWSER": str(browser),
        **(extra_env or {}),
    }
    run = subprocess.run(
        [str(node), str(HERE / spec)],
        env=env,
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=240,
    )
    report = f"--- spec output ---\n{run.stdout}\n{run.stderr}"
    if run.returncode != 0:
        report += f"\n--- JupyterLab log (tail) ---\n{Path(lab['log']).read_text()[-4000:]}"
    assert run.returncode == 0, report
    for shot in [ARTIFACTS / s for s in shots] if shots else [screenshot]:
        assert shot.is_file() and shot.stat().st_size > 1000, report
    return run.stdout, report


@pytest.mark.timing  # a latency target: runs alone, after the parallel phase
def test_sidebar_search_try_and_live_reload(lab: dict[str, str]) -> None:
    stdout, report = _run_spec(lab, "sidebar.spec.mjs", ARTIFACTS / "sidebar.png")
    for step in (
        "the built-in glob is marked shadowed",
        "a misspelt search says what it searched for",
        "server validation error shown on field b",
        "approved call ran",
        "history entry put its arguments back",
        "Cancel stopped the call",
        "new tool file appeared in the panel",
        "deleted tool: the details say it is gone and Run is disabled",
        "broken file's error shown",
        "dark theme applied",
    ):
        assert step in stdout, report
    # Cancel reached the tool on the server, not just the page.
    assert (Path(lab["tools_dir"]) / "nap.cancelled").is_file(), report
    print(stdout)


def test_quickstart_widgets_in_browser(lab: dict[str, str]) -> None:
    """The quickstart runs in JupyterLab and its test-call form works when clicked."""
    stdout, report = _run_spec(lab, "notebook.spec.mjs", ARTIFACTS / "quickstart-form.png")
    assert "Run pressed: result shown in the form" in stdout, report


def test_demo_notebooks_as_rendered(lab: dict[str, str]) -> None:
    """Both demo notebooks and the sidebar as rendered: catalog rows laid out (64 tools), text
    results with real line breaks, the approval prompt with its arguments, Run disabled where
    policy forbids. Screenshots: test-artifacts/demo-*.png, quickstart-*.png, sidebar-*.png."""
    stdout, report = _run_spec(lab, "demos.spec.mjs", ARTIFACTS / "demo-catalog.png")
    for step in (
        "%tools (demo catalog): 6",
        "%tool browse temperature:",
        "quickstart opened unmodified",
        "approval prompt shows the tool, the permission and the multi-line command",
        "stdout shown as text with real line breaks",
        "read shows text with real line breaks",
        "bash has Run disabled",
        "all steps passed",
    ):
        assert step in stdout, report
    print(stdout)


@pytest.mark.timing  # a latency target: runs alone, after the parallel phase
def test_tool_tests_in_the_sidebar_and_the_notebook(lab: dict[str, str]) -> None:
    """Save as test in the sidebar (beside the file) and in a notebook's form (in its
    metadata, also after a page reload); a breaking save turns the badge failed within a
    second, a fix back.
    Screenshots: test-artifacts/tooltests-*.png."""
    shots = [
        "tooltests-sidebar-passed.png",
        "tooltests-sidebar-failed.png",
        "tooltests-sidebar-row.png",
        "tooltests-sidebar-kernel.png",
        "tooltests-notebook.png",
        "tooltests-notebook-catalog.png",
        "tooltests-notebook-reloaded.png",
    ]
    stdout, report = _run_spec(lab, "tooltests.spec.mjs", ARTIFACTS / "tooltests.png", shots=shots)
    for step in (
        "Save as test wrote the case beside the tool file",
        "a breaking save turned the tests failed",
        "the fix turned the row's badge back to passed",
        "the case is in the notebook metadata, saved to disk by the extension",
        "the sidebar's This notebook group shows add with its tests passed",
        "both cases are in the notebook file",
        "the %tools catalog in the notebook shows the test badge",
        "after a page reload, the form saved a case and it is in the notebook file",
        "all steps passed",
    ):
        assert step in stdout, report
    print(stdout)


def test_labextension_unit_tests() -> None:
    """The sidebar's pure functions (JSONPath -> form errors), under node's test runner."""
    node = shutil.which("node")
    if node is None:
        _skip_loudly("node is not installed; it runs the labextension's unit tests")
    lib = REPO / "labextension" / "lib" / "errors.js"
    assert lib.is_file(), f"{lib} is missing: build the labextension (npm run build:prod)"
    run = subprocess.run(
        [str(node), "--experimental-detect-module", "--test", "test/"],
        cwd=REPO / "labextension",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "# fail 0" in run.stdout
