"""The ``create_dynamic_tool`` built-in: an agent writes a new tool file into the tools folder.

The agent gives a name, a description, the parameters (a JSON Schema object, or a Python
signature such as ``"a: int, b: int = 2"``) and the code (a function body, or full Python
source with a ``def``). The module is generated, loaded in memory first (a file that would
not load is never written), then written through the same writer as ``%tool export``
(name rules, atomic write, version history) and loaded by the folder's directory source, so
the tool is live at once.

It never overwrites a file a person wrote or edited; ``overwrite=True`` only replaces a file
that nexus itself wrote and nobody changed since.
"""

from __future__ import annotations

import ast
import datetime as _dt
import keyword
import os
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ...core.errors import ExportError
from ...core.tools.context import ToolContext
from ...core.tools.decorator import tool
from ...core.tools.summary import check_summary
from ...core.tools.tool import Tool
from ..directory import LOAD_TIMEOUT_S
from ..loader import load_tool_text
from ..tool_files import (
    default_tools_dir,
    hand_over,
    stamp_text,
    target_path,
    validate_file_name,
    write_tool_file,
)
from .protected import refuse_protected
from .reserved_names import agent_file_stem, refuse_reserved

__all__ = ["build_tool_module", "create_dynamic_tool_tool", "schema_to_signature"]

_JSON_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict[str, Any]",
    "null": "None",
}


def _type_of(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " | ".join(_type_of({**schema, "type": k}) for k in kind)
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"list[{_type_of(schema['items'])}]"
    return _JSON_TYPES.get(kind, "Any")


def schema_to_signature(schema: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    """A Python parameter list for a JSON Schema object, and each parameter's description.

    >>> schema_to_signature({"type": "object", "properties": {"a": {"type": "integer"},
    ...     "b": {"type": "integer", "default": 2}}, "required": ["a"]})[0]
    'a: int, b: int = 2'
    """
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        raise ValueError(f'parameters must be a JSON Schema with "type": "object", got {schema!r}.')
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    first: list[str] = []
    later: list[str] = []
    docs: dict[str, str] = {}
    for pname, prop in props.items():
        if not isinstance(pname, str) or not pname.isidentifier() or keyword.iskeyword(pname):
            raise ValueError(f"Parameter name {pname!r} is not a Python identifier; rename it.")
        prop = prop if isinstance(prop, Mapping) else {}
        hint = _type_of(prop)
        if prop.get("description"):
            docs[pname] = " ".join(str(prop["description"]).split())
        if "default" in prop:
            later.append(f"{pname}: {hint} = {prop['default']!r}")
        elif pname in required:
            first.append(f"{pname}: {hint}")
        else:
            optional = hint if "None" in hint.split(" | ") else f"{hint} | None"
            later.append(f"{pname}: {optional} = None")
    return ", ".join(first + later), docs


def _has_await(body: list[ast.stmt]) -> bool:
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Await | ast.AsyncFor | ast.AsyncWith):
            return True
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _options(
    name: str, fn_name: str, description: str, permission: str, summary: str | None = None
) -> str:
    opts = {
        "name": name if name != fn_name else None,
        "description": description or None,
        "permission": permission if permission != "read_only" else None,
        "summary": summary or None,
    }
    given = ", ".join(f"{k}={v!r}" for k, v in opts.items() if v is not None)
    return f"@tool({given})" if given else "@tool"


def build_tool_module(
    name: str,
    description: str,
    code: str,
    parameters: Mapping[str, Any] | str | None = None,
    permission: str = "read_only",
    summary: str | None = None,
) -> str:
    """The module text (without the stamp) for a new tool. Raises ValueError/ExportError.

    ``summary`` is the tool's one-line description of a call (``@tool(summary=...)``)."""
    if summary is not None:
        check_summary(summary)
    validate_file_name(name)
    fn_name = name.replace("-", "_")
    if keyword.iskeyword(fn_name):
        fn_name += "_"
    source = textwrap.dedent(code).strip("\n") + "\n"
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"The code has a syntax error on line {exc.lineno}: {exc.msg}.") from None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if defs:  # full source: decorate the main function unless it already is
        main = next((d for d in defs if d.name in (fn_name, name)), defs[-1])
        lines = source.splitlines(keepends=True)
        if not main.decorator_list:
            at = main.lineno - 1
            lines.insert(at, _options(name, main.name, description, permission, summary) + "\n")
        prefix = (
            ""
            if "from nexus_jupyter import tool" in source
            else "from nexus_jupyter import tool\n\n"
        )
        return prefix + "".join(lines)
    if isinstance(parameters, str):
        docs: dict[str, str] = {}
        signature = parameters.strip()
        try:
            ast.parse(f"def f({signature}): pass")
        except SyntaxError as exc:
            raise ValueError(
                f"parameters {parameters!r} is not a Python signature: {exc.msg}."
            ) from None
    else:
        signature, docs = schema_to_signature(parameters or {"type": "object", "properties": {}})
    doc = description.strip() or f"The {name} tool."
    if docs:
        doc += "\n\nArgs:\n" + "".join(f"    {k}: {v}\n" for k, v in docs.items())
    asyn = "async " if _has_await(tree.body) else ""
    head = "from typing import Any, Literal\n\nfrom nexus_jupyter import tool\n\n\n"
    return (
        head
        + _options(name, fn_name, "", permission, summary)
        + "\n"
        + f"{asyn}def {fn_name}({signature}) -> Any:\n"
        + textwrap.indent(f'"""{doc.rstrip()}\n"""\n', "    ")
        + textwrap.indent(source, "    ")
    )


def create_dynamic_tool_tool(root: str | Path, registry: Any) -> Tool:
    """The ``create_dynamic_tool`` built-in for workspace ``root``."""
    base = Path(root)

    # danger_full_access: the code it is given runs in this process, at once (on load) and on
    # every call of the new tool, so it must go through the same approval as `bash`.
    @tool(
        permission="danger_full_access",
        categories=["tools"],
        capabilities=["create_tool"],
        summary="Creating the tool {name}",
    )
    def create_dynamic_tool(
        name: str,
        description: str,
        code: str,
        parameters: dict[str, Any] | str | None = None,
        permission: Literal["read_only", "workspace_write", "danger_full_access"] = "read_only",
        overwrite: bool = False,
        human_readable_format: str | None = None,
        agent_id: str | None = None,
        *,
        ctx: ToolContext,
    ) -> dict[str, Any]:
        """Create a new tool as a Python file in the tools folder; it is live at once.

        The code runs with the full rights of this process, so creating a tool needs the
        approval a `danger_full_access` tool needs; the permission it declares is what the
        person approving it accepts for every later call.

        Args:
            name: Tool name: letters, digits, '_' and '-', at most 64 characters.
            description: What the tool does (shown to agents).
            code: The function body (uses the parameters by name; `return` the result), or
                full Python source with a `def` (and its imports).
            parameters: The parameters, as a JSON Schema object or a Python signature such
                as "a: int, b: int = 2". Ignored when `code` has a `def`.
            permission: What the tool may do: read_only, workspace_write or danger_full_access.
            overwrite: Replace an existing tool file this tool (or export) wrote.
            human_readable_format: A call's one-line description, a format string over the
                parameters, e.g. "Calculating: {a} {operation} {b}".
            agent_id: Who is creating the tool; the file is then named
                agent_<agent_id>_<name>.py and records the agent.
        """
        validate_file_name(name)
        folder = default_tools_dir(registry, root=base)
        stem = agent_file_stem(name, agent_id)
        path = target_path(folder, stem)
        refuse_protected(Path(os.path.realpath(path)), registry, str(path))
        refuse_reserved(name, registry, path)
        if path.exists() and not overwrite:
            raise ExportError(
                f"A tool file {path.name!r} already exists; pass overwrite=true "
                "to replace it, or choose another name."
            )
        body = build_tool_module(
            name, description, code, parameters, permission, human_readable_format
        )
        when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        who = f" for agent {agent_id!r}" if agent_id else ""
        principal = ctx.request.principal_name
        text = stamp_text(
            body,
            header=f"Tool {name!r}, created by create_dynamic_tool{who} (principal "
            f"{principal!r}) on {when}.",
        )
        check = load_tool_text(text, path, timeout=LOAD_TIMEOUT_S)
        if not check.ok:
            raise ValueError(
                f"The new tool does not load: {check.error} (line {check.line}); "
                "nothing was written. Fix the code and try again."
            )
        if name not in check.names:
            raise ValueError(
                f"The code defines the tools {list(check.names)!r}, not {name!r}; "
                f"name the function {name.replace('-', '_')!r}."
            )
        write_tool_file(folder, stem, text, force=False, event="create")
        status = hand_over(registry, folder, path) if registry is not None else {}
        return {
            "name": name,
            "path": str(path),
            "status": status.get("status", "written"),
            "message": status.get("message"),
            "tools": status.get("tools", [name]),
        }

    return Tool.from_function(create_dynamic_tool, source="builtin", source_kind="builtin")
