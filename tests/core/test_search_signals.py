"""Each optional search signal, on constructed tools: what it changes, and that it switches off
(through ``Registry(search=...)``, ``SearchIndex`` options and ``nex.yaml``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import ConfigError
from nexus_jupyter.core.search.confidence import INTENT_PENALTY
from nexus_jupyter.core.search.index import SearchIndex, semantic_missing
from nexus_jupyter.core.search.options import SearchOptions
from nexus_jupyter.core.tools.spec import ToolSpec


def _index(tools: list[ToolSpec], mode: str = "keyword", **options: Any) -> SearchIndex:
    if mode == "hybrid" and semantic_missing():
        pytest.skip(f"semantic extra missing ({semantic_missing()})")
    idx = SearchIndex({"mode": mode, **options})
    idx.update(tools)
    return idx


def _names(idx: SearchIndex, query: str) -> list[str]:
    return [h.name for h in idx.search(query)]


def test_abbreviations_search_their_long_form_and_switch_off() -> None:
    tools = [
        ToolSpec("list_merge_requests", "List the merge requests of a project."),
        ToolSpec("search_knowledge_base", "Search articles in the knowledge base."),
    ]
    on = _index(tools, abbreviations={"kb": "knowledge base"})
    assert _names(on, "show open MRs")[0] == "list_merge_requests"  # shipped: mrs
    assert _names(on, "look it up in the kb") == ["search_knowledge_base"]  # from options
    off = _index(tools, abbreviations={"kb": "knowledge base"}, signals={"abbreviations": False})
    assert _names(off, "look it up in the kb") == []
    assert "list_merge_requests" not in _names(off, "show open MRs")


def test_slots_prefer_the_tool_whose_parameters_take_the_query_values() -> None:
    text = "Get a page of the site as markdown."
    tools = [
        ToolSpec(
            "page_by_title", text, input_schema={"type": "object", "properties": {"title": {}}}
        ),
        ToolSpec(
            "page_by_address", text, input_schema={"type": "object", "properties": {"url": {}}}
        ),
    ]
    query = "get https://example.com/about as markdown"
    assert _names(_index(tools), query)[0] == "page_by_address"
    # Without the signal the two tie and keep the order they were added in.
    assert _names(_index(tools, signals={"slots": False}), query)[0] == "page_by_title"


def test_intent_prefers_a_reader_for_a_question_and_switches_off() -> None:
    text = "The entry stored under a key in the cache."
    tools = [
        ToolSpec("cache_put", text, annotations={"readOnlyHint": False}),
        ToolSpec("cache_get", text, annotations={"readOnlyHint": True}),
    ]
    assert _names(_index(tools), "what entry is stored under key user:42 in the cache?")[0] == (
        "cache_get"
    )
    off = _index(tools, signals={"intent": False})
    assert _names(off, "what entry is stored under key user:42 in the cache?")[0] == "cache_put"


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_reader_needs_more_confidence_for_a_request_to_change_something(mode: str) -> None:
    reader = ToolSpec(
        "show_report",
        "Show the quarterly sales report with totals per region.",
        annotations={"readOnlyHint": True},
    )
    on = _index([reader], mode)
    question = "show the quarterly sales report"
    command = "delete the regional totals from the quarterly sales report"
    assert _names(on, question) == ["show_report"]
    asked = on.search(command, threshold=0.0)
    off = _index([reader], mode, signals={"intent": False})
    plain = off.search(command, threshold=0.0)
    # The same tool, the same words: with the signal on, its confidence drops by the penalty.
    assert [h.name for h in plain] == ["show_report"]
    penalty = INTENT_PENALTY[on.mode]
    assert asked and asked[0].score == pytest.approx(plain[0].score - penalty, abs=1e-3)
    if mode == "keyword":  # a weak word match that the penalty takes below the threshold
        assert off.search(command) and on.search(command) == []


def test_the_kind_of_change_picks_the_tool_and_switches_off_with_intent() -> None:
    tools = [
        ToolSpec("edit_note", "A note on a record.", annotations={"readOnlyHint": False}),
        ToolSpec("add_note", "A note on a record.", annotations={"readOnlyHint": False}),
    ]
    assert _names(_index(tools), "post a note on record 7")[0] == "add_note"
    assert _names(_index(tools, signals={"intent": False}), "post a note on record 7")[0] == (
        "edit_note"
    )


SEARCHERS = [
    ToolSpec("search_pages", "Search the pages of a workspace by text."),
    ToolSpec("slack_post", "Post a message to a Slack channel."),
    ToolSpec("read_log", "Read the lines of a log file."),
]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_misspelt_word_is_read_as_the_indexed_word_one_edit_away(mode: str) -> None:
    idx = _index(SEARCHERS, mode)
    assert idx.spelled("serach the pages for the roadmap") == "search the pages for the roadmap"
    hits = idx.search("serach the workspace pagse")
    assert hits[0].name == "search_pages"
    # An English word the catalogue lacks is not "corrected" into one it has.
    assert idx.spelled("print the stack of the error") == "print the stack of the error"
    # Values are the caller's text, kept as written; so are short words and capitals kept.
    query = "Serach 'serach results' at /tmp/serach/logs"
    assert idx.spelled(query) == "Search 'serach results' at /tmp/serach/logs"
    off = _index(SEARCHERS, mode, signals={"spelling": False})
    assert off.spelled("serach the pagse") == "serach the pagse"
    off_hits = off.search("serach the workspace pagse")  # "workspace" alone still fits
    assert not off_hits or off_hits[0].score < hits[0].score - 0.2


def test_spelling_follows_the_index_and_names_a_misspelt_service() -> None:
    idx = _index(SEARCHERS, services=["Acmeboard"])
    assert idx.spelled("renew the kubelett") == "renew the kubelett"
    idx.update([ToolSpec("renew_kubelet", "Renew the kubelet certificates of a node.")])
    assert idx.spelled("renew the kubelett") == "renew the kubelet"
    assert _names(idx, "renew the kubelett")[0] == "renew_kubelet"
    idx.update(removals=["renew_kubelet"])
    assert idx.spelled("renew the kubelett") == "renew the kubelett"
    # A service name one slip away is still a service no tool mentions.
    assert idx.unserved_services("add a card on our Acmeboadr board") == ["Acmeboard"]
    off = _index(SEARCHERS, services=["Acmeboard"], signals={"spelling": False})
    assert off.unserved_services("add a card on our Acmeboadr board") == []


def test_spelling_leaves_given_names_abbreviations_and_ids_as_written() -> None:
    idx = _index([*SEARCHERS, ToolSpec("list_repositories", "List the repositories of a user.")])
    for query in (
        "create a page called Serach",  # a name the caller gives
        "make a page titled Pagse notes",
        "list my Repos",  # an abbreviation ("repos": repositories), in any case
        "open ticket 4f3a9serach22",  # inside an id
        "post to eng-pagse",  # inside a hyphenated name
    ):
        assert idx.spelled(query) == query
    assert idx.spelled("serach the pages called Pagse") == "search the pages called Pagse"


def test_a_misspelt_tool_name_is_still_an_exact_match() -> None:
    idx = _index(SEARCHERS)
    hits = idx.search("serach pages")  # a name in words; "serach_pages" is an identifier
    assert hits[0].name == "search_pages" and hits[0].score == 1.0
    assert hits[0].matched == ("name",)
    assert idx.spelled("serach_pages") == "serach_pages"  # kept: `suggest` offers the name
    assert idx.suggest("serach_pages")[0] == "search_pages"


def test_a_misspelt_service_scores_the_hits_down_like_a_spelt_one() -> None:
    idx = _index(BOARD, services=["Acmeboard"])
    spelt = idx.search("add a card to a column of our Acmeboard board")
    misspelt = idx.search("add a card to a column of our Acmeboadr board")
    assert [h.name for h in misspelt] == [h.name for h in spelt] == ["add_card"]
    assert misspelt[0].score == spelt[0].score
    plain = idx.search("add a card to a column of our board")
    assert misspelt[0].score < plain[0].score


BOARD = [
    ToolSpec("add_card", "Add a card to a column of a board.", source="mcp:kanban"),
    ToolSpec("create_invoice", "Create an invoice for a customer.", source="mcp:billing"),
]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_named_service_no_tool_mentions_is_reported_and_scores_hits_down(mode: str) -> None:
    idx = _index(BOARD, mode, services=["Acmeboard"])
    plain = idx.search("add a card to a column of our board")
    named = idx.search("add a card to a column of our Acmeboard board")
    assert idx.unserved_services("add a card to a column of our Acmeboard board") == ["Acmeboard"]
    # The generic tool fits the rest of the request: ranked down, not hidden.
    assert [h.name for h in named] == ["add_card"]
    assert named[0].score < plain[0].score
    # A request only the product could serve finds nothing.
    assert idx.search("sync my Acmeboard workspace settings") == []
    # Off, the name is neither reported nor held against the tools.
    off = _index(BOARD, mode, services=["Acmeboard"], signals={"services": False})
    assert off.unserved_services("add a card to a column of our Acmeboard board") == []
    off_hits = off.search("add a card to a column of our Acmeboard board")
    assert off_hits and off_hits[0].name == "add_card" and off_hits[0].score > named[0].score


def test_a_tool_that_mentions_the_service_makes_it_served() -> None:
    idx = _index(BOARD, services=["Acmeboard"])
    query = "add a card to a column of our Acmeboard board"
    scored_down = idx.search(query)[0].score
    idx.update([ToolSpec("acme_card", "Add a card on an Acmeboard board.", source="mcp:acme")])
    assert idx.unserved_services(query) == []
    assert idx.search(query)[0].score > scored_down
    assert _names(idx, "Acmeboard") == ["acme_card"]
    idx.update(removals=["acme_card"])
    assert idx.unserved_services(query) == ["Acmeboard"]


def test_registry_takes_options_and_nex_yaml_sets_signals_and_words(tmp_path: Path) -> None:
    reg = Registry(search={"mode": "keyword", "signals": {"intent": False}})
    assert reg.search_index.signals.intent is False and reg.search_index.mode == "keyword"
    reg.close()
    reg = Registry(search=SearchOptions(mode="keyword", services=("Acmeboard",)))
    assert reg.unserved_services("open our Acmeboard board") == ["Acmeboard"]
    reg.close()
    (tmp_path / "nex.yaml").write_text(
        "search:\n  mode: keyword\n  signals: {slots: false}\n  services: [Acmeboard]\n"
        "  abbreviations: {kb: knowledge base}\n"
    )
    reg = Registry.default(root=tmp_path, watch=False, mcp=False, builtins=False)
    index = reg.search_index
    assert index.mode == "keyword" and index.signals.slots is False and index.signals.intent
    assert reg.unserved_services("open our Acmeboard board") == ["Acmeboard"]
    assert index.vocabulary.abbreviations["kb"] == ("knowledge", "base")
    reg.close()
    # A mode given in code keeps the file's other search settings.
    reg = Registry.default(root=tmp_path, watch=False, mcp=False, builtins=False, search="auto")
    assert reg.search_index.signals.slots is False
    reg.close()


def test_unknown_signals_and_settings_are_config_errors() -> None:
    with pytest.raises(
        ConfigError, match="signals are spelling, abbreviations, slots, intent, services"
    ):
        SearchIndex({"mode": "keyword", "signals": {"intnet": False}})
    with pytest.raises(ConfigError, match="Unknown search setting"):
        SearchIndex({"mode": "keyword", "treshold": 0.3})


def test_search_results_give_the_hits_the_reading_and_the_unserved_services_of_one_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    idx = _index([*SEARCHERS, *BOARD], services=["Acmeboard"])
    query = "serach the pages of our Acmeboadr board"
    found = idx.search_results(query)
    assert found.query == query and found.respelled
    assert found.searched_for == idx.spelled(query) == "search the pages of our Acmeboard board"
    assert list(found.unserved) == idx.unserved_services(query) == ["Acmeboard"]
    assert list(found.hits) == idx.search(query) and found.names[0] == "search_pages"
    reads: list[str] = []
    spelling = type(idx._spelling)
    original = spelling.read
    monkeypatch.setattr(spelling, "read", lambda self, q: reads.append(q) or original(self, q))
    idx.search_results(query)
    assert reads == [query]  # one reading serves the hits, searched_for and unserved
    listed = idx.search_results("")  # no query: every tool by name, nothing read
    assert not listed.respelled and listed.unserved == ()
    assert listed.names == sorted(t.name for t in [*SEARCHERS, *BOARD])


def add_card(column: str, title: str) -> str:
    """Add a card to a column of a board."""
    return title


def create_invoice(customer: str) -> str:
    """Create an invoice for a customer."""
    return customer


def test_registry_search_results_apply_filters_like_search() -> None:
    with Registry(search={"mode": "keyword", "services": ["Acmeboard"]}) as reg:
        reg.add(add_card, categories=["boards"])
        reg.add(create_invoice, categories=["billing"])
        query = "add a card to our Acmeboadr board"
        found = reg.search_results(query, category="boards")
        assert found.names == [h.name for h in reg.search(query, category="boards")]
        assert found.names == ["add_card"] and found.unserved == ("Acmeboard",)
        assert found.searched_for == "add a card to our Acmeboard board"
        assert reg.search_results(query, category="billing").hits == ()
