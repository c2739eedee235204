"""Every hit is confident on its own: searched through the public ``Registry`` API."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_jupyter import Registry
from nexus_jupyter.core.search.index import DEFAULT_THRESHOLDS, semantic_missing

MODES = ["keyword", "hybrid"]


def _skip_without_semantic(mode: str) -> None:
    if mode == "hybrid" and semantic_missing():
        pytest.skip(f"semantic extra missing ({semantic_missing()})")


@pytest.fixture
def builtins_registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Registry]:
    mode = request.param
    _skip_without_semantic(mode)
    reg = Registry.default(root=tmp_path, watch=False, mcp=False, search=mode)
    yield reg
    reg.close()


def _garden_registry(mode: str) -> Registry:
    """Tools that share no words with each other's purpose."""
    _skip_without_semantic(mode)
    reg = Registry(search=mode)

    def water_plants(bed: str, litres: float) -> str:
        """Water the plants in a garden bed with the given amount of water."""
        return bed

    def convert_currency(amount: float, source: str, target: str) -> float:
        """Convert an amount of money from one currency to another at today's rate."""
        return amount

    def transcribe_audio(recording: str) -> str:
        """Transcribe speech in an audio recording into text."""
        return recording

    for fn in (water_plants, convert_currency, transcribe_audio):
        reg.add(fn)
    return reg


@pytest.mark.parametrize("builtins_registry", MODES, indirect=True)
def test_a_query_no_builtin_fits_returns_no_hit(builtins_registry: Registry) -> None:
    assert builtins_registry.search("add two numbers") == []
    assert builtins_registry.search("compute the area of a circle") == []


@pytest.mark.parametrize("builtins_registry", MODES, indirect=True)
def test_every_hit_passes_the_threshold_on_its_own(builtins_registry: Registry) -> None:
    threshold = builtins_registry.search_index.threshold
    for query in ("list the files in a folder", "find python files", "run a shell command"):
        hits = builtins_registry.search(query)
        assert hits, query
        assert all(threshold <= h.score <= 1.0 for h in hits), (query, hits)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)  # a caller's cut keeps a prefix


@pytest.mark.parametrize("mode", MODES)
def test_a_query_one_tool_fits_returns_that_tool_alone(mode: str) -> None:
    reg = _garden_registry(mode)
    try:
        assert [h.name for h in reg.search("water the plants in the garden bed")] == [
            "water_plants"
        ]
        assert [h.name for h in reg.search("convert money to another currency")] == [
            "convert_currency"
        ]
    finally:
        reg.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_stricter_threshold_keeps_only_hits_at_or_above_it(mode: str) -> None:
    reg = _garden_registry(mode)
    try:
        hits = reg.search("transcribe speech from a recording", threshold=0.0)
        assert hits and hits[0].name == "transcribe_audio"
        strict = reg.search("transcribe speech from a recording", threshold=hits[0].score + 0.01)
        assert strict == []
        assert DEFAULT_THRESHOLDS[reg.search_index.mode] > 0
    finally:
        reg.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_query_of_letters_search_cannot_read_returns_no_hit(mode: str) -> None:
    """No tool has the words, no dictionary, service list or abbreviation list does, and the
    sentence model has none whole: its similarity to such letters is noise, so nothing is
    confident (hybrid offered multiply for "zzzqqqxx" and jira_search for "xqzv" before)."""
    from nexus_jupyter.core.tools.tool import Tool

    _skip_without_semantic(mode)
    reg = Registry(search=mode)
    for name, description in [
        ("greet", "Greet someone (asks for approval: see nex.yaml)."),
        ("multiply", "Multiply two integers."),
        ("search_traces", "Search for traces using TraceQL queries."),
        ("press_key", "Press a key on the keyboard."),
        ("jira_search", "Search Jira issues using JQL (Jira Query Language)."),
    ]:
        reg.add(Tool.from_schema(name, description, {"type": "object"}, lambda args: None))
    try:
        for letters in ("zzzqqqxx", "xqzv", "qqqq zzzz"):
            assert reg.search(letters) == [], letters
        # one word search can read is enough for a fitting tool to stay
        assert [h.name for h in reg.search("zzzqqqxx multiply")][:1] == ["multiply"]
    finally:
        reg.close()


def test_a_word_the_model_knows_whole_is_read() -> None:
    """The gate looks at words, not at whether the catalogue has them: a word the sentence
    model has as one word piece keeps the query readable even in an empty catalogue."""
    from nexus_jupyter.core.search.fts import KeywordEngine
    from nexus_jupyter.core.search.spelling import QuerySpelling
    from nexus_jupyter.core.search.vocabulary import default_vocabulary

    engine = KeywordEngine()
    spelling = QuerySpelling(engine, default_vocabulary())
    knows = {"berlin"}.__contains__
    assert spelling.reads_a_word(["berlin"], knows)
    assert spelling.reads_a_word(["zzzq", "weather"], knows)  # an English word
    assert spelling.reads_a_word(["pr"], knows)  # an abbreviation search expands
    assert not spelling.reads_a_word(["zzzq", "xqzv"], knows)


def test_a_hit_far_below_the_best_one_is_not_shown() -> None:
    from nexus_jupyter.core.search.confidence import Candidate, confident

    ranked = [Candidate("a", 3.0, 0.9), Candidate("b", 2.9, 0.5), Candidate("c", 2.8, 0.3)]
    names = [c.name for c in confident(ranked, 0.2, 10.0, share=0.4)]
    assert names == ["a", "b"]  # 0.3 < 0.4 * 0.9
    # an exact name found before these sets the bar at 1
    assert [c.name for c in confident(ranked, 0.2, 10.0, share=0.4, best=1.0)] == ["a", "b"]
    assert [c.name for c in confident(ranked, 0.2, 10.0, share=0.6, best=1.0)] == ["a"]
    assert [c.name for c in confident(ranked, 0.2, 10.0)] == ["a", "b", "c"]


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_named_exactly_is_not_shown_with_loose_neighbours(mode: str) -> None:
    """ "roll dice" among small math and text tools: roll_dice by name, and none of the
    tools that only share the catalogue's topic (hybrid listed five at cosine 0.2 before)."""
    from nexus_jupyter.core.tools.tool import Tool

    _skip_without_semantic(mode)
    reg = Registry(search=mode)
    for name, description in [
        ("roll_dice", "Roll dice with the given number of sides and return each face."),
        ("multiply", "Multiply two numbers."),
        ("word_count", "Count the words, lines and characters of a text."),
        ("week_to_day", "Convert weeks to days."),
        ("describe_numbers", "Mean, median and standard deviation of a list of numbers."),
        ("t_to_lb", "Convert metric tonnes to pounds."),
        ("fibonacci", "The first n Fibonacci numbers."),
    ]:
        reg.add(Tool.from_schema(name, description, {"type": "object"}, lambda args: None))
    try:
        assert [h.name for h in reg.search("roll dice")] == ["roll_dice"]
        assert [h.name for h in reg.search("roll_dice")] == ["roll_dice"]
    finally:
        reg.close()
