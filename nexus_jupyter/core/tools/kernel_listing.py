"""What a kernel's tool listing carries for the Jupyter server, in the words both sides use.

A notebook's kernel serves its tools over MCP (:mod:`nexus_jupyter.notebook.kernel_link`)
and the Jupyter server reads that listing (:mod:`nexus_jupyter.serve.jupyter_kernels`): the
keys of the ``_meta`` each tool's entry carries, and the name of the kernel's private tool,
live here so that neither face imports the other to agree on them.
"""

from __future__ import annotations

__all__ = [
    "APPROVAL_META_KEY",
    "APPROVAL_WHY_META_KEY",
    "CALLS_META_KEY",
    "KERNEL_TESTS_TOOL",
    "OLD_TESTS_META_KEY",
    "TESTS_META_KEY",
]

#: the figures of the calls the notebook made of the tool (a ``ToolStats`` dict)
CALLS_META_KEY = "nexus-jupyter/calls"
#: ``True``: the kernel's session asks before a call of the tool (read by the server as
#: ``ToolSpec.needs_approval``, the key :mod:`nexus_jupyter.serve.mcp_bridge` writes too)
APPROVAL_META_KEY = "nexus-jupyter/needs_approval"
#: why the session asks (read by the server as ``ToolSpec.approval_why``)
APPROVAL_WHY_META_KEY = "nexus-jupyter/approval_why"
#: the tool's test status and cases, as the kernel runs them
TESTS_META_KEY = "nexus-jupyter/tests"
#: how a kernel of an earlier release spelt :data:`TESTS_META_KEY`
OLD_TESTS_META_KEY = "nexus_jupyter/tests"
#: the kernel's private tool (callable, never listed): save and run a notebook tool's cases
KERNEL_TESTS_TOOL = "_nexus_tests"
