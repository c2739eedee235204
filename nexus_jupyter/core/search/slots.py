"""Argument slots: the values a query already carries, matched to the parameters a tool takes.

A request for a tool usually names some of its arguments: "show the diff of change #512 in
octo/widgets" carries a number and an owner/repo, "open span 9e107d9d..." a hex id, "save
https://example.com as markdown" a URL. Among tools that read alike, the one whose parameters
can take those values is the better answer (``get_span(spanId)`` over
``search_spans(query)``). :func:`query_slots` finds the kinds of value in a query;
:func:`slot_share` is the share of them that a tool has a parameter for, by its parameter
names split into words.

The value kinds and the parameter words that take them are generic API vocabulary, not
tuned to any catalogue. Measured on the toolret dev queries (``benchmarks/search_quality.py``)
when added: hybrid MRR 0.781 -> 0.802 at weight 0.75 (0.5-1.5 all within 0.794-0.802),
keyword MRR 0.725 -> 0.735 at 0.2; recall@5 unchanged in both modes.

>>> slot_names(query_slots("open span 9e107d9d372bb682 at 14:05"))
['time', 'hex id', 'number']
>>> slot_share(tool_slots({"properties": {"spanId": {}}}), query_slots("open span 9e107d9d1a"))
1.0

Both sides are bit masks over the kinds of value, so scoring a candidate is one ``&``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from .text import split_identifier

__all__ = [
    "NAMED",
    "outside_values",
    "query_slots",
    "slot_names",
    "slot_share",
    "tool_slots",
    "without_values",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# "notes/todo.md", "~/Downloads", "/data", or a bare file name with a common extension
_PATH = (
    r"(?<![\w/:])(?:~|\.{1,2})?/[\w.-]+[\w./-]*"
    r"|\b[\w.-]+/[\w./-]+"
    r"|\b[\w-]+\.(?:py|md|txt|json|ya?ml|csv|pdf|js|ts|toml|log|html?)\b"
)
# (kind of value, how it looks, parameter words that take it)
_SLOTS: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = tuple(
    (kind, re.compile(pattern), _words(words))
    for kind, pattern, words in (
        ("url", r"https?://\S+", "url uri link href"),
        ("email", r"\b[\w.+-]+@[\w-]+\.[\w.]+\b", "email to recipient recipients"),
        (
            "date",
            r"\b\d{4}-\d{2}-\d{2}\b",
            "date time timestamp since until start end from after before",
        ),
        ("time", r"\b\d{1,2}:\d{2}\b", "time timestamp date start end at"),
        # a host, an address or a port: "localhost:8080", "10.0.0.5", "port 5432"
        (
            "address",
            r"\blocalhost\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|\bports?\s+\d{2,5}\b",
            "port host hostname address ip",
        ),
        ("path", _PATH, "path paths file filename directory dir folder source destination"),
        ("owner/repo", r"\b[\w.-]+/[\w.-]+\b", "owner repo repository"),
        (
            "hex id",
            r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b",
            "sha id hash commit ref revision uid trace",
        ),
        # a git revision relative to a ref: "HEAD~3", "HEAD^", "main~2"
        ("revision", r"\bHEAD\b(?:[~^]\d*)*|\b[\w./-]+[~^]\d+\b", "revision rev ref commit sha"),
        ("number", r"(?:#|\b)\d+\b", "number id num count limit index issue pull page"),
    )
)


# Text a query gives as a value rather than as words about the tool: quoted text, URLs,
# e-mail addresses, paths and owner/repo.
_VALUES = re.compile(
    r"""(?<!\w)'[^']+'(?!\w)|"[^"]*"|`[^`]*`|“[^”]*”|https?://\S+|\b[\w.+-]+@[\w-]+\.[\w.]+\b|"""
    + _PATH
)


def without_values(query: str) -> str:
    """``query`` with its argument values blanked out: the words of "post 'deploy finished'
    to #eng" or "grab https://example.com/blog/post" that say which tool is meant are not
    inside the quotes or the URL, and a tool that merely mentions "post" or "blog" is no
    better an answer for them."""
    return _VALUES.sub(" ", query)


# The name a query gives to something: "a repo called X", "a page titled X".
NAMED = re.compile(r"\b(?:named|called|titled)\s+\S+", re.I)
_VALUES_OR_NAMES = re.compile(f"{_VALUES.pattern}|(?i:{NAMED.pattern})")


def outside_values(query: str, change: Callable[[str], str], *, names: bool = False) -> str:
    """``query`` with ``change`` applied to the text between its argument values (the values
    themselves, as :func:`without_values` finds them, are kept as written; with ``names``,
    so is the name after "called", "named" or "titled")."""
    out, start = [], 0
    for match in (_VALUES_OR_NAMES if names else _VALUES).finditer(query):
        out += [change(query[start : match.start()]), match.group(0)]
        start = match.end()
    out.append(change(query[start:]))
    return "".join(out)


def query_slots(query: str) -> int:
    """The kinds of argument value ``query`` carries, as a bit mask (bit ``i`` for the
    ``i``-th kind); a kind counts once however often it occurs."""
    mask = 0
    for bit, (_, pattern, _words) in enumerate(_SLOTS):
        if pattern.search(query):
            mask |= 1 << bit
    return mask


def slot_names(mask: int) -> list[str]:
    """The kinds of value in ``mask``, for people."""
    return [kind for bit, (kind, _, _) in enumerate(_SLOTS) if mask >> bit & 1]


def tool_slots(input_schema: Mapping[str, Any] | None) -> int:
    """The kinds of value a tool has a parameter for, as a bit mask, by the words of its
    top-level parameter names (``pullNumber`` -> pull, number -> a number)."""
    props = input_schema.get("properties") if isinstance(input_schema, Mapping) else None
    if not isinstance(props, Mapping):
        return 0
    return _slots_of(tuple(str(name) for name in props))


@functools.lru_cache(maxsize=4096)
def _slots_of(param_names: tuple[str, ...]) -> int:
    # Cached: catalogues repeat parameter lists, and every registry update asks again.
    words = {word for name in param_names for word in split_identifier(name)}
    mask = 0
    for bit, (_, _, takes) in enumerate(_SLOTS):
        if words & takes:
            mask |= 1 << bit
    return mask


def slot_share(tool: int, query: int) -> float:
    """The share of the query's kinds of value that the tool has a parameter for."""
    return (tool & query).bit_count() / query.bit_count() if query else 0.0
