"""The %tool / %%tool / %tools magics and the Python functions behind them, in a real shell."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from IPython.core.completer import provisionalcompleter
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from nbhelpers import Face, run_ok

from nexus_jupyter import Registry, ToolResult
from nexus_jupyter.notebook.magics import ToolMagics, build_help
from nexus_jupyter.notebook.subcommands import SUBCOMMANDS
from nexus_jupyter.notebook.widgets.catalog import Catalog
from nexus_jupyter.notebook.widgets.form import ToolForm

TOOLS = '''
from typing import Literal
from nexus_jupyter import tool

@tool(categories=["math"], capabilities=["arithmetic"])
def add(a: int, b: int = 2) -> int:
    """Add two integers."""
    return a + b

@tool(categories=["text"], permission="workspace_write")
def shout(text: str, mark: Literal["!", "?"] = "!") -> str:
    """Upper-case a text and end it with a mark."""
    return text.upper() + mark

@tool(categories=["text"])
def fail(reason: str) -> str:
    """Always fails with the given reason."""
    raise ValueError(reason)
'''


@pytest.fixture
def tools(shell: InteractiveShell) -> None:
    run_ok(shell, TOOLS)


def test_load_ext_imports_nothing_heavy() -> None:
    """What %load_ext imports (its time is measured in benchmarks/load_ext.py, not here)."""
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "sh = InteractiveShell.instance()\n"
        "sh.run_line_magic('load_ext', 'nexus_jupyter')\n"
        "print(','.join(m for m in ('mcp', 'jupyter_server', 'ipywidgets', 'pydantic') "
        "if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "", run.stdout  # no heavy module was imported


def test_list_all_and_filtered(face: Face, tools: None) -> None:
    assert face.list().names == ["add", "fail", "shout"]
    assert face.list(category="text").names == ["fail", "shout"]
    assert face.list(source="notebook").names == ["add", "fail", "shout"]
    assert face.list(source="note*").names == ["add", "fail", "shout"]
    assert "Did you mean 'notebook'?" in face.error("list", source="notebok")


def test_list_renders_badges_and_text(face: Face, tools: None) -> None:
    view = face.list()
    page = view._repr_html_()
    assert "add" in page and "workspace_write" in page and "notebook" in page and ">ok<" in page
    text = repr(view) if False else __import__("IPython").lib.pretty.pretty(view)
    assert "shout  [notebook, workspace_write]  Upper-case a text" in text


def test_search_ranks_the_matching_tool_first(face: Face, tools: None) -> None:
    hits = face.search("add two integers")
    assert hits.names[0] == "add"
    assert "add" in hits._repr_html_()


def test_search_says_how_it_read_a_misspelt_query(face: Face, tools: None) -> None:
    hits = face.search("add two intgers")
    assert hits.names[0] == "add" and hits.searched_for == "add two integers"
    assert "(searched for <code>add two integers</code>)" in hits._repr_html_()
    text = __import__("IPython").lib.pretty.pretty(hits)
    assert text.splitlines()[0] == "searched for: add two integers"
    plain = face.search("add two integers")
    assert "searched for" not in plain._repr_html_() + __import__("IPython").lib.pretty.pretty(
        plain
    )


def test_search_says_which_named_service_has_no_tool(face: Face, tools: None) -> None:
    hits = face.search("add two numbers in our Salesforce report")
    assert hits.names == [] and hits.unserved == ["Salesforce"]
    assert "no installed tool works with Salesforce" in hits._repr_html_()
    assert "no installed tool works with Salesforce" in __import__("IPython").lib.pretty.pretty(
        hits
    )


def test_search_without_query_is_a_usage_error(face: Face, tools: None) -> None:
    assert "give a query" in face.error("search", "")


def test_info_shows_card_and_unknown_name_suggests(face: Face, tools: None) -> None:
    info = face.info("add")
    assert info.name == "add"
    page = info._repr_html_()
    assert "Add two integers." in page and "<code>a</code>" in page and "arithmetic" in page
    assert "Did you mean 'add'?" in face.error("info", "ad")


def test_call_with_json_and_key_value(face: Face, tools: None) -> None:
    result = face.call("add", {"a": 1, "b": 5})
    assert isinstance(result, ToolResult) and result.structured == 6
    assert face.call("shout", {"text": "two words", "mark": "?"}, style="kv").structured == (
        "TWO WORDS?"
    )
    # `text=42`: the parameter takes text, so it gets the text (not the number 42)
    assert face.call("shout", {"text": "42"}, style="kv").structured == "42!"


def test_call_invalid_arguments_names_the_field(face: Face, tools: None) -> None:
    message = face.error("call", "add", {"a": "one"})
    assert '$.a: expected an integer (got "one")' in message


def test_call_unknown_tool_suggests(face: Face, tools: None) -> None:
    assert "Did you mean 'shout'?" in face.error("call", "shou", {"text": "x"})


def test_failing_tool_is_a_result_not_an_exception(face: Face, tools: None) -> None:
    result = face.call("fail", {"reason": "boom"})
    assert result.is_error and result.error == "boom" and result.error_type == "ValueError"


def test_calls_go_to_the_shared_history(face: Face, tools: None) -> None:
    face.call("add", {"a": 1})
    face.call("shout", {"text": "x"})
    face.call("add", {"a": 2})
    everything = face.history()
    assert [r.tool for r in everything] == ["add", "shout", "add"]
    only_add = face.history("add")
    assert [r.arguments for r in only_add] == [{"a": 1}, {"a": 2}]
    assert "#" in only_add._repr_html_()
    assert "Did you mean 'add'?" in face.error("history", "addd")


def test_remove_tool_and_unknown_name(face: Face, tools: None, registry: Registry) -> None:
    face.remove("add")
    assert "add" not in registry
    assert "No tool named 'add'" in face.error("remove", "add")


def test_removed_tool_is_not_registered_again_by_the_next_cell(
    face: Face, tools: None, registry: Registry, shell: InteractiveShell
) -> None:
    face.remove("add")
    run_ok(shell, "x = 1")
    assert "add" not in registry
    run_ok(shell, TOOLS)  # running the defining cell again brings it back
    assert "add" in registry


def test_try_and_browse_return_widgets(face: Face, tools: None) -> None:
    form = face.try_("add")
    assert isinstance(form, ToolForm) and form.tool.name == "add"
    catalog = face.browse("upper case")
    assert isinstance(catalog, Catalog) and catalog.names[0] == "shout"
    catalog.close()
    form.close()


def test_cell_magic_registers_functions_without_decorator(face: Face, registry: Registry) -> None:
    face.define(
        "def area(width: float, height: float) -> float:\n"
        '    """Area of a rectangle."""\n'
        "    return width * height\n"
        "def _helper() -> None: ...\n",
        permission="workspace_write",
        categories=["geometry", "demo"],
        capabilities=["measure"],
        requires_credentials=["acme"],
    )
    spec = registry.get("area").spec
    assert spec.permission == "workspace_write"
    assert spec.categories == ("geometry", "demo") and spec.capabilities == ("measure",)
    assert spec.requires_credentials == ("acme",)
    assert "_helper" not in registry
    assert registry.get("area").source_code is not None
    assert "def area" in registry.get("area").source_code


def test_cell_magic_name_option_and_its_mistakes(face: Face, registry: Registry) -> None:
    face.define("def f(x: int) -> int:\n    return x\n", name="double")
    assert "double" in registry and "f" not in registry
    two = "def g(x: int) -> int:\n    return x\ndef h(x: int) -> int:\n    return x\n"
    assert "defines 2 functions" in face.error("define", two, name="one")
    assert "Unknown permission 'root'" in face.error(
        "define", "def k() -> None: ...", permission="root"
    )
    assert "defines no function" in face.error("define", "x = 1\n")


def test_cell_magic_refuses_varargs_with_a_clear_sentence(face: Face) -> None:
    message = face.error("define", "def bad(*args: int) -> int:\n    return 0\n")
    assert "*args" in message


def test_cell_magic_user_error_shows_only_the_users_traceback(
    shell: InteractiveShell, registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    result = shell.run_cell(
        "%%tool\ndef f(x: int) -> int:\n    return x\nraise ValueError('oops')\n"
    )
    assert isinstance(result.error_in_exec, UsageError)
    out = capsys.readouterr()
    shown = out.out + out.err
    assert "ValueError" in shown and "oops" in shown
    assert "cell_tools.py" not in shown and "magics.py" not in shown  # none of our frames
    assert "no tool was registered" in shown and "f" not in registry


def test_unknown_subcommand_and_option_suggest(shell: InteractiveShell, tools: None) -> None:
    with pytest.raises(UsageError, match="Did you mean 'list'"):
        Face("magic", shell)._magic("%tool lst")
    with pytest.raises(UsageError, match="Did you mean --source"):
        Face("magic", shell)._magic("%tool list --sorce notebook")
    with pytest.raises(UsageError, match="not valid JSON"):
        Face("magic", shell)._magic('%tool call add {"a": 1')
    with pytest.raises(UsageError, match="key=value pairs"):
        Face("magic", shell)._magic("%tool call add 1 2")


def test_usage_errors_show_no_traceback(
    shell: InteractiveShell, tools: None, capsys: pytest.CaptureFixture[str]
) -> None:
    result = shell.run_cell("%tool info nope")
    assert isinstance(result.error_in_exec, UsageError)
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert "UsageError: No tool named 'nope'" in out.out + out.err


def test_help_explains_every_subcommand_with_an_example(shell: InteractiveShell) -> None:
    doc = ToolMagics.tool.__doc__ or ""
    for name, sub in SUBCOMMANDS.items():
        assert f"%tool {name}" in doc
        help_text = run_ok(shell, f"%tool help {name}")
        assert sub.summary in help_text and "Example: " in help_text
    assert "%%tool" in doc and build_help() == doc
    with pytest.raises(UsageError, match="Did you mean 'call'"):
        Face("magic", shell)._magic("%tool help cal")


def test_help_is_what_the_question_mark_shows(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_cell("%tool?")
    assert "Subcommands:" in capsys.readouterr().out


def _completions(shell: InteractiveShell, line: str) -> list[str]:
    with provisionalcompleter():
        return sorted(c.text for c in shell.Completer.completions(line, len(line)))


def test_tab_completion_of_subcommands_and_tool_names(shell: InteractiveShell, tools: None) -> None:
    assert _completions(shell, "%tool ca") == ["call"]
    assert _completions(shell, "%tool ") == sorted(SUBCOMMANDS)
    assert _completions(shell, "%tool call sh") == ["shout"]
    assert _completions(shell, "%tool info ") == ["add", "fail", "shout"]
    assert _completions(shell, "%tool help hi") == ["history"]


def test_tools_magic_opens_the_catalog(shell: InteractiveShell, tools: None) -> None:
    catalog = run_ok(shell, "%tools")
    assert isinstance(catalog, Catalog) and catalog.names == ["add", "fail", "shout"]
    catalog.close()


def test_call_braces_are_not_expanded_as_variables(shell: InteractiveShell, tools: None) -> None:
    run_ok(shell, "a = 100")
    result = run_ok(shell, '%tool call add {"a": 1}')
    assert result.structured == 3
    assert json.loads(json.dumps(result.to_dict()))["structured"] == 3


def test_tool_and_registry_render(shell: InteractiveShell, registry: Registry, tools: None) -> None:
    from nexus_jupyter.render.catalog import registry_html, registry_text

    def shown(obj: object) -> dict[str, str]:  # what the notebook's formatters produce
        data, _ = shell.display_formatter.format(obj)
        return data

    tool = registry.get("shout")
    page = shown(tool)["text/html"]
    assert "workspace_write" in page and "notebook" in page and "<table>" in page
    assert "Upper-case a text" in page
    html = registry_html(registry.entries(), registry.sources())
    assert "Registry" in html and "add" in html
    assert shown(registry)["text/html"] == html  # what a notebook shows for `reg`
    text = registry_text(registry.entries(), registry.sources())
    assert "source notebook (3 tools)" in text
    assert shown(registry)["text/plain"] == text


def test_stray_words_and_bad_limits_are_usage_errors(
    shell: InteractiveShell, registry: Registry, tools: None
) -> None:
    result = shell.run_cell("%%tool mytool\ndef f(a: int) -> int:\n    return a\n")
    assert isinstance(result.error_in_exec, UsageError)
    assert "unexpected argument 'mytool'" in str(result.error_in_exec)
    assert "f" not in registry
    with pytest.raises(UsageError, match="at least 1"):
        Face("magic", shell)._magic("%tool search add --limit 0")
