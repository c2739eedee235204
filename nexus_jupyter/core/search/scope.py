"""Named services: a query that asks for a product no installed tool works with.

A request to act inside a hosted product has close neighbours in any catalogue that does
similar things elsewhere, and no similarity score tells them from a right answer. What does
tell is the name: an agent's request usually names the service it means, and when no tool in
the registry mentions that service (in its name, description, parameters, tags or source),
search reports it (:meth:`~.index.SearchIndex.unserved_services`, ``not_installed`` for
agents) and ranks its hits down (:mod:`.index`).

The names come from ``data/services.json`` (:mod:`.vocabulary`): public names of products
and services that tools connect to, written from general knowledge, not from any catalogue
or query set, and extendable in ``nex.yaml`` (``search: {services: [...]}``). The list leaves
out what a query names as a *topic* rather than a place to act (languages, libraries,
databases) and sites a generic web tool can read. Names that are also ordinary words count
only when the query capitalises them mid-sentence.

A name inside a value does not count: quoted text, URLs, e-mail addresses, paths and
``owner/repo``, and the name after "named", "called" or "titled".

>>> from .vocabulary import Vocabulary
>>> vocab = Vocabulary.load(services=["Acmeboard", "Initech Cloud"])
>>> mentioned_services("Create a card on our Acmeboard board", vocab)
['Acmeboard']
>>> mentioned_services("deploy to initech cloud, then star the repo called 'acmeboard'", vocab)
['initech cloud']
"""

from __future__ import annotations

import re

from .slots import NAMED, without_values
from .vocabulary import Vocabulary, default_vocabulary

__all__ = ["mentioned_services"]

# A word as a name spells it: letters and digits, with inner dots, hyphens or a plus
# ("name.com" is one word, and "name-clone" is one word and so not "name").
_TOKEN = re.compile(r"[A-Za-z0-9](?:[\w.+-]*[A-Za-z0-9])?")


def mentioned_services(query: str, vocabulary: Vocabulary | None = None) -> list[str]:
    """The known services ``query`` names outside its values, as written there, in query
    order (each once)."""
    vocab = vocabulary if vocabulary is not None else default_vocabulary()
    by_words, longest = vocab.service_table
    # Besides the values every search leaves out (quotes, URLs, e-mail, paths, owner/repo:
    # :func:`.slots.without_values`), a name given to something: "a repo called X".
    tokens = _TOKEN.findall(NAMED.sub(" ", without_values(query)))
    lowered = [t.lower() for t in tokens]
    out: dict[str, str] = {}
    start = 0
    while start < len(tokens):
        for size in range(min(longest, len(tokens) - start), 0, -1):  # longest name first
            words = tuple(lowered[start : start + size])
            capitalised = by_words.get(words)
            if capitalised is None:
                continue
            if capitalised and (start == 0 or not tokens[start][0].isupper()):
                continue  # an ordinary word, or the query's first word
            name = " ".join(tokens[start : start + size])
            out.setdefault(name.lower(), name)
            start += size - 1
            break
        start += 1
    return list(out.values())
