"""The demo notebooks, executed headless in a real kernel (nbclient), with key outputs checked."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
WIDGET = "application/vnd.jupyter.widget-view+json"

pytestmark = pytest.mark.slow


def execute(name: str) -> dict[str, Any]:
    """Run notebook ``name`` in a fresh kernel whose cwd is notebooks/; cells by tag."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(NOTEBOOKS)}}
    ).execute()
    return {tag: cell for cell in nb.cells for tag in cell.metadata.get("tags", [])}


def text_of(cell: Any) -> str:
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.data.get("text/plain", ""))
            parts.append(out.data.get("text/html", ""))
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
    return "\n".join(parts)


def widget_model_id(cell: Any) -> str:
    views = [o.data[WIDGET] for o in cell.outputs if WIDGET in o.get("data", {})]
    assert views, f"no widget output in {cell.source!r}"
    return str(views[0]["model_id"])


@pytest.fixture(scope="module")
def quickstart() -> dict[str, Any]:
    return execute("01-quickstart.ipynb")


@pytest.fixture(scope="module")
def catalog() -> dict[str, Any]:
    return execute("02-demo-catalog.ipynb")


def test_quickstart_defines_lists_and_searches(quickstart: dict[str, Any]) -> None:
    assert text_of(quickstart["load"]) == ""  # loading is silent
    listed = text_of(quickstart["list"])
    assert "add" in listed and "countdown" in listed and "shout" in listed
    assert "notebook" in listed
    search = text_of(quickstart["search"])
    assert search.lstrip().startswith("1. add")  # the best match comes first
    assert "Add two integers." in text_of(quickstart["info"])


def test_quickstart_calls_from_magic_and_python(quickstart: dict[str, Any]) -> None:
    assert re.search(r"\b42\b", text_of(quickstart["call"]))
    assert "3 HELLO!" in text_of(quickstart["python-call"])
    invalid = text_of(quickstart["invalid"])
    assert "UsageError" in invalid and "$.a" in invalid and "Traceback" not in invalid
    history = text_of(quickstart["history"])  # the workbench's calls: %tool call, forms
    assert 'add({"a": 2, "b": 40}) -> ok' in history


def test_quickstart_widgets_render(quickstart: dict[str, Any]) -> None:
    assert widget_model_id(quickstart["try"])
    assert widget_model_id(quickstart["browse"])


def test_demo_catalog_registers_at_least_50_tools(catalog: dict[str, Any]) -> None:
    registered = text_of(catalog["register"])
    count = int(registered.split()[0])
    assert count >= 50
    assert "weather" in text_of(catalog["list"]) and "forecast" in text_of(catalog["list"])
    first_hits = text_of(catalog["search"]).split("\n")[:2]
    assert any("mi_to_km" in line for line in first_hits)
    assert "26.2" in text_of(catalog["call"])
    assert re.search(r"['\"]temperature['\"]: 26.6", text_of(catalog["call-weather"]))
    for tag in ("browse", "browse-query", "try"):
        assert widget_model_id(catalog[tag])


KERNEL_FLOW = [
    "%load_ext nexus_jupyter",
    "import asyncio, time\n"
    "from nexus_jupyter import ToolContext, tool\n"
    "from nexus_jupyter.notebook import api\n"
    "@tool(permission='danger_full_access')\n"
    "def wipe(target: str) -> str:\n    'Dangerous.'\n    return 'wiped ' + target\n"
    "@tool\n"
    "async def sleeper(seconds: float, ctx: ToolContext) -> str:\n    'Sleeps.'\n"
    "    await asyncio.sleep(seconds)\n    return 'woke'\n",
    "form = api.try_tool('wipe')\n"
    "form.fields.fields['target'].control.value = 'x'\n"
    "form.run_button.click()\n"
    "form",
    "deadline = time.monotonic() + 20\n"
    "while not form.result.approval_area.children and time.monotonic() < deadline:\n"
    "    time.sleep(0.02)\n"
    "print(type(api.current_registry().approver).__name__, len(form.result.approval_area.children))",
    "form.result.approval_area.children[0].approve_button.click()\n"
    "print(form.result.wait(20), form.result.result.structured)",
    "s = api.try_tool('sleeper')\n"
    "s.fields.fields['seconds'].set(30.0)\n"
    "s.run_button.click()\n"
    "time.sleep(0.3)\n"
    "s.result.cancel_button.click()\n"
    "print(s.result.wait(10), s.result.error)",
]


def test_approval_and_cancel_in_a_real_kernel(tmp_path: Path) -> None:
    """The approver runs on the registry's loop while clicks arrive on the kernel thread:
    no deadlock, and Cancel stops a sleeping tool, inside ipykernel."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in KERNEL_FLOW]
    NotebookClient(
        nb, kernel_name="python3", timeout=60, resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    assert widget_model_id(nb.cells[2])
    assert text_of(nb.cells[3]).strip() == "NotebookApprover 1"
    assert text_of(nb.cells[4]).strip() == "True wiped x"
    assert text_of(nb.cells[5]).strip() == "True the call was cancelled"
