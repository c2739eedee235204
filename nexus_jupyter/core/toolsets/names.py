"""The built-in toolsets and the session modes: plain constants, so the faces that only name
them (``%tool mode``, the policy) need not import pydantic at ``%load_ext``."""

from __future__ import annotations

from typing import Literal

__all__ = ["BUILTIN_TOOLSETS", "SESSION_MODES", "SessionMode"]

#: ``default``: the three tiers decide (danger_full_access asks); ``prompt``: every call
#: above read-only asks; ``allow``: everything granted runs without asking, except tools that
#: themselves say they need approval.
SessionMode = Literal["default", "prompt", "allow"]
SESSION_MODES: tuple[SessionMode, ...] = ("default", "prompt", "allow")

#: The built-in toolsets and their tools.
BUILTIN_TOOLSETS: dict[str, tuple[str, ...]] = {
    "files": ("read", "ls", "glob", "grep", "write", "edit"),
    "shell": ("bash",),
    "web": ("web_fetch", "web_search"),
    "meta": ("tool_search", "create_dynamic_tool"),
}
