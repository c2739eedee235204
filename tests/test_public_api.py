"""The public surface is deliberate: pin the exported names."""

from __future__ import annotations

import subprocess
import sys

import nexus_jupyter

EXPECTED = {
    "AnswerMismatch",
    "ApprovalRequired",
    "Audio",
    "CallerUnavailable",
    "CancellationToken",
    "Caller",
    "ConfigError",
    "Content",
    "Elicitation",
    "EmbeddedResource",
    "ExportError",
    "FieldError",
    "Image",
    "MissingCredential",
    "NexusError",
    "PermissionDenied",
    "Registry",
    "RegistryChanged",
    "RequestInfo",
    "ResourceLink",
    "Sampled",
    "SourceError",
    "Tool",
    "ToolContext",
    "ToolDefinitionError",
    "ToolEntry",
    "ToolNotFound",
    "ToolResult",
    "ToolSpec",
    "ToolUnavailable",
    "ToolValidationError",
    "__version__",
    "evaluate",
    "load_ipython_extension",
    "prompt",
    "registry",
    "resource",
    "tool",
    "unload_ipython_extension",
}


def test_exported_names_are_pinned() -> None:
    assert set(nexus_jupyter.__all__) == EXPECTED
    for name in EXPECTED:
        assert hasattr(nexus_jupyter, name), name


def test_errors_share_one_base() -> None:
    for name in EXPECTED:
        obj = getattr(nexus_jupyter, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, nexus_jupyter.NexusError), name


def test_import_stays_light() -> None:
    """Importing the package must not pull in mcp, jupyter_server, ipywidgets or IPython."""
    code = (
        "import sys, nexus_jupyter; "
        "heavy = [m for m in ('mcp', 'jupyter_server', 'ipywidgets', 'IPython', 'jsonschema') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
