"""Text for search: identifier splitting, query terms, and the searchable fields of a tool.

Both sides of a keyword search go through :func:`terms`, so ``listDirectory``,
``list_directory``, ``list-directory`` and "list directory" all meet at
``["list", "directory"]``. There is no stemming: singular and plural tell ``get_issue`` from
``list_issues``; a plural-only stemmer lowered recall@1 on the toolret queries, as Porter did.

>>> split_identifier("mcp__github__getPullRequest")
['mcp', 'github', 'get', 'pull', 'request', 'getpullrequest']
>>> terms("What's inside the /data folder?")
['inside', 'data', 'folder']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..tools.spec import ToolSpec

__all__ = [
    "FIELDS",
    "STOPWORDS",
    "embedding_text",
    "embedding_texts",
    "normalize_name",
    "query_terms",
    "split_identifier",
    "terms",
    "tool_fields",
]

#: The keyword columns of a tool, in index order.
FIELDS: tuple[str, ...] = ("name", "summary", "description", "parameters", "tags", "source")

# Words that carry no signal about which tool is meant; kept short on purpose
# (no domain words like "file" or "list", which do discriminate between tools).
STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "do",
        "does",
        "did",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "i'd",
        "i'm",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "it's",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "ours",
        "please",
        "s",
        "so",
        "some",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "us",
        "very",
        "was",
        "we",
        "were",
        "what",
        "what's",
        "whats",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "just",
        "any",
        "all",
        "also",
        "about",
        "up",
        "out",
        "via",
        # the scheme and top-level parts of a URL in a query describe no tool
        "http",
        "https",
        "www",
        "com",
        "org",
    ]
)

# Splits camelCase and acronym boundaries: "getHTTPResponse" -> get HTTP Response.
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD_RE = re.compile(r"[A-Za-z0-9]+(?:'[a-z]+)?")


def split_identifier(text: str) -> list[str]:
    """Lower-cased parts of an identifier split on ``_``, ``-``, ``.``, ``/`` and camelCase."""
    out: list[str] = []
    for chunk in _WORD_RE.findall(text):
        out.extend(_camel_parts(chunk))
    return out


def _camel_parts(word: str) -> list[str]:
    parts = [part.lower() for part in _CAMEL_RE.findall(word.replace("'", ""))]
    if len(parts) > 1 and not word.islower() and not word.isupper():
        # Names written in mixed case in prose ("DataBase" style) also stay whole, so a
        # query typed in lower case meets them.
        whole = "".join(parts)
        if not whole.isdigit() and any(c.isalpha() for c in whole):
            parts = [*parts, whole]
    return parts


def terms(text: str, *, keep_stopwords: bool = False) -> list[str]:
    """Search terms of free text: words and identifier parts, lower-cased, stop words dropped."""
    out: list[str] = []
    for raw in _WORD_RE.findall(text):
        out.extend(_word_terms(raw, keep_stopwords))
    return out


def query_terms(text: str, abbreviations: Mapping[str, tuple[str, ...]] | None = None) -> list[str]:
    """:func:`terms` of a query, each abbreviation followed by its long form unless the query
    spells that out already (``abbreviations``: short -> long words, ``data/abbreviations.json``
    by default, :mod:`.vocabulary`; ``{}`` turns expansion off)."""
    out = terms(text)
    if abbreviations is None:
        from .vocabulary import default_vocabulary

        abbreviations = default_vocabulary().abbreviations
    extra = [t for word in out for t in abbreviations.get(word, ())]
    return out + [t for t in dict.fromkeys(extra) if t not in out]


@functools.lru_cache(maxsize=65536)
def _word_terms(raw: str, keep_stopwords: bool) -> tuple[str, ...]:
    # Cached: tool texts repeat a small vocabulary, and every update splits a whole tool.
    if not keep_stopwords and (raw.lower() in STOPWORDS or _is_value(raw)):
        return ()
    return tuple(
        part
        for part in _camel_parts(raw)
        if keep_stopwords or (part not in STOPWORDS and _is_word(part))
    )


_HEX = frozenset("0123456789abcdefABCDEF")


def _is_value(raw: str) -> bool:
    """A long token mixing letters and digits is an id or a hash ("9e107d9d372bb682",
    "a1b2c3d4e5"), not words: split by camelCase it gave fragments ("bf", "da") that no
    tool has, whose high IDF then sank every tool below the confidence threshold. Short
    ones stay words ("s3", "ec2", "base64"), as do names with a version ("python3")."""
    if len(raw) < 7:
        return False
    digits = sum(c.isdigit() for c in raw)
    return digits > 0 and (digits * 4 >= len(raw) or (set(raw) <= _HEX and digits * 8 >= len(raw)))


def _is_word(part: str) -> bool:
    # Single letters and numbers are values (ids, counts, hashes split by camelCase), not
    # words that tell tools apart.
    return len(part) > 1 and not part.isdigit()


def normalize_name(text: str) -> str:
    """A name reduced to its words, for exact-name comparison: ``getMe`` == ``get_me``."""
    return " ".join(split_identifier(text))


def _schema_texts(schema: Any, depth: int = 0) -> Iterator[str]:
    """Parameter names, titles, descriptions and enum values of a JSON schema, nested too."""
    if depth > 6 or not isinstance(schema, (dict, Mapping)):
        return  # (the dict check first: isinstance against an ABC is slow, and this is hot)
    for key in ("title", "description"):
        value = schema.get(key)
        if isinstance(value, str) and depth > 0:
            yield value
    enum = schema.get("enum")
    if isinstance(enum, list):
        yield " ".join(str(v) for v in enum if isinstance(v, str | int | float))
    props = schema.get("properties")
    if isinstance(props, (dict, Mapping)):
        for pname, sub in props.items():
            yield str(pname)
            yield from _schema_texts(sub, depth + 1)
    for key in ("items", "additionalProperties"):
        yield from _schema_texts(schema.get(key), depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        subs = schema.get(key)
        if isinstance(subs, list):
            for sub in subs:
                yield from _schema_texts(sub, depth + 1)


def _source_words(spec: ToolSpec) -> str:
    # "mcp:github" -> "github"; the kind itself ("mcp") says little about what a tool does.
    parts = [spec.source.split(":", 1)[-1] if spec.source else ""]
    return " ".join(p for p in parts if p)


def _title(spec: ToolSpec) -> str:
    title = spec.annotations.get("title") if isinstance(spec.annotations, Mapping) else None
    return title if isinstance(title, str) else ""


def tool_fields(spec: ToolSpec) -> dict[str, str]:
    """The keyword fields of a tool as space-joined terms, one entry per :data:`FIELDS`."""
    description = spec.description.strip()
    first = _first_sentence(description)
    summary = terms(first + "\n" + _title(spec))
    fields = {
        "name": split_identifier(spec.name),
        "summary": summary,  # what the tool is for, counted once more
        "description": summary + terms(description[len(first) :]),
        "parameters": terms(" ".join(_schema_texts(spec.input_schema))),
        "tags": terms(" ".join((*spec.categories, *spec.capabilities))),
        "source": terms(_source_words(spec)),
    }
    return {key: " ".join(value) for key, value in fields.items()}


def embedding_text(spec: ToolSpec, max_chars: int = 1000) -> str:
    """What the sentence model reads for a tool: its name as words, title and description."""
    name = " ".join(split_identifier(spec.name))
    parts = [name, _title(spec), spec.description.strip()]
    text = ". ".join(p for p in parts if p)
    return text[:max_chars]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def _first_sentence(text: str) -> str:
    text = text.strip()
    end = _SENTENCE_END.search(text)
    return text[: end.start()] if end else text


def embedding_texts(spec: ToolSpec) -> tuple[str, str, str]:
    """The views of a tool the sentence model embeds; a query's similarity to the tool is the
    best of the three. Each alone misses what another finds (on the toolret queries each
    view alone had recall@5 0.78-0.80, the best of three 0.86):

    - the name as words, title and description (:func:`embedding_text`);
    - short: source, own name, title and first sentence, close to a one-line request;
    - long: all of it plus the parameters, for queries about a detail or an argument.
    """
    source = _source_words(spec)
    own = " ".join(split_identifier(spec.name.rsplit("__", 1)[-1]))
    head = f"{source}: {own}" if source else own
    title = _title(spec)
    short = ". ".join(p for p in (head, title, _first_sentence(spec.description)) if p)
    params = ", ".join(_schema_texts(spec.input_schema))
    long = ". ".join(p for p in (head, title, spec.description.strip()) if p)
    if params:
        long += ". Parameters: " + params
    return embedding_text(spec), short, long[:1500]
