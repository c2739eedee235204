"""The spelling stage on its own: edit distance, which word wins, what is never touched."""

from __future__ import annotations

from importlib import resources

import pytest

from nexus_jupyter.core.search.slots import outside_values
from nexus_jupyter.core.search.spelling import (
    MIN_LENGTH,
    Speller,
    checked_words,
    english_words,
    one_edit,
    plausible_slip,
)


@pytest.mark.parametrize(
    ("typed", "word", "near"),
    [
        ("serch", "search", True),  # a letter dropped
        ("seearch", "search", True),  # a letter added
        ("seerch", "search", True),  # a letter replaced
        ("serach", "search", True),  # two neighbours swapped
        ("saerch", "search", True),
        ("search", "search", False),  # no slip at all
        ("sercah", "search", False),  # two letters moved apart: two edits
        ("srch", "search", False),
        ("searches", "search", False),
        ("hcraes", "search", False),
    ],
)
def test_one_slip_is_an_insertion_deletion_substitution_or_neighbour_swap(
    typed: str, word: str, near: bool
) -> None:
    assert (word in one_edit(typed)) is near
    assert (typed in one_edit(word)) is near


def test_the_term_in_most_tools_wins_then_the_first_alphabetically() -> None:
    speller = Speller({"request": 9, "requests": 3}, known=frozenset())
    assert speller.correct("requets") == "request"  # "requests" is one edit away too
    assert Speller({"tests": 2, "texts": 2}, known=frozenset()).correct("tezts") == "tests"
    assert Speller({"tests": 2, "texts": 3}, known=frozenset()).correct("tezts") == "texts"


def test_a_word_of_its_own_is_not_taken_for_a_slip_of_a_shorter_one() -> None:
    vocabulary = dict.fromkeys(["cloud", "code", "auth", "rust", "json", "system", "link"], 5)
    speller = Speller({**vocabulary, "webhook": 3, "search": 4}, known=frozenset())
    names = "gcloud xcode oauth rustc jsonl systemd webhooks flink"
    assert speller.corrected(names) == names  # a letter before, or another one after
    assert speller.corrected("searchh serach seearch") == "search search search"
    assert plausible_slip("searchh", "search") and not plausible_slip("searchs", "search")
    assert not plausible_slip("dearch", "search")  # the first letter is rarely the slip


def test_short_words_values_known_words_and_indexed_words_are_never_corrected() -> None:
    speller = Speller({"cards": 4, "slack": 2, "board": 1}, known=frozenset({"stack"}))
    assert len("crad") < MIN_LENGTH and speller.correct("crad") is None
    assert speller.correct("c4rds") is None  # not all letters: an id, a version
    assert speller.correct("stack") is None  # an English word, though one edit from "slack"
    assert speller.correct("slack") is None  # indexed already
    assert speller.correct("Carsd") == "cards"  # matched without case
    assert speller.corrected("Carsd on the BAORD") == "Cards on the BOARD"
    assert speller.corrected("carsd on the baord", keep={"baord"}.__contains__) == (
        "cards on the baord"
    )


def test_only_whole_words_of_letters_are_checked() -> None:
    assert checked_words("Serach the pagse.") == {"serach", "pagse"}  # a full stop ends a word
    assert checked_words("Notoin's page") == {"notoin"}
    assert checked_words("ticket 4f3a9serach22, v2serach, serach2") == {"ticket"}
    assert checked_words("eng-backsnd on name.com") == set()  # parts of names
    assert checked_words("café serach") == {"serach"}  # "café" is not ASCII: left alone
    speller = Speller({"search": 3}, known=frozenset())
    assert speller.corrected("open 4f3a9serach22 and v2serach") == "open 4f3a9serach22 and v2serach"
    assert speller.corrected("serach-tools, serach.") == "serach-tools, search."


def test_a_capitalised_product_keeps_its_written_form() -> None:
    speller = Speller({"paypal": 1}, known=frozenset(), spellings={"paypal": "PayPal"})
    assert speller.corrected("pay via PayPla or paypla") == "pay via PayPal or paypal"


def test_the_shipped_english_words_hold_common_words_and_no_typos() -> None:
    words = english_words()
    assert len(words) > 60_000
    assert {"stack", "blocked", "these", "where", "thermostat", "denver"} <= words
    assert not {"serach", "requets", "teh", "recieve"} & words
    assert min(map(len, words)) == MIN_LENGTH
    notice = resources.files("nexus_jupyter.core.search").joinpath("data", "english-words.NOTICE")
    assert "Copyright 2000-2011 by Kevin Atkinson" in notice.read_text("utf-8")


def test_a_change_outside_values_leaves_the_values_as_written() -> None:
    query = "grab https://example.com/Page and 'Some Title' from /tmp/A.txt now"
    assert outside_values(query, str.upper) == (
        "GRAB https://example.com/Page AND 'Some Title' FROM /tmp/A.txt NOW"
    )
    assert outside_values("", str.upper) == ""
