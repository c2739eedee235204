"""The keyword engine's fast top-k path returns exactly what a full BM25 sort returns."""

from __future__ import annotations

import random

import pytest

from nexus_jupyter.core.search.fts import KeywordEngine
from nexus_jupyter.core.search.text import terms
from nexus_jupyter.core.tools.spec import ToolSpec

# A small vocabulary of made-up words: many rows share each word.
WORDS = [
    a + b
    for a in ("ka", "lo", "mi", "ra", "tu", "ven")
    for b in ("so", "dex", "ar", "ni", "qu", "bel", "tor", "zi")
]


def random_tool(rng: random.Random, name: str) -> ToolSpec:
    # Lengths from 1 to 60 words, so length normalisation (what the bound must cover)
    # varies a lot between rows.
    description = " ".join(rng.choices(WORDS, k=rng.randint(1, 60)))
    short_name = "_".join(rng.choices(WORDS, k=rng.randint(1, 3)))
    return ToolSpec(f"{name}__{short_name}", description)


def full_sort(engine: KeywordEngine, query_terms: list[str], k: int) -> list[tuple[str, float]]:
    """Every matching row scored by SQLite and sorted: the reference answer."""
    return engine.ranked(query_terms)[:k]


@pytest.mark.parametrize(("seed", "length_prior"), [(1, 0), (2, 0), (3, 10), (4, 40)])
def test_top_k_equals_the_full_sort(seed: int, length_prior: int) -> None:
    rng = random.Random(seed)
    engine = KeywordEngine(length_prior)
    tools = [random_tool(rng, f"t{i}") for i in range(3000)]
    engine.upsert_many(tools)
    names = [tool.name for tool in tools]
    assert engine._bound_weights() is not None  # rows are long enough for the bound pass
    checked_two_pass = 0
    for round_ in range(120):
        if round_ % 10 == 0:  # changes in between: row lengths and the shortest row move
            for _ in range(20):
                engine.upsert(random_tool(rng, f"t{rng.randrange(3000)}"))
            gone = names.pop(rng.randrange(len(names)))
            engine.remove(gone)
            assert gone not in {name for name, _ in engine.ranked(terms(gone))}
        query = terms(" ".join(rng.choices(WORDS, k=rng.randint(1, 5))))
        k = rng.choice([1, 5, 10, 20])
        postings = sum(engine.doc_freq(query).values())
        checked_two_pass += postings >= max(400, 4 * k)
        got = engine.ranked(query, limit=k)
        want = full_sort(engine, query, k)
        assert [name for name, _ in got] == [name for name, _ in want], (query, k)
        assert [score for _, score in got] == pytest.approx([score for _, score in want])
    assert checked_two_pass > 50  # the fast path really ran, not only the plain LIMIT query


def test_phrase_presence_follows_updates() -> None:
    engine = KeywordEngine()
    engine.upsert(ToolSpec("post", "Post a message to a Microsoft Teams channel."))
    assert engine.has_phrase(["microsoft", "teams"])
    assert not engine.has_phrase(["teams", "microsoft"])  # order matters
    assert engine.has_phrase(["channel"])
    engine.upsert(ToolSpec("post", "Post a message to a Slack channel."))
    assert not engine.has_phrase(["microsoft", "teams"])
    engine.remove("post")
    assert not engine.has_phrase(["channel"])


def test_the_length_prior_holds_short_rows_less_against_long_ones() -> None:
    short = ToolSpec("alpha", "Rotate the keys.")
    long = ToolSpec(
        "beta", "Rotate the keys of a vault, then report which services, hosts and jobs use them."
    )
    plain, prior = KeywordEngine(), KeywordEngine(length_prior=40)
    for engine in (plain, prior):
        engine.upsert_many([short, long])
    gap = {}
    for label, engine in (("plain", plain), ("prior", prior)):
        scores = dict(engine.ranked(["rotate", "keys"]))
        assert scores["alpha"] > scores["beta"]  # the short row still wins
        gap[label] = scores["alpha"] / scores["beta"]
    assert gap["prior"] < gap["plain"]  # by less: its shortness counts for less
    # The padding is not the tool's text: no term of it is searchable or in the vocabulary.
    assert prior.vocabulary() == plain.vocabulary()
    assert prior.ranked(terms("0 00 000")) == []
    assert prior.fields_of(["alpha"]) == plain.fields_of(["alpha"])
    prior.remove("alpha")
    assert [name for name, _ in prior.ranked(["rotate"])] == ["beta"]
    with pytest.raises(ValueError, match="0 or more"):
        KeywordEngine(length_prior=-1)
