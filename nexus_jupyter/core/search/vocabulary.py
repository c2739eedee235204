"""The word lists search reads queries with, shipped as data files and extendable in ``nex.yaml``.

``data/services.json`` lists hosted products that tools connect to (a query naming one no
installed tool mentions is unserved, :mod:`.scope`); ``data/abbreviations.json`` gives the
long form of developer shorthand (:func:`.text.query_terms`); ``data/verbs.json`` holds the
general English verbs and fillers that tell a question from a command (:mod:`.intent`). None
is written from a catalogue or a query set; code holds no such words.

A project adds its own in ``nex.yaml``::

    search:
      services: [Acmeboard, "Initech Cloud"]   # matched in any case, as phrases
      abbreviations: {kb: knowledge base}

>>> vocab = Vocabulary.load(services=["Acmeboard"], abbreviations={"kb": "knowledge base"})
>>> "acmeboard" in vocab.services and vocab.abbreviations["kb"]
('knowledge', 'base')
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

__all__ = ["Verbs", "Vocabulary", "default_vocabulary"]


def _data(name: str) -> Any:
    return json.loads(resources.files(__package__).joinpath("data", name).read_text("utf-8"))


def _words(items: Iterable[str]) -> frozenset[str]:
    return frozenset(w.lower() for item in items for w in item.split())


@dataclass(frozen=True)
class Verbs:
    """Words that say what a request wants (see :mod:`.intent`)."""

    filler: frozenset[str]
    question: frozenset[str]
    read: frozenset[str]
    write: frozenset[str]
    query_actions: Mapping[str, str]  # verb -> "create" | "change" | "delete"
    tool_actions: Mapping[str, str]


@dataclass(frozen=True)
class Vocabulary:
    """Services, abbreviations and verbs; :meth:`load` reads the shipped files plus extras.

    ``services`` maps a name's lower-cased words to whether it must be capitalised in the
    query to count (names that are also ordinary words).
    """

    services: Mapping[str, bool]
    abbreviations: Mapping[str, tuple[str, ...]]
    verbs: Verbs
    #: How a one-word service a project lists is written ("paypal" -> "PayPal"), when that is
    #: not in lower case (the shipped names are matched in lower case and have none).
    spellings: Mapping[str, str] = field(default_factory=dict)

    @functools.cached_property
    def service_table(self) -> tuple[dict[tuple[str, ...], bool], int]:
        """The services by their words, and the most words a name has (for matching)."""
        table = {tuple(name.split()): capitalised for name, capitalised in self.services.items()}
        return table, max((len(words) for words in table), default=1)

    @classmethod
    def load(
        cls,
        *,
        services: Iterable[str] = (),
        abbreviations: Mapping[str, str] | None = None,
    ) -> Vocabulary:
        """The shipped lists, with ``services`` and ``abbreviations`` added (a project's
        entries win over shipped ones)."""
        shipped = default_vocabulary()
        services = list(services)
        extra_services = {" ".join(n.lower().split()): False for n in services if n.strip()}
        extra_abbr = {k.lower(): tuple(v.lower().split()) for k, v in (abbreviations or {}).items()}
        return cls(
            services={**shipped.services, **extra_services},
            abbreviations={**shipped.abbreviations, **extra_abbr},
            verbs=shipped.verbs,
            spellings={**shipped.spellings, **_spellings(services)},
        )


@functools.cache
def default_vocabulary() -> Vocabulary:
    """The lists shipped in ``core/search/data`` (read once per process)."""
    raw_services = _data("services.json")
    services: dict[str, bool] = {}
    for names in raw_services["any_case"].values():
        services.update({" ".join(n.lower().split()): False for n in names})
    services.update({" ".join(n.lower().split()): True for n in raw_services["capitalised"]})
    abbreviations = {
        short: tuple(long.split())
        for short, long in _data("abbreviations.json").items()
        if not short.startswith("_")
    }
    raw_verbs = _data("verbs.json")

    def kinds(table: Mapping[str, list[str]]) -> dict[str, str]:
        return {word: kind for kind, words in table.items() for word in words}

    verbs = Verbs(
        filler=_words(raw_verbs["filler"]),
        question=_words(raw_verbs["question"]),
        read=_words(raw_verbs["read"]),
        write=_words(raw_verbs["write"]),
        query_actions=kinds(raw_verbs["query_actions"]),
        tool_actions=kinds(raw_verbs["tool_actions"]),
    )
    return Vocabulary(services, abbreviations, verbs)


def _spellings(names: Iterable[str]) -> dict[str, str]:
    """One-word names not written in lower case, by their lower case."""
    return {n.strip().lower(): n.strip() for n in names if len(n.split()) == 1 and not n.islower()}
