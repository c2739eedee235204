"""Layered configuration: ``<NEXUS_HOME>/nex.yaml`` (user) < ``./nex.yaml`` (project) <
runtime settings, deep-merged and validated into one :class:`Settings`.

>>> settings = load_settings(Path("."), runtime={"grant": "read_only"})
>>> settings.grant.rest
'read_only'

Merging: mappings merge key by key; lists of mappings that carry a ``name`` (MCP servers,
CLI tools) merge by name (``tools:`` entries are replaced whole by ``id``), so a project can override one user-level server; other lists are
replaced by the higher level. A bad file raises :class:`ConfigError` naming the file, the
line and the key (with a "did you mean" for misspelled keys).

``NEXUS_HOME`` relocates ``~/.nexus`` (the user level, credentials file, audit log).
"""

from __future__ import annotations

import difflib
import os
import re
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import ConfigError
from .model import Settings

if TYPE_CHECKING:
    from ..policy.protocols import Credentials

__all__ = [
    "CONFIG_FILENAME",
    "interpolate",
    "load_settings",
    "merge_levels",
    "nexus_home",
    "read_level",
    "where_set",
]

CONFIG_FILENAME = "nex.yaml"
_REF = re.compile(r"\$\{(env|credentials):([^}]*)\}")


def nexus_home() -> Path:
    """``$NEXUS_HOME`` or ``~/.nexus``: where user-level settings and credentials live."""
    chosen = os.environ.get("NEXUS_HOME")
    return Path(chosen).expanduser() if chosen else Path.home() / ".nexus"


# -- reading ------------------------------------------------------------------------------


def read_level(path: Path) -> dict[str, Any]:
    """The mapping in YAML file ``path`` (``{}`` when it is missing or empty)."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{path}{where}: invalid YAML ({problem}).") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}, line 1: the top level must be a mapping of settings, got "
            f"{type(data).__name__} {data!r}."
        )
    if _twice_named(data):  # cheap on the loaded data; the lines need a second parse
        _refuse_twice_named(path, text)
    return data


#: Named lists of one file: (where the list is, the key that names an item, what an item is).
_NAMED_LISTS = (
    (("tools",), "id", "tool id"),
    (("cli_tools",), "name", "CLI tool"),
    (("mcp", "servers"), "name", "MCP server"),
)


def _twice_named(data: Mapping[str, Any]) -> bool:
    """Whether a named list of ``data`` (see :data:`_NAMED_LISTS`) names two items alike."""
    for where, ident, _what in _NAMED_LISTS:
        found: Any = data
        for key in where:
            found = found.get(key) if isinstance(found, Mapping) else None
        if isinstance(found, list):
            names = [i.get(ident) for i in found if isinstance(i, Mapping)]
            names = [str(n) for n in names if n is not None]
            if len(names) != len(set(names)):
                return True
    return False


def _refuse_twice_named(path: Path, text: str) -> None:
    """One file naming two items of a list alike (two tools with one id): the second would
    silently replace the first, so it is an error that gives both lines."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    for where, ident, what in _NAMED_LISTS:
        node = root
        for key in where:
            node = _child(node, key)
        if not isinstance(node, yaml.SequenceNode):
            continue
        seen: dict[str, int] = {}
        for item in node.value:
            name = _child(item, ident)
            if not isinstance(name, yaml.ScalarNode):
                continue
            line = name.start_mark.line + 1
            if name.value in seen:
                raise ConfigError(
                    f"{path}, line {line}: {what} {name.value!r} is declared twice in this "
                    f"file (first at line {seen[name.value]}); the second would replace the "
                    "first. Remove one, or give it another name."
                )
            seen[name.value] = line


def _child(node: Any, key: str) -> Any:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((v for k, v in node.value if getattr(k, "value", None) == key), None)


#: Lists whose items each level adds to (folders to look in), rather than replaces.
_ADDED_UP = frozenset({"skills"})


def merge_levels(low: Mapping[str, Any], high: Mapping[str, Any]) -> dict[str, Any]:
    """``high`` over ``low``: mappings merge, named lists merge by name, the folder lists of
    :data:`_ADDED_UP` add up (each level's paths are absolute by then), the rest is replaced."""
    out = dict(low)
    for key, value in high.items():
        before = out.get(key)
        if isinstance(before, Mapping) and isinstance(value, Mapping):
            out[key] = merge_levels(before, value)
        elif key in _ADDED_UP and isinstance(before, list) and isinstance(value, list):
            out[key] = [*before, *(v for v in value if v not in before)]
        elif isinstance(before, list) and (ident := _list_key(before, value)):
            merged = {item[ident]: item for item in before}
            for item in value:
                old = merged.get(item[ident])
                # a server is merged key by key; a declared tool is replaced whole
                merged[item[ident]] = merge_levels(old, item) if old and ident == "name" else item
            out[key] = list(merged.values())
        else:
            out[key] = value
    return out


def _list_key(low: Any, high: Any) -> str | None:
    """The key both lists are merged by: ``name`` (servers, CLI tools) or ``id`` (tools)."""
    for ident in ("name", "id"):
        if _named_list(low, ident) and _named_list(high, ident):
            return ident
    return None


def _named_list(value: Any, ident: str = "name") -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, Mapping) and isinstance(v.get(ident), str) for v in value)
    )


def _mark_declarations(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """Each ``tools:`` entry of file ``path`` remembers it, and its relative ``skills:``
    folders become absolute, so paths resolve against that file's folder (not the working
    directory, nor the project when the file is the user level)."""
    out = dict(data)
    tools = data.get("tools")
    if isinstance(tools, list):
        out["tools"] = [
            {**t, "declared_in": str(path.resolve())} if isinstance(t, Mapping) else t
            for t in tools
        ]
    skills = data.get("skills")
    if isinstance(skills, list):
        folder = path.resolve().parent
        out["skills"] = [
            str(folder / s) if isinstance(s, str) and not s.startswith(("~", "/")) else s
            for s in skills
        ]
    return out


def load_settings(
    root: str | Path = ".",
    runtime: Mapping[str, Any] | None = None,
    *,
    project_file: str | Path | None = None,
    user: bool = True,
) -> Settings:
    """Merge the user level, the project level (``root/nex.yaml`` or ``project_file``) and
    ``runtime``; validate. Raises :class:`ConfigError` naming file, line and key."""
    levels: list[tuple[Path | None, dict[str, Any]]] = []
    if user:
        user_file = nexus_home() / CONFIG_FILENAME
        levels.append((user_file, read_level(user_file)))
    project = Path(project_file) if project_file is not None else Path(root) / CONFIG_FILENAME
    if project_file is not None and not project.is_file():
        raise ConfigError(f"Config file {str(project)!r} does not exist; check --config.")
    levels.append((project, read_level(project)))
    if runtime:
        levels.append((None, dict(runtime)))
    # validate each level alone first, so an error names the file it came from
    for path, data in levels:
        if data:
            _validate(data, path)
    levels = [(p, _mark_declarations(d, p) if p is not None else d) for p, d in levels]
    merged: dict[str, Any] = {}
    for _, data in levels:
        merged = merge_levels(merged, data)
    files = tuple(str(p) for p, d in levels if p is not None and d)
    return _validate({**merged, "files": files}, None)


# -- errors with file, line and key -------------------------------------------------------


def _validate(data: dict[str, Any], path: Path | None) -> Settings:
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path)) from None


def _describe(
    exc: ValidationError,
    path: Path | None,
    prefix: tuple[Any, ...] = (),
    in_file: tuple[Any, ...] | None = None,
) -> str:
    """One message per error (up to five). ``prefix`` is where the validated part sits in
    :class:`Settings` (``("tools", 0)`` for one declared tool) and ``in_file`` where it sits
    in the file, when that differs (a definition file holding just the entry)."""
    messages = []
    for err in exc.errors()[:5]:
        loc, holder = _walk((*prefix, *err["loc"]))
        file_loc = loc if in_file is None else (*in_file, *loc[len(prefix) :])
        key = _dotted(file_loc)
        line = _line_of(path, file_loc) if path is not None else None
        where = f"{path}, line {line}" if line else (str(path) if path else "runtime settings")
        if err["type"] == "extra_forbidden":
            hint = _did_you_mean(loc[-1], holder)
            messages.append(f"{where}: unknown key {key!r}.{hint}")
        else:
            value = err.get("input")
            shown = f" (got {value!r})" if not isinstance(value, dict | list) else ""
            hint = _closest_choice(err, value)
            messages.append(f"{where}: key {key!r}: {err['msg']}{shown}.{hint}")
    more = len(exc.errors()) - len(messages)
    tail = f" (and {more} more)" if more > 0 else ""
    return " ".join(messages) + tail


def _dotted(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not isinstance(part, str) or part.startswith(("function-", "literal[")):
            continue
        else:
            out += ("." if out else "") + part
    return out or "(top level)"


def _walk(loc: tuple[Any, ...]) -> tuple[tuple[Any, ...], type[BaseModel] | None]:
    """``loc`` without the tags pydantic puts after a field that holds a tagged union
    (``tools[0].source.cli.command`` -> ``tools[0].source.command``), and the model in
    which its last key is looked up (the union member the tag chose)."""
    kept: list[Any] = []
    model: Any = Settings
    holder: Any = Settings
    members: tuple[type[BaseModel], ...] = ()
    keyed = False  # the part before named a mapping of models: this part is a key of it
    for part in loc:
        if members:  # this part is the tag: it picks the member
            model = next((m for m in members if part in _tags_of(m)), None)
            members = ()
            continue
        kept.append(part)
        holder = model
        if keyed:  # ``toolsets.research``: "research" is a name, its value the model
            keyed = False
            continue
        if isinstance(part, int) or model is None:
            continue
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is not None and field.discriminator is not None:
            members = _models_in(field.annotation)
        model = _model_of(field.annotation) if field is not None else None
        keyed = field is not None and typing.get_origin(field.annotation) is dict
    return tuple(kept), holder


def _tags_of(model: type[BaseModel]) -> tuple[Any, ...]:
    field = model.model_fields.get("type")
    return typing.get_args(field.annotation) if field is not None else ()


def _models_in(annotation: Any) -> tuple[type[BaseModel], ...]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return (annotation,)
    return tuple(m for arg in typing.get_args(annotation) for m in _models_in(arg))


def _did_you_mean(key: Any, model: type[BaseModel] | None) -> str:
    if model is None:
        return ""
    close = difflib.get_close_matches(str(key), list(model.model_fields), n=1, cutoff=0.5)
    known = ", ".join(k for k in model.model_fields if k not in ("files", "declared_in"))
    return f" Did you mean {close[0]!r}?" if close else f" Known keys: {known}."


def _closest_choice(err: Mapping[str, Any], value: Any) -> str:
    """The hint after a misspelt choice (``literal_error``): ``Did you mean 'read_only'?``."""
    if err["type"] != "literal_error" or not isinstance(value, str):
        return ""
    choices = re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", "")))
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_of(arg)
        if found is not None:
            return found
    return None


def where_set(files: Sequence[str | Path], loc: tuple[str, ...]) -> tuple[Path, int] | None:
    """The file and 1-based line that set key ``loc`` (``("serve", "auth", "mode")``): the
    last of ``files`` (a :class:`Settings`' ``files``, lowest level first) holding it, so the
    one whose value won the merge. ``None`` when no file holds it.

    For settings a face validates itself (``serve:``), to report them as this module does.
    """
    for name in reversed(files):
        path = Path(name)
        try:
            node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
        except (OSError, yaml.YAMLError):
            continue
        line = None
        for part in loc:
            hit = None
            if isinstance(node, yaml.MappingNode):
                hit = next(((k, v) for k, v in node.value if k.value == part), None)
            if hit is None:
                break
            line, node = hit[0].start_mark.line + 1, hit[1]
        else:
            if line is not None:
                return path, line
    return None


def _line_of(path: Path, loc: tuple[Any, ...]) -> int | None:
    """The 1-based line of the deepest node of ``loc`` found in the YAML file."""
    try:
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, yaml.YAMLError):
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            hit = next(((k, v) for k, v in node.value if k.value == part), None)
            if hit is None:
                continue  # a pydantic-only segment (union branch); stay on this node
            line, node = hit[0].start_mark.line + 1, hit[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
            line = node.start_mark.line + 1
    return line


# -- interpolation ------------------------------------------------------------------------


def interpolate(
    value: Any, credentials: Credentials | None = None, *, where: str = "nex.yaml"
) -> Any:
    """Fill ``${env:VAR}`` and ``${credentials:service/key}`` in strings (recursively in
    lists and dicts). ``credentials`` is a :class:`~nexus_jupyter.core.policy.credentials.CredentialStore`.

    >>> interpolate("Bearer ${env:HOME}") == "Bearer " + os.environ["HOME"]
    True

    A missing variable or credential raises :class:`ConfigError` saying how to set it
    (``where`` names the setting, e.g. ``"MCP server 'github'"``).
    """
    if isinstance(value, str):
        return _REF.sub(
            lambda m: _resolve(m.group(1), m.group(2).strip(), credentials, where), value
        )
    if isinstance(value, list | tuple):
        return [interpolate(v, credentials, where=where) for v in value]
    if isinstance(value, Mapping):
        return {k: interpolate(v, credentials, where=where) for k, v in value.items()}
    return value


def _resolve(kind: str, ref: str, credentials: Credentials | None, where: str) -> str:
    if kind == "env":
        found = os.environ.get(ref)
        if found is None:
            raise ConfigError(
                f"{where}: ${{env:{ref}}} is used but the environment variable {ref!r} is not "
                f"set; export {ref}=... before starting."
            )
        return found
    service, _, key = ref.partition("/")
    key = key or "api_key"
    if not service:
        raise ConfigError(
            f"{where}: ${{credentials:{ref}}} needs a service, like ${{credentials:github/token}}."
        )
    found = credentials.lookup(service, key) if credentials is not None else None
    if found is None:
        raise ConfigError(
            f"{where}: ${{credentials:{service}/{key}}} is not set. Set it with "
            f"`nexus-tools credentials set {service} {key}` or `%tool credentials set {service} {key}`."
        )
    return str(found)
