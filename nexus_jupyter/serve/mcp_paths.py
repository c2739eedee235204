"""How an MCP client over HTTP is shown this machine's paths.

An HTTP client may be on another machine: the absolute paths of the serving machine (the
workspace's place, the home folder, where Python and its packages are installed) tell it
nothing it can use and more than it should know. Over HTTP, a tool's ``_meta`` origin, an
error's text and a failed tool's traceback show a path under the workspace relative to it
(``tools/noisy.py``), a file of an installed package from its ``site-packages``
(``site-packages/httpx/_client.py``), one of Python's own from ``python``, and any other
absolute path of an origin or a traceback by its file name. The workspace itself is ``.``
(``the workspace '/home/ana/project'`` reads ``the workspace``). A description that quotes the
tool's command line (a declared script's ``Run `/usr/bin/python3 /home/ana/project/run.py`.``)
shows it as the origin is shown, and a source named by its folder
(``directory:/srv/tools``) names it so too. Over stdio the client runs on this machine, as
the person who started the server: it is shown the full paths.

    shown = ShownPaths("/home/ana/project")
    shown.traceback('File "/home/ana/project/tools/noisy.py", line 8')   # File "tools/noisy.py"
    shown.command("/usr/bin/python3 /home/ana/project/run.py")          # python3 run.py
    shown.text("outside the workspace '/home/ana/project'.")           # outside the workspace.
"""

from __future__ import annotations

import os
import re
import site
import sysconfig
from pathlib import Path

__all__ = ["ShownPaths"]

#: an absolute path in a command line: a word that starts with ``/`` (after a space, a
#: quote or ``=``)
_COMMAND_PATH = re.compile(r"""(?<![^\s'"=])(/[^\s'"]+)""")
#: a traceback's frame line: ``File "<path>", line N``
_FRAME_FILE = re.compile(r'File "([^"]+)"')
#: what may follow a whole path in a message: a space, a quote, punctuation that ends a
#: word (not the ``.`` of ``/srv/project.bak``), or the end of the text
_PATH_END = r"""(?=[\s'"`,;:!?)\]}>]|\.(?!\w)|$)"""


def _installed_places() -> list[tuple[str, str]]:
    """``(folder, label)`` of where packages and Python's own modules are installed."""
    places: list[tuple[str, str]] = []
    paths = sysconfig.get_paths()
    packages = {paths.get("purelib"), paths.get("platlib"), site.getusersitepackages()}
    packages.update(getattr(site, "getsitepackages", list)())
    places += [(p, "site-packages") for p in packages if p]
    places += [(p, "python") for p in {paths.get("stdlib"), paths.get("platstdlib")} if p]
    return places


class ShownPaths:
    """Paths as an HTTP client is shown them (see the module's docstring); ``root`` is the
    workspace."""

    def __init__(self, root: str | Path | None) -> None:
        folders = [(str(root), "")] if root else []
        folders += _installed_places()
        seen: dict[str, str] = {}
        for folder, label in folders:  # as given, and with its links resolved
            for form in (os.path.abspath(folder), os.path.realpath(folder)):
                seen.setdefault(form.rstrip(os.sep), label)
        # the longest first: a virtualenv inside the workspace is site-packages, not the
        # workspace
        self._places = sorted(seen.items(), key=lambda place: -len(place[0]))
        self._root = [f for f, label in self._places if label == "" and f]
        # the workspace itself (not a longer path that starts with it), maybe quoted, maybe
        # named as "the workspace '/home/ana/project'"
        self._bare_root = [
            re.compile(
                r"(?P<named>workspace\s+)?(?<![\w./~-])(?P<quote>['\"]?)"
                + re.escape(folder)
                + r"(?P=quote)"
                + _PATH_END
            )
            for folder in self._root
        ]

    def path(self, path: str) -> str:
        """One path: relative to the workspace or an install folder, else its file name."""
        if not os.path.isabs(path):
            return path
        for folder, label in self._places:
            if path == folder:
                return label or "."
            if path.startswith(folder + os.sep):
                rest = path[len(folder) + 1 :]
                return f"{label}/{rest}" if label else rest
        return os.path.basename(path) or path

    def text(self, text: str) -> str:
        """Free text (a message): a path under the workspace made relative to it; the rest
        left as written (a path the caller sent, like ``/etc/passwd``, is its own)."""
        for folder in self._root:
            text = text.replace(folder + os.sep, "")
        for bare in self._bare_root:
            text = bare.sub(_workspace_itself, text)
        return text

    def description(self, text: str, origin: str = "") -> str:
        """A tool's description: where it quotes the tool's ``origin`` (a declared command
        line's generated ``Run `...`.``), that shown as :meth:`command` shows the origin; the
        rest as :meth:`text`."""
        if origin and origin in text:
            text = text.replace(origin, self.command(origin))
        return self.text(text)

    def source(self, name: str) -> str:
        """A source's name: one that names a folder (``directory:/srv/tools``) names it as
        :meth:`path` shows it (``directory:tools``)."""
        kind, colon, rest = name.partition(":")
        return f"{kind}:{self.path(rest)}" if colon and os.path.isabs(rest) else name

    def command(self, text: str) -> str:
        """An origin (a file path, a command line): each absolute path shown by
        :meth:`path`."""
        return _COMMAND_PATH.sub(lambda m: self.path(m.group(1)), text)

    def traceback(self, text: str) -> str:
        """A traceback: each frame's file shown by :meth:`path`, and the message's paths
        under the workspace made relative."""
        return self.text(_FRAME_FILE.sub(lambda m: f'File "{self.path(m.group(1))}"', text))


def _workspace_itself(match: re.Match[str]) -> str:
    """The workspace named in a message: ``the workspace '/srv/p'`` -> ``the workspace``;
    a quoted one (a value) -> ``'.'``; one that ends a clause (``... in /srv/p.``) -> ``the
    workspace``; another (a command's word) -> ``.``."""
    if match.group("named"):
        return "workspace"
    quote = match.group("quote")
    if quote:
        return f"{quote}.{quote}"
    rest = match.string[match.end() : match.end() + 1]
    return "the workspace" if rest and rest in ".,;:!?" else "."
