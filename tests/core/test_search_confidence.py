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
