"""Ranking behaviour of the search index on a small catalog of our own."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from search_catalog import CATALOG, spec  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter.core.errors import ConfigError
from nexus_jupyter.core.search.index import SearchHit, SearchIndex, make_filter, semantic_missing
from nexus_jupyter.core.search.text import embedding_texts, split_identifier, terms
from nexus_jupyter.core.tools.spec import ToolSpec


@pytest.fixture
def index() -> Iterator[SearchIndex]:
    idx = SearchIndex("keyword")
    idx.update(CATALOG)
    yield idx
    idx.close()


def names(hits: list[SearchHit]) -> list[str]:
    return [h.name for h in hits]


def test_split_identifier_handles_snake_kebab_dunder_and_camel_case() -> None:
    assert split_identifier("mcp__github__getPullRequest") == [
        "mcp",
        "github",
        "get",
        "pull",
        "request",
        "getpullrequest",
    ]
    assert split_identifier("list-directory_v2") == ["list", "directory", "v", "2"]
    assert split_identifier("HTTPServer") == ["http", "server", "httpserver"]
    assert terms("What's inside the /data folder?") == ["inside", "data", "folder"]


def test_exact_name_comes_first(index: SearchIndex) -> None:
    hits = index.search("read_file")
    assert hits[0].name == "read_file"
    assert hits[0].matched == ("name",)
    assert all(h.score < hits[0].score for h in hits[1:])  # (others only when close to it)
    # The words of a name, and the part of an MCP name after the server, count as exact too.
    assert index.search("read file")[0].name == "read_file"
    assert index.search("create_issue")[0].name == "mcp__github__create_issue"


def test_camel_case_name_is_found_by_its_words(index: SearchIndex) -> None:
    assert index.search("weather forecast")[0].name == "getWeatherForecast"
    assert index.search("getWeatherForecast")[0].name == "getWeatherForecast"


def test_ranking_uses_description_parameters_and_source(index: SearchIndex) -> None:
    assert index.search("shell command")[0].name == "bash"
    assert index.search("temperature conditions")[0].name == "current_weather"
    hits = index.search("label colour")  # a nested parameter description
    assert hits[0].name == "mcp__github__create_issue"
    assert "parameters" in hits[0].matched
    assert index.search("github")[0].name == "mcp__github__create_issue"


def test_make_filter_restricts_results(index: SearchIndex) -> None:
    assert make_filter() is None
    only_mcp = make_filter(source="mcp")
    assert set(names(index.search("weather", filter=only_mcp))) == {"current_weather"}
    by_server = make_filter(source="github")
    assert names(index.search("issue file", filter=by_server)) == ["mcp__github__create_issue"]
    writers = make_filter(permission=["workspace_write", "danger_full_access"])
    assert names(index.search("file", filter=writers)) == ["write_file"]
    assert names(index.search("forecast", filter=make_filter(capability="FORECAST"))) == [
        "getWeatherForecast"
    ]
    weather = make_filter(category="weather")
    assert set(names(index.search("", filter=weather))) == {"current_weather", "getWeatherForecast"}


def test_empty_query_lists_everything_by_name(index: SearchIndex) -> None:
    hits = index.search("   ", limit=100)
    assert names(hits) == sorted(s.name for s in CATALOG)
    assert {h.score for h in hits} == {0.0}


def test_select_returns_named_specs_in_order_and_skips_unknown(index: SearchIndex) -> None:
    selected = index.select(["write_file", "nope", "BASH", "write_file"])
    assert [s.name for s in selected] == ["write_file", "bash"]


def test_unservable_query_returns_no_hits(index: SearchIndex) -> None:
    assert index.search("book a flight to Paris") == []
    assert index.search("zzzz qqqq") == []


def test_threshold_drops_weak_matches(index: SearchIndex) -> None:
    query = "read the contents of my kitchen recipes database"
    assert index.search(query, threshold=0.0)
    assert index.search(query, threshold=0.99) == []
    index.threshold = 0.99
    assert index.search(query) == []


def test_suggest_offers_close_names(index: SearchIndex) -> None:
    assert index.suggest("read_fiel")[0] == "read_file"
    assert index.suggest("create_isue")[0] == "mcp__github__create_issue"
    assert index.suggest("") == []


def test_incremental_upsert_and_removal(index: SearchIndex) -> None:
    assert index.search("spreadsheet") == []
    index.update([spec("read_file", "Read a spreadsheet as rows.")])
    assert names(index.search("spreadsheet")) == ["read_file"]
    assert index.search("contents text file", limit=3)[0].name != "read_file"
    assert len(index) == len(CATALOG)
    index.update(removals=["read_file", "not_there"])
    assert index.search("spreadsheet") == []
    assert index.select(["read_file"]) == []
    assert len(index) == len(CATALOG) - 1


def test_concurrent_updates_and_searches_do_not_break() -> None:
    idx = SearchIndex("keyword")
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(50):
                idx.update([spec(f"tool_{k}_{i}", f"Tool number {i} of writer {k}.")])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for _ in range(50):
        idx.search("tool writer")
    for t in threads:
        t.join()
    assert not errors
    assert len(idx) == 200
    idx.close()


def test_unknown_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Unknown search mode 'fuzzy'"):
        SearchIndex("fuzzy")


def test_a_threshold_no_score_can_reach_is_refused_where_it_is_set(tmp_path: Path) -> None:
    """A new user's trial: search: {threshold: 2} was taken, and every search found nothing."""
    from nexus_jupyter import Registry
    from nexus_jupyter.core.config.loading import load_settings

    with pytest.raises(ConfigError, match="search threshold 2 is outside 0 to 1"):
        Registry(search={"mode": "keyword", "threshold": 2})  # at once, not at a search
    with pytest.raises(ConfigError, match="outside 0 to 1"):
        SearchIndex("keyword", threshold=-0.5)
    (tmp_path / "nex.yaml").write_text("search:\n  threshold: 2\n")
    with pytest.raises(ConfigError, match=r"nex.yaml, line 2: key 'search.threshold'"):
        load_settings(root=tmp_path, user=False)
    assert SearchIndex("keyword", threshold=1.0).threshold == 1.0  # the edge is a setting


def test_an_unknown_or_contradicting_precision_is_a_config_error() -> None:
    from nexus_jupyter.core.config.model import Settings
    from nexus_jupyter.core.search.options import SearchOptions

    with pytest.raises(ConfigError, match="Unknown search precision 'fp16'; use 'smooth8'"):
        SearchIndex({"mode": "keyword", "precision": "fp16"})
    with pytest.raises(ConfigError, match="quantized: true asks for precision 'int8'"):
        SearchOptions.coerce({"quantized": True, "precision": "fp32"})
    assert SearchOptions.coerce({"quantized": True}).model_precision == "int8"
    assert SearchOptions.coerce({"precision": "block8"}).model_precision == "block8"
    assert SearchOptions.coerce("hybrid").model_precision is None  # the default graph
    # nex.yaml's search section takes the same setting and hands it on unchanged.
    settings = Settings.model_validate({"search": {"precision": "fp32"}})
    assert SearchOptions.coerce(settings.search).model_precision == "fp32"


def test_hybrid_without_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import nexus_jupyter.core.search.index as search

    monkeypatch.setattr(search, "semantic_missing", lambda *_: "tokenizers not installed")
    with pytest.raises(ConfigError, match="'hybrid' cannot run: tokenizers not installed"):
        SearchIndex("hybrid")
    assert SearchIndex("auto").mode == "keyword"


# -- hybrid mode ----------------------------------------------------------------------------

needs_semantic = pytest.mark.skipif(
    semantic_missing() is not None,
    reason=f"semantic extra missing ({semantic_missing()}): pip install nexus-jupyter[semantic]",
)


@needs_semantic
def test_hybrid_finds_tools_described_in_other_words(tmp_path: Path) -> None:
    idx = SearchIndex("hybrid", cache_dir=tmp_path)
    assert idx.mode == "hybrid"
    idx.update(CATALOG)
    assert idx.search("what's inside the /data folder")[0].name == "list_directory"
    assert idx.search("will it rain tomorrow")[0].name in {"getWeatherForecast", "current_weather"}
    assert idx.search("read_file")[0].name == "read_file"
    hits = idx.search("execute a terminal instruction", limit=3)
    assert hits[0].name == "bash"
    assert "semantic" in hits[0].matched
    assert idx.search("bake a chocolate cake for my grandmother") == []
    only_mcp = make_filter(source="mcp")
    assert {h.name for h in idx.search("forecast rain", filter=only_mcp)} <= {
        "current_weather",
        "mcp__github__create_issue",
    }
    idx.close()


@needs_semantic
def test_a_large_index_ranks_by_keyword_while_the_query_is_encoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From ``SPLIT_AT`` tools the keyword ranking runs on a side thread during the query's
    encoding and the similarities in two halves; the hits are the same as on one thread."""
    from nexus_jupyter.core.search import dense as dense_module

    idx = SearchIndex("hybrid", cache_dir=tmp_path)
    idx.update(CATALOG)
    queries = ["what's inside the /data folder", "execute a terminal instruction", "rain?"]
    alone = [[(h.name, h.score) for h in idx.search(q)] for q in queries]
    threads: set[str] = set()
    ranking = idx._keyword_ranking

    def recorded(*args: object) -> object:
        threads.add(threading.current_thread().name)
        return ranking(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(idx, "_keyword_ranking", recorded)
    monkeypatch.setattr(dense_module, "SPLIT_AT", 2)
    monkeypatch.setattr(dense_module.os, "cpu_count", lambda: 2)  # also on a one-core runner
    idx._dense._queries = type(idx._dense._queries)()  # encode the queries again
    split = [[(h.name, h.score) for h in idx.search(q)] for q in queries]
    assert [[n for n, _ in hits] for hits in split] == [[n for n, _ in hits] for hits in alone]
    scores = [v for hits in split for _, v in hits]
    assert scores == pytest.approx([v for hits in alone for _, v in hits], abs=1e-3)
    assert any(name.startswith("nexus-search-keyword") for name in threads)
    # A filter is the caller's code and runs on the caller's thread: one that uses the index
    # itself (the index lock is held) must not wait for a side thread forever.
    threads.clear()
    done: list[list[str]] = []

    def keep(spec: ToolSpec) -> bool:
        return bool(idx.select([spec.name]))

    worker = threading.Thread(
        target=lambda: done.append([h.name for h in idx.search(queries[0], filter=keep)])
    )
    worker.start()
    worker.join(timeout=30)
    assert done == [[n for n, _ in alone[0]]]
    assert threads == {worker.name}
    idx.close()


@needs_semantic
def test_hybrid_confidence_also_reads_the_query_without_its_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quoted text can outweigh the words that ask for a tool: the request part alone decides
    the confidence when it is closer; the values still count in the ranking."""
    idx = SearchIndex("hybrid", cache_dir=tmp_path)
    idx.update(
        [
            ToolSpec("create_issue", "Create an issue in a repository's issue tracker."),
            ToolSpec("resize_window", "Resize the browser window to a width and height."),
            ToolSpec("get_weather", "Current weather for a city."),
        ]
    )
    dense = idx._dense
    assert dense is not None
    query = 'open an issue: "resizing the browser window to 800 pixels wide hides the menu"'
    raw = dense.cosines(query, ["create_issue"])["create_issue"]
    bare = dense.cosines("open an issue:", ["create_issue"])["create_issue"]
    assert raw < idx.threshold < bare  # by the whole query alone it would not be a hit
    idx._dense._queries = type(idx._dense._queries)()
    runs: list[list[str]] = []
    encode = idx._dense.model.encode

    def counted(texts: list[str], *args: Any) -> Any:
        runs.append(list(texts))
        return encode(texts, *args)

    monkeypatch.setattr(idx._dense.model, "encode", counted)
    hits = {h.name: h.score for h in idx.search(query)}
    assert hits["create_issue"] == pytest.approx(bare, abs=1e-3)
    assert runs == [[query, "open an issue:"]]  # the query and its bare request in one run
    plain = idx.search("open an issue")  # no values: the query's own cosine
    assert plain[0].name == "create_issue"
    assert plain[0].score == pytest.approx(
        dense.cosines("open an issue", ["create_issue"])["create_issue"], abs=1e-3
    )
    idx.close()


@needs_semantic
def test_embedding_cache_is_reused_across_indexes(tmp_path: Path) -> None:
    first = SearchIndex("hybrid", cache_dir=tmp_path)
    first.update(CATALOG)
    first.warm()
    old_texts = {text for s in CATALOG for text in embedding_texts(s)}
    assert first.embedded_count == len(old_texts)  # every view once, duplicates once
    first.close()

    second = SearchIndex("hybrid", cache_dir=tmp_path)
    new_bash = spec("bash", "Run a command in a shell and return its output.")
    second.update([*CATALOG[:-1], new_bash])
    second.warm()
    # Only the views of the tool whose text changed.
    assert second.embedded_count == len(set(embedding_texts(new_bash)) - old_texts) > 0
    assert second.search("terminal command")[0].name == "bash"
    second.close()


@needs_semantic
def test_a_search_during_the_warm_up_waits_for_it_instead_of_embedding_twice(
    tmp_path: Path,
) -> None:
    import threading

    idx = SearchIndex("hybrid", cache_dir=tmp_path)
    idx.update(CATALOG)
    warm = threading.Thread(target=idx.warm)
    warm.start()
    hits = idx.search("what's inside the /data folder")  # while the warm-up embeds
    warm.join()
    assert hits[0].name == "list_directory"
    texts = {text for s in CATALOG for text in embedding_texts(s)}
    assert idx.embedded_count == len(texts)  # each text once, not once per caller
    idx.close()


@needs_semantic
def test_hybrid_incremental_update(tmp_path: Path) -> None:
    idx = SearchIndex("hybrid", cache_dir=tmp_path)
    idx.update(CATALOG)
    idx.update([spec("send_email", "Send an email message to a recipient.")])
    assert idx.search("mail my boss the report")[0].name == "send_email"
    idx.update(removals=["send_email"])
    assert "send_email" not in {h.name for h in idx.search("mail my boss the report")}
    idx.close()


# -- keyword engine internals ---------------------------------------------------------------


def test_replacing_a_tool_forgets_its_old_words() -> None:
    idx = SearchIndex("keyword")
    idx.update([spec("t", "Alpha beta."), spec("u", "Gamma.")])
    idx.update([spec("t", "Delta epsilon.")])
    assert idx.search("alpha") == []
    assert names(idx.search("delta")) == ["t"]
    idx.update(removals=["t"])
    assert idx.search("delta") == []
    idx.update([spec("t", "Alpha again.")])  # re-added after removal
    assert names(idx.search("alpha")) == ["t"]
    idx.close()


def test_embedding_views_are_short_and_long() -> None:
    tool = spec(
        "mcp__files__read_text",
        "Read a text file. Large files are truncated.",
        source="mcp:files",
        source_kind="mcp",
        input_schema={
            "type": "object",
            "properties": {"encoding": {"type": "string", "description": "Text encoding."}},
        },
    )
    whole, short, long = embedding_texts(tool)
    assert whole.startswith("mcp files read text") and "truncated" in whole
    assert short == "files: read text. Read a text file."
    assert long.startswith("files: read text.") and "Parameters: encoding, Text encoding." in long


def test_fusion_adds_cosine_z_score_and_relative_keyword_score() -> None:
    from nexus_jupyter.core.search.fusion import KEYWORD_WEIGHT, fuse

    fused = fuse([("a", 10.0), ("b", 5.0)], {"b": 0.6, "c": 0.5}, mean=0.2, std=0.1)
    assert fused["a"] == pytest.approx(KEYWORD_WEIGHT)  # cosine unknown: counts as the mean
    assert fused["b"] == pytest.approx(4.0 + KEYWORD_WEIGHT / 2)
    assert fused["c"] == pytest.approx(3.0)
    assert fuse([], {"x": 0.3}, mean=0.3, std=0.0) == {"x": 0.0}


def test_feedback_terms_are_words_the_seed_tools_share_and_the_query_lacks() -> None:
    from nexus_jupyter.core.search.fusion import expansion_terms

    docs = ["list directory files folder", "list directory tree", "read file text"]
    idf = {
        "list": 1.0,
        "directory": 2.0,
        "files": 1.5,
        "folder": 3.0,
        "tree": 3.0,
        "read": 1.0,
        "file": 1.0,
        "text": 1.0,
    }
    words = expansion_terms(docs, ["folder"], lambda ws: {w: idf[w] for w in ws}, 2)
    # "directory" is in 2 seeds (2 x 2.0); the query's own "folder" is never added back;
    # and "tree" (1 x 3.0) beats "list" (2 x 1.0) and "files" (1 x 1.5).
    assert words == ["directory", "tree"]
    assert expansion_terms([], ["x"], lambda ws: {}, 5) == []


@needs_semantic
def test_hybrid_feedback_respects_the_filter(tmp_path: Path) -> None:
    idx = SearchIndex("hybrid", cache_dir=tmp_path)
    idx.update(
        [
            spec("list_directory", "List the files and subfolders of a directory.", source="fs"),
            spec("directory_tree", "Show a directory as a tree of files.", source="other"),
        ]
    )
    hits = idx.search("what's inside the /data folder", filter=make_filter(source="fs"))
    assert names(hits) == ["list_directory"]
    idx.close()


def test_grouped_columns_rank_exactly_like_one_column_per_field() -> None:
    import sqlite3

    from nexus_jupyter.core.search.fts import FIELD_WEIGHTS, KeywordEngine
    from nexus_jupyter.core.search.text import FIELDS, tool_fields

    engine = KeywordEngine()
    engine.upsert_many(CATALOG)
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5({', '.join(FIELDS)})")
    for spec_ in CATALOG:
        fields = tool_fields(spec_)
        db.execute(
            f"INSERT INTO t VALUES ({', '.join('?' * len(FIELDS))})", [fields[f] for f in FIELDS]
        )
    weights = ", ".join(str(FIELD_WEIGHTS[f]) for f in FIELDS)
    names = [s.name for s in CATALOG]
    for words in (["file", "text"], ["weather", "forecast", "github"], ["label", "colour"]):
        match = " OR ".join(words)
        sql = f"SELECT rowid, -bm25(t, {weights}) FROM t WHERE t MATCH ?"
        expected = {names[rowid - 1]: score for rowid, score in db.execute(sql, (match,))}
        got = dict(engine.ranked(words))
        assert got == pytest.approx(expected)
    engine.close()


@needs_semantic
def test_warm_embeds_outside_the_lock_so_updates_are_not_held_up(tmp_path: Path) -> None:
    """A registry update during a cold warm-up must not wait for the model."""
    idx = SearchIndex("hybrid", cache_dir=tmp_path)
    idx.update(CATALOG)
    dense: Any = idx._dense
    entered, release = threading.Event(), threading.Event()
    real_encode = dense.model.encode

    def slow_encode(texts: list[str]) -> Any:
        entered.set()
        assert release.wait(30), "the test never released the model"
        return real_encode(texts)

    dense.model.encode = slow_encode
    try:
        warm = threading.Thread(target=idx.warm)
        warm.start()
        assert entered.wait(30), "warm() never reached the model"
        updater = threading.Thread(target=idx.update, args=([spec("extra", "An extra tool.")],))
        updater.start()
        updater.join(10)
        assert not updater.is_alive(), "update() waited for the warm-up's model call"
        release.set()
        warm.join(60)
        assert not warm.is_alive()
    finally:
        release.set()
        dense.model.encode = real_encode
    before = idx.embedded_count
    assert idx.search("list the files in a folder")[0].name == "list_directory"
    assert idx.embedded_count == before  # the warm-up's last flush also took the late tool
    assert "extra" in {h.name for h in idx.search("extra tool")}
    idx.close()
