"""How well a tool fits the request, on constructed tools: the argument values a query
carries, reading or writing, the kind of change, values, abbreviations and named services."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from search_catalog import CATALOG, index_in, spec  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter.core.search.index import SearchIndex
from nexus_jupyter.core.search.text import split_identifier

# -- argument slots -------------------------------------------------------------------------


def _takes(*params: str) -> dict[str, Any]:
    return {"type": "object", "properties": {p: {"type": "string"} for p in params}}


FETCHERS = [  # the same words; only what their parameters take tells them apart
    spec("alpha_fetch", "Fetch something and return it as markdown.", input_schema=_takes("name")),
    spec("beta_fetch", "Fetch something and return it as markdown.", input_schema=_takes("url")),
]


def test_query_slots_find_the_kinds_of_value_a_query_carries() -> None:
    from nexus_jupyter.core.search.slots import query_slots, slot_names

    def kinds(query: str) -> list[str]:
        return slot_names(query_slots(query))

    assert kinds("open trace 4bf92f3577b34da6a3ce") == ["hex id"]
    assert kinds("fetch https://example.com as markdown")[0] == "url"
    assert "path" in kinds("what's inside the /data folder")
    assert "path" in kinds("save this into notes/todo.md")
    assert kinds("commits between 2024-01-01 and 2024-02-01") == ["date", "number"]
    assert kinds("mark the deploy at 14:05") == ["time", "number"]
    assert kinds("list my repositories") == []


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_tool_that_takes_the_values_in_the_query_ranks_first(mode: str, tmp_path: Path) -> None:
    idx = index_in(mode, tmp_path, [*CATALOG, *FETCHERS])
    assert idx.search("fetch https://example.com/post as markdown")[0].name == "beta_fetch"
    # Replacing a tool replaces its parameters too.
    idx.update(
        [
            spec(
                "beta_fetch",
                "Fetch something and return it as markdown.",
                input_schema=_takes("name"),
            ),
            spec(
                "alpha_fetch",
                "Fetch something and return it as markdown.",
                input_schema=_takes("link"),
            ),
        ]
    )
    assert idx.search("fetch https://example.com/post as markdown")[0].name == "alpha_fetch"
    idx.close()


# -- read or write ---------------------------------------------------------------------------

CACHE = [  # the same words; only reading or writing tells them apart
    spec(
        "kv_alpha",
        "Works on the value stored under a key.",
        input_schema=_takes("key"),
        annotations={"readOnlyHint": False},
    ),
    spec(
        "kv_beta",
        "Works on the value stored under a key.",
        input_schema=_takes("key"),
        annotations={"readOnlyHint": True},
    ),
]


def test_query_and_tool_intent() -> None:
    from nexus_jupyter.core.search.intent import query_intent, tool_intent

    assert query_intent("what's stored at key user:42?") == 1
    assert query_intent("show the open pull requests") == 1
    assert query_intent("Could you please approve PR 9") == -1
    assert query_intent("file a bug about the login page") == -1
    assert query_intent("pull requests authored by alice") == 0
    assert [tool_intent(s) for s in CACHE] == [-1, 1]
    assert tool_intent(spec("undeclared")) == 0  # the default read_only is not a declaration
    assert tool_intent(spec("rm", permission="workspace_write")) == -1


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_question_prefers_a_tool_that_reads_and_a_command_one_that_writes(
    mode: str, tmp_path: Path
) -> None:
    idx = index_in(mode, tmp_path, [*CATALOG, *CACHE])
    assert idx.search("which value is stored under key user:42?")[0].name == "kv_beta"
    assert idx.search("please clear the value stored under key user:42")[0].name == "kv_alpha"
    idx.close()


def test_query_and_tool_action() -> None:
    from nexus_jupyter.core.search.intent import query_action, tool_action

    assert query_action("leave a comment on ticket OPS-88") == "create"
    assert query_action("could you please rename the page") == "change"
    assert query_action("drop the events table") == "delete"
    assert query_action("show the comments") is None
    assert tool_action(split_identifier("jira_add_comment")) == "create"
    assert tool_action(split_identifier("editComment")) == "change"
    assert tool_action(split_identifier("API-delete-a-block")) == "delete"
    assert tool_action(split_identifier("issue_write")) is None


COMMENTS = [  # the same words; only the verb of the name tells them apart
    spec(
        name,
        "Works on a comment of an issue.",
        input_schema=_takes("issue", "body"),
        annotations={"readOnlyHint": False},
    )
    for name in ("edit_comment", "add_comment", "delete_comment")
]


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_the_kind_of_change_asked_for_picks_the_tool(mode: str, tmp_path: Path) -> None:
    idx = index_in(mode, tmp_path, [*CATALOG, *COMMENTS])
    assert idx.search("leave a comment on issue 5 saying thanks")[0].name == "add_comment"
    assert idx.search("modify the comment on issue 5")[0].name == "edit_comment"
    assert idx.search("remove that comment from issue 5")[0].name == "delete_comment"
    idx.close()


# -- values, abbreviations, summaries ----------------------------------------------------------


def test_new_slot_kinds_address_and_revision() -> None:
    from nexus_jupyter.core.search.slots import query_slots, slot_names, slot_share, tool_slots

    assert "address" in slot_names(query_slots("make it reachable on localhost:8080"))
    assert "address" in slot_names(query_slots("connect to 10.0.0.5"))
    assert "revision" in slot_names(query_slots("print config.py as it was at HEAD~3"))
    assert "revision" not in slot_names(query_slots("print config.py"))
    forward = tool_slots(_takes("resourceName", "localPort", "targetPort"))
    assert slot_share(forward, query_slots("forward localhost:8080 to the api")) > 0


def test_words_inside_values_do_not_pick_the_tool() -> None:
    from nexus_jupyter.core.search.slots import without_values

    assert without_values("post 'list the files' to https://chat.example/c/eng").split() == [
        "post",
        "to",
    ]
    idx = SearchIndex("keyword")
    idx.update([*CATALOG, spec("post_message", "Post a message to a chat channel.")])
    # The quoted text and the URL would point at list_directory and "example" tools.
    assert idx.search("post 'list the files in the folder' to the channel")[0].name == (
        "post_message"
    )
    # A query that is nothing but a value still searches its words.
    assert idx.search("'list the files in a folder'")[0].name == "list_directory"
    idx.close()


def test_an_abbreviation_meets_the_words_tool_names_spell_out() -> None:
    from nexus_jupyter.core.search.text import query_terms

    assert query_terms("show PR 9 in acme/web") == ["show", "pr", "acme", "web", "pull", "request"]
    assert query_terms("show the pull request PR") == ["show", "pull", "request", "pr"]
    idx = SearchIndex("keyword")
    idx.update(
        [
            *CATALOG,
            spec("get_pull_request", "Get details of a pull request."),
            spec("get_page_diff", "Show what changed between two page versions."),
        ]
    )
    assert idx.search("show me the PR")[0].name == "get_pull_request"
    idx.close()


def test_what_a_tool_is_for_outweighs_what_its_description_mentions_later() -> None:
    # Plain BM25 puts copy_page first: it repeats the query's words in its advice, and
    # relocate_page's long list of details dilutes its first sentence, which says it all.
    idx = SearchIndex("keyword")
    idx.update(
        [
            spec(
                "copy_page",
                "Copy a page. To move a page to another folder instead, use the "
                "other tool; copying keeps the original page.",
            ),
            spec(
                "relocate_page",
                "Move a page to another folder. Keeps the history, comments, "
                "attachments, labels, restrictions and watchers of the page, and updates every "
                "link that points at it.",
            ),
        ]
    )
    assert [h.name for h in idx.search("move a page to another folder")] == [
        "relocate_page",
        "copy_page",
    ]
    idx.close()


# -- named services ----------------------------------------------------------------------------


def test_mentioned_services() -> None:
    from nexus_jupyter.core.search.scope import mentioned_services

    assert mentioned_services("create a card on our Trello board") == ["Trello"]
    assert mentioned_services("send it via paypal, then post in Microsoft  Teams") == [
        "paypal",
        "Microsoft Teams",
    ]
    # Values do not count: quotes, URLs, e-mail, owner/repo, paths, "named X".
    assert mentioned_services("star the repo called trello-clone and open 'Trello tips'") == []
    assert mentioned_services("fetch https://trello.com/b/x and mail a@paypal.com") == []
    assert mentioned_services("star salesforce/lwc and read docs/zendesk.md") == []
    assert mentioned_services("find GitLab projects named Jenkins") == ["GitLab"]
    # Names that are ordinary words count only when capitalised mid-sentence.
    assert mentioned_services("zoom in on the chart") == []
    assert mentioned_services("Zoom in on the chart") == []
    assert mentioned_services("start a Zoom call") == ["Zoom"]
    # Names with dots, and the longest name where a shorter one starts it.
    assert mentioned_services("book it on booking.com, then add it to Microsoft To Do") == [
        "booking.com",
        "Microsoft To Do",
    ]
    assert mentioned_services("order it with Uber Eats") == ["Uber Eats"]
