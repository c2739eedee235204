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
