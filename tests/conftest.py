"""Suite-wide isolation: no test reads or writes the real ~/.nexus or caches."""

from __future__ import annotations

import os
import tempfile

import pytest

# Set before any test module imports the package, so defaults resolve inside the sandbox.
_SANDBOX = tempfile.mkdtemp(prefix="nexus-tests-")
os.environ["NEXUS_HOME"] = os.path.join(_SANDBOX, "home")
os.environ.setdefault("NEXUS_CACHE_DIR", os.path.join(_SANDBOX, "cache"))
os.environ["HF_HUB_OFFLINE"] = "1"
# Servers and kernels the tests start get a HOME of their own: the model files stay where
# `make setup` put them (the Hugging Face cache of the real home), named explicitly.
if "HF_HUB_CACHE" not in os.environ and "HF_HOME" not in os.environ:
    os.environ["HF_HUB_CACHE"] = os.path.join(
        os.path.expanduser("~"), ".cache", "huggingface", "hub"
    )
os.environ.pop("NEXUS_TOOLS_DIR", None)


@pytest.fixture(autouse=True)
def _no_ambient_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials from the developer's environment must not leak into tests."""
    for key in list(os.environ):
        if key.startswith("NEXUS_CRED_"):
            monkeypatch.delenv(key)
