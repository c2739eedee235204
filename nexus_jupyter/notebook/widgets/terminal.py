"""What a widget says where no widget can show: a terminal ``ipython`` prints its text."""

from __future__ import annotations

from typing import Any

__all__ = ["TerminalText"]


class TerminalText:
    """Mixed into a widget whose ``__repr__`` says what to do in a terminal: the bundle's
    text is that repr, whole (ipywidgets cuts a widget's text at 110 characters)."""

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if isinstance(bundle, dict):
            bundle["text/plain"] = repr(self)
        return bundle
