"""Read or write: whether a query asks to look at something or to change it, and whether a
tool only reads.

Tools that read alike often differ only in that: ``redis get`` and ``redis delete`` both take
a key, ``retrieve_balance`` and ``create_price`` both talk about money. A question ("what's
stored at key user:42", "who are the members of ...") or a request that starts with a reading
verb ("show", "list", "find") asks to read; one that starts with a changing verb ("create",
"approve", "post") asks to write. MCP tools say which they are (``readOnlyHint``); a registry
tool says it by a permission above ``read_only``.

:func:`query_intent` and :func:`tool_intent` return +1 (read), -1 (write) or 0 (cannot tell:
a query that starts with a noun, a tool that declares nothing); their product is the fit
that :mod:`.search` adds to a tool's score. The verb lists are general English, not taken
from any catalogue. Measured on the toolret queries (``benchmarks/search_quality.py``), on
top of :mod:`.search_slots`: hybrid recall@1 0.733 -> 0.756, recall@5 0.889 -> 0.911, MRR
0.802 -> 0.821 at weight 0.75 (weights 0.5-1.0 within 0.818-0.821; both halves gain);
keyword MRR 0.735 -> 0.750, recall@5 0.811 -> 0.833 at weight 0.2.

Among tools that write, :func:`query_action` and :func:`tool_action` tell what the change is:
make something new, change what exists, or delete it ("leave a comment on OPS-88" ->
``jira_add_comment``, not ``jira_edit_comment``); a tool whose name has the query's kind of
verb gains. Measured on the toolret queries (weight 0.2 keyword, 0.75 hybrid, as for the
other fit signals): keyword recall@1 0.689 -> 0.700 and MRR 0.749 -> 0.754, hybrid unchanged;
on the second query set (``benchmarks/data/toolret-check-queries.json``) hybrid recall@1
0.650 -> 0.683 and MRR 0.771 -> 0.791, keyword within 0.002. Weights 0.1-0.2 (keyword) and
0.5-1.0 (hybrid) land within 0.01 of these.

>>> query_intent("what's stored at key user:42?"), query_intent("please create a repo")
(1, -1)
>>> query_intent("pull requests authored by alice")
0
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..tools.spec import ToolSpec

__all__ = ["query_action", "query_intent", "tool_action", "tool_intent"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words before the verb of a request: "please", "can you", "I want to", "let's".
_FILLER = _words(
    "please kindly just can could would will you i we let's lets let us me want need like to "
    "go ahead and then now quickly i'd i'm i'll we'd"
)
_QUESTION = _words(
    "what what's whats which who who's whom whose when where why how is are was were does do "
    "did has have"
)
_READ = _words(
    "show list get find read print display view check search look lookup tell give fetch see "
    "count describe explain inspect browse query retrieve summarize compare preview download "
    "export grab"
)
_WRITE = _words(
    "create add delete remove update set post send file save write approve reject merge close "
    "reopen assign unassign star unstar move rename upload mark respond reply cache put make "
    "start stop run trigger cancel comment edit change invite reset pay publish deploy restart "
    "scale rollback roll revert archive restore enable disable install uninstall insert append "
    "drop kill terminate tag label lock unlock share schedule book order submit push fork copy "
    "transfer refund charge subscribe unsubscribe follow unfollow block pin unpin react like "
    "vote fill click type press navigate drag hover select accept dismiss resolve forward hand "
    "store record log register clear wipe erase purge flush"
)
_WORD = re.compile(r"[a-z']+")


def query_intent(query: str) -> int:
    """+1 when ``query`` asks to read, -1 when it asks to change something, 0 when unclear."""
    words = _WORD.findall(query.lower())
    content = [w for w in words if w not in _FILLER]
    verb = content[0] if content else ""
    if verb in _WRITE:
        return -1
    if (words and words[0] in _QUESTION) or query.rstrip().endswith("?") or verb in _READ:
        return 1
    return 0


# Among tools that write, what the change is: make something new, change something that
# exists, or delete it. Tools say it with the verb of their name (``add_comment``,
# ``edit_comment``, ``delete_comment``), a request with its verb ("leave a comment on ...",
# "rename the page", "drop the table"). Verbs that say nothing of the kind ("write",
# "set up") are in no list.
_QUERY_ACTIONS = {
    "create": "create add post new insert append make open file leave submit comment reply "
    "respond start fork upload send put declare",
    "change": "update edit modify patch rename move transition change replace mark assign",
    "delete": "delete remove uninstall drop destroy erase wipe purge",
}
_TOOL_ACTIONS = {
    "create": "create add post new insert append fork upload",
    "change": "update edit modify patch rename move transition replace",
    "delete": "delete remove uninstall drop destroy",
}
_QUERY_ACTION = {w: kind for kind, words in _QUERY_ACTIONS.items() for w in words.split()}
_TOOL_ACTION = {w: kind for kind, words in _TOOL_ACTIONS.items() for w in words.split()}


def query_action(query: str) -> str | None:
    """``"create"``, ``"change"`` or ``"delete"`` by the verb ``query`` starts with (after
    words like "please" or "can you"), or ``None``."""
    content = [w for w in _WORD.findall(query.lower()) if w not in _FILLER]
    return _QUERY_ACTION.get(content[0]) if content else None


def tool_action(name_words: list[str]) -> str | None:
    """The kind of change a tool makes by the first action verb among the words of its own
    name (``["jira", "add", "comment"]`` -> ``"create"``), or ``None``."""
    return next((_TOOL_ACTION[w] for w in name_words if w in _TOOL_ACTION), None)


def tool_intent(spec: ToolSpec) -> int:
    """+1 for a tool that only reads, -1 for one that changes things, 0 when undeclared (a
    registry tool's default ``read_only`` is not a declaration)."""
    hints = spec.annotations if isinstance(spec.annotations, Mapping) else {}
    # readOnlyHint is the read/write flag; destructiveHint only grades a write (counting it
    # alone as a write lowered toolret hybrid MRR 0.821 -> 0.807, so it is left out).
    if "readOnlyHint" in hints:
        return 1 if hints["readOnlyHint"] is True else -1
    return -1 if spec.permission != "read_only" else 0
