"""``register_definitions``: real definition files written into real nex.yaml files, for the
layouts a person leaves ``tools:`` in (missing, empty, block list, flow list)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nexus_jupyter.core.config.register import read_definitions, register_definitions
from nexus_jupyter.core.errors import ConfigError

# two entries as someone writes them: comments, a block scalar, a flow mapping over two lines
DEFINITIONS = """\
- id: a   # first
  description: |
    Line one.
    Line two.
  source: {type: cli,
           command: 'true'}
- {id: b, source: {type: cli, command: 'true'}}  # b
"""
# ...and as they land in a list whose items sit at "  - "
ADDED = "".join("  " + line for line in DEFINITIONS.splitlines(keepends=True))


def _register(tmp_path: Path, before: str | None) -> tuple[str, dict[str, str]]:
    definitions = tmp_path / "defs.yaml"
    definitions.write_text(DEFINITIONS)
    target = tmp_path / "nex.yaml"
    if before is not None:
        target.write_text(before)
    done = register_definitions(read_definitions(definitions), target)
    return target.read_text(), done


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(None, "tools:\n" + ADDED, id="no-file"),
        pytest.param("version: 1", "version: 1\ntools:\n" + ADDED, id="no-final-newline"),
        pytest.param(
            "tools:   # none yet\nversion: 1\n",
            "tools:   # none yet\n" + ADDED + "version: 1\n",
            id="tools-empty",
        ),
        pytest.param("tools: []  # none\n# end\n", "tools:  # none\n" + ADDED + "# end\n", id="[]"),
    ],
)
def test_entries_keep_their_text_wherever_tools_stands(
    tmp_path: Path, before: str | None, after: str
) -> None:
    text, done = _register(tmp_path, before)
    assert text == after
    assert done == {"a": "added", "b": "added"}


def test_a_replaced_entry_takes_the_place_and_column_of_the_old_one(tmp_path: Path) -> None:
    before = "tools:\n-   id: b   # old b\n    source: {type: cli, command: x}\n# after\n"
    text, done = _register(tmp_path, before)
    assert done == {"b": "replaced", "a": "added"}
    assert text == (
        "tools:\n-   {id: b, source: {type: cli, command: 'true'}}  # b\n"
        "-   id: a   # first\n    description: |\n      Line one.\n      Line two.\n"
        "    source: {type: cli,\n             command: 'true'}\n# after\n"
    )


def test_a_flow_list_of_tools_is_rewritten_with_the_same_meaning(tmp_path: Path) -> None:
    before = "# mine\ntools: [{id: b, source: {type: cli, command: x}}]\n"
    text, done = _register(tmp_path, before)
    assert done == {"b": "replaced", "a": "added"}
    assert text.startswith("# mine\n")
    tools = yaml.safe_load(text)["tools"]
    assert [t["id"] for t in tools] == ["b", "a"]
    assert tools[1]["description"] == "Line one.\nLine two.\n"


def test_a_nex_yaml_that_is_not_settings_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        _register(tmp_path, "- just a list\n")
    with pytest.raises(ConfigError, match="`tools` must be a list of tool entries, got dict"):
        _register(tmp_path, "tools: {a: 1}\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        _register(tmp_path, "tools: [\n")


# a nex.yaml kept on Windows: CRLF line ends, comments, a blank line, a flow mapping over lines
CRLF_HEAD = (
    "# settings\r\nversion: 1   # one\r\n\r\nsearch: {mode: keyword,\r\n"
    "         threshold: 0.2}\r\ntools:\r\n  # the clock\r\n"
    "  - {id: now, source: {type: cli, command: date}}   # now\r\n"
)
CRLF_TAIL = "skills: [~/team-skills]   # more\r\n"


def _register_bytes(tmp_path: Path, before: bytes) -> bytes:
    definitions = tmp_path / "defs.yaml"
    definitions.write_text(DEFINITIONS)
    target = tmp_path / "nex.yaml"
    target.write_bytes(before)
    register_definitions(read_definitions(definitions), target)
    return target.read_bytes()


def test_a_crlf_nex_yaml_keeps_its_bytes_and_gets_the_entry_in_crlf(tmp_path: Path) -> None:
    after = _register_bytes(tmp_path, (CRLF_HEAD + CRLF_TAIL).encode())
    added = ADDED.replace("\n", "\r\n")
    assert after == (CRLF_HEAD + added + CRLF_TAIL).encode()
    assert [t["id"] for t in yaml.safe_load(after)["tools"]] == ["now", "a", "b"]


def test_a_crlf_nex_yaml_without_a_final_line_end(tmp_path: Path) -> None:
    after = _register_bytes(tmp_path, b"# mine\r\nversion: 1")
    assert after == ("# mine\r\nversion: 1\r\ntools:\r\n" + ADDED.replace("\n", "\r\n")).encode()
    again = _register_bytes(tmp_path, b"tools:\r\n  - {id: a, source: {type: cli, command: x}}")
    # a replaced in its place, b after it; the file still ends without a line end
    assert again == ("tools:\r\n" + ADDED.replace("\n", "\r\n")).encode().removesuffix(b"\r\n")


def test_mixed_line_ends_stay_each_as_it_was(tmp_path: Path) -> None:
    before = b"# crlf\r\nversion: 1\n# lf\ntools:\r\n# end\n"
    after = _register_bytes(tmp_path, before)
    assert (
        after
        == b"# crlf\r\nversion: 1\n# lf\ntools:\r\n"
        + ADDED.replace("\n", "\r\n").encode()
        + b"# end\n"
    )


def test_a_crlf_flow_list_rewritten_round_trip_keeps_crlf(tmp_path: Path) -> None:
    after = _register_bytes(
        tmp_path, b"# mine\r\ntools: [{id: b, source: {type: cli, command: x}}]\r\n"
    )
    assert after.startswith(b"# mine\r\n")
    assert b"\n" not in after.replace(b"\r\n", b"")
    assert [t["id"] for t in yaml.safe_load(after)["tools"]] == ["b", "a"]
