"""How an MCP client over HTTP is shown this machine's paths.

An HTTP client may be on another machine: the absolute paths of the serving machine (the
workspace's place, the home folder, where Python and its packages are installed) tell it
nothing it can use and more than it should know. Over HTTP, a tool's ``_meta`` origin, an
error's text and a failed tool's traceback show a path under the workspace relative to it
(``tools/noisy.py``), a file of an installed package from its ``site-packages``
(``site-packages/httpx/_client.py``), one of Python's own from ``python``, and any other
absolute path of an origin or a traceback by its file name. Over stdio the client runs on
this machine, as the person who started the server: it is shown the full paths.

    shown = ShownPaths("/home/ana/project")
    shown.traceback('File "/home/ana/project/tools/noisy.py", line 8')   # File "tools/noisy.py"
    shown.command("/usr/bin/python3 /home/ana/project/run.py")          # python3 run.py
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
        return text

    def command(self, text: str) -> str:
        """An origin (a file path, a command line): each absolute path shown by
        :meth:`path`."""
        return _COMMAND_PATH.sub(lambda m: self.path(m.group(1)), text)

    def traceback(self, text: str) -> str:
        """A traceback: each frame's file shown by :meth:`path`, and the message's paths
        under the workspace made relative."""
        return self.text(_FRAME_FILE.sub(lambda m: f'File "{self.path(m.group(1))}"', text))
