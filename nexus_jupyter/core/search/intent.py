"""Read or write: whether a query asks to look at something or to change it, and whether a
tool only reads.

Tools that read alike often differ only in that: a cache's ``get`` and ``delete`` both take
a key, ``retrieve_balance`` and ``create_price`` both talk about money. A question ("what is
stored at key user:42", "who are the members of ...") or a request that starts with a reading
verb ("show", "list", "find") asks to read; one that starts with a changing verb ("create",
"approve", "post") asks to write. MCP tools say which they are (``readOnlyHint``); a registry
tool says it by a permission above ``read_only``.

:func:`query_intent` and :func:`tool_intent` return +1 (read), -1 (write) or 0 (cannot tell:
a query that starts with a noun, a tool that declares nothing); their product is the fit
that :mod:`.index` adds to a tool's score. The verbs are general English, shipped in
``data/verbs.json`` (:mod:`.vocabulary`), not taken from any catalogue or query set.

Among tools that write, :func:`query_action` and :func:`tool_action` tell what the change is:
make something new, change what exists, or delete it ("add a note to the record" prefers
``add_note`` to ``edit_note``); a tool whose name has the query's kind of verb gains.

Weights (in :mod:`.index`) were chosen on the toolret dev queries when these signals were
added: read/write lifted hybrid MRR 0.802 -> 0.821 at weight 0.75 and keyword 0.735 -> 0.750
at 0.2; the kind of change added 0.005 keyword MRR and nothing in hybrid.

>>> query_intent("what is stored at key user:42?"), query_intent("please create a repo")
(1, -1)
>>> query_intent("pull requests authored by alice")
0
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..tools.spec import ToolSpec
from .vocabulary import Verbs, default_vocabulary

__all__ = ["query_action", "query_intent", "tool_action", "tool_intent"]

_WORD = re.compile(r"[a-z']+")


def _verbs(verbs: Verbs | None) -> Verbs:
    return verbs if verbs is not None else default_vocabulary().verbs


def query_intent(query: str, verbs: Verbs | None = None) -> int:
    """+1 when ``query`` asks to read, -1 when it asks to change something, 0 when unclear."""
    v = _verbs(verbs)
    words = _WORD.findall(query.lower())
    content = [w for w in words if w not in v.filler]
    verb = content[0] if content else ""
    if verb in v.write:
        return -1
    if (words and words[0] in v.question) or query.rstrip().endswith("?") or verb in v.read:
        return 1
    return 0


def query_action(query: str, verbs: Verbs | None = None) -> str | None:
    """``"create"``, ``"change"`` or ``"delete"`` by the verb ``query`` starts with (after
    words like "please" or "can you"), or ``None``."""
    v = _verbs(verbs)
    content = [w for w in _WORD.findall(query.lower()) if w not in v.filler]
    return v.query_actions.get(content[0]) if content else None


def tool_action(name_words: list[str], verbs: Verbs | None = None) -> str | None:
    """The kind of change a tool makes by the first action verb among the words of its own
    name (``["notes", "add", "entry"]`` -> ``"create"``), or ``None``."""
    actions = _verbs(verbs).tool_actions
    return next((actions[w] for w in name_words if w in actions), None)


def tool_intent(spec: ToolSpec) -> int:
    """+1 for a tool that only reads, -1 for one that changes things, 0 when undeclared (a
    registry tool's default ``read_only`` is not a declaration; a built-in tool's is, since
    each built-in states its permission)."""
    hints = spec.annotations if isinstance(spec.annotations, Mapping) else {}
    # readOnlyHint is the read/write flag; destructiveHint only grades a write (counting it
    # alone as a write lowered dev hybrid MRR 0.821 -> 0.807, so it is left out).
    if "readOnlyHint" in hints:
        return 1 if hints["readOnlyHint"] is True else -1
    if spec.permission != "read_only":
        return -1
    return 1 if spec.source_kind == "builtin" else 0
