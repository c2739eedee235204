"""How a search index is set up: its mode, threshold, signals and extra words.

``Registry(search=...)`` and :class:`~.index.SearchIndex` take a mode name (``"keyword"``,
``"hybrid"``, ``"auto"``), a :class:`SearchOptions`, or a mapping with the same keys as the
``search:`` section of ``nex.yaml``::

    search:
      mode: auto
      threshold: 0.3
      signals: {intent: false}         # switch off one stage of the pipeline
      services: [Acmeboard]            # more names for the named-services stage
      abbreviations: {kb: knowledge base}
      model_path: ~/models/all-MiniLM-L6-v2   # the sentence model's files (hybrid)
      precision: fp32                  # the sentence model's graph (default smooth8)

The signals are the optional stages around candidate generation and fusion (see
:mod:`.index`): ``spelling`` (a misspelt query word is read as the indexed word or product
name one slip away, :mod:`.spelling`), ``intent`` (read or write, and the kind of change),
``slots`` (the values a query carries against the parameters a tool takes),
``abbreviations`` (a short form also searches its long form) and ``services`` (a query
naming a product no tool mentions is reported and its hits ranked down). All are on by
default.

>>> SearchOptions.coerce({"mode": "keyword", "signals": {"intent": False}}).signals.intent
False
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import ConfigError

__all__ = ["PRECISIONS", "SIGNALS", "SearchOptions", "SearchSetting", "Signals"]

#: The names of the switchable signals, in pipeline order.
SIGNALS: tuple[str, ...] = ("spelling", "abbreviations", "slots", "intent", "services")
#: The graphs the sentence model can run (hybrid mode; see :mod:`.onnx_model`), the default
#: first: int8 with SmoothQuant, int8 weight blocks, the model as it ships, plain int8.
PRECISIONS: tuple[str, ...] = ("smooth8", "block8", "fp32", "int8")


@dataclass(frozen=True)
class Signals:
    """Which optional stages run (all by default)."""

    spelling: bool = True
    abbreviations: bool = True
    slots: bool = True
    intent: bool = True
    services: bool = True

    @classmethod
    def coerce(cls, value: Any) -> Signals:
        if value is None:
            return cls()
        if isinstance(value, Signals):
            return value
        data = _as_mapping(value, "search.signals")
        unknown = sorted(set(data) - set(SIGNALS))
        if unknown:
            raise ConfigError(
                f"Unknown search signal(s) {', '.join(map(repr, unknown))}; "
                f"the signals are {', '.join(SIGNALS)}."
            )
        return cls(**{k: bool(v) for k, v in data.items()})


@dataclass(frozen=True)
class SearchOptions:
    """Everything that sets up a search index; see the module docstring."""

    mode: str = "auto"
    threshold: float | None = None
    signals: Signals = field(default_factory=Signals)
    services: tuple[str, ...] = ()
    abbreviations: Mapping[str, str] = field(default_factory=dict)
    model_path: str | None = None  # a folder with the sentence model's files (hybrid)
    quantized: bool = False  # plain int8: 1.0-1.2x the default cold, 2 points of dev recall@1
    precision: str | None = None  # the sentence model's graph, one of PRECISIONS (hybrid)

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "keyword", "hybrid"):
            raise ConfigError(
                f"Unknown search mode {self.mode!r}; use 'keyword', 'hybrid' or 'auto'."
            )
        if self.precision is not None and self.precision not in PRECISIONS:
            raise ConfigError(
                f"Unknown search precision {self.precision!r}; use "
                + ", ".join(repr(p) for p in PRECISIONS)
                + f" (the default is {PRECISIONS[0]!r})."
            )
        if self.threshold is not None and not 0.0 <= self.threshold <= 1.0:
            raise ConfigError(
                f"search threshold {self.threshold!r} is outside 0 to 1: a hit's score is a "
                "confidence in [0, 1], so no hit could reach it. Use a value such as 0.3, or "
                "leave it out for the mode's default (0.1 keyword, 0.2 hybrid)."
            )
        if self.quantized and self.precision not in (None, "int8"):
            raise ConfigError(
                f"search: quantized: true asks for precision 'int8', but precision is "
                f"{self.precision!r}; keep one of the two settings."
            )

    @property
    def model_precision(self) -> str | None:
        """The graph the sentence model runs: ``precision``, ``"int8"`` for ``quantized``, or
        ``None`` for the default (the first of :data:`PRECISIONS`)."""
        return "int8" if self.quantized else self.precision

    @classmethod
    def coerce(cls, value: Any) -> SearchOptions:
        """Options from a mode name, options, a mapping or a settings model (``nex.yaml``'s
        ``search:`` section)."""
        if isinstance(value, SearchOptions):
            return value
        if value is None:
            return cls()
        if isinstance(value, str):
            return cls(mode=value)
        data = dict(_as_mapping(value, "search"))
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(
                f"Unknown search setting(s) {', '.join(map(repr, unknown))}; "
                f"use {', '.join(sorted(names))}."
            )
        data["signals"] = Signals.coerce(data.get("signals"))
        data["services"] = tuple(data.get("services") or ())
        data["abbreviations"] = dict(data.get("abbreviations") or {})
        return cls(**data)

    def with_threshold(self, threshold: float | None) -> SearchOptions:
        """These options with ``threshold`` when one is given."""
        return self if threshold is None else replace(self, threshold=threshold)


def _as_mapping(value: Any, where: str) -> Mapping[str, Any]:
    if isinstance(value, Mapping):
        return value
    dump = getattr(value, "model_dump", None)  # the pydantic settings model of nex.yaml
    if callable(dump):
        data = dump()
        if isinstance(data, Mapping):
            return data
    raise ConfigError(
        f"{where} must be a mode name, a mapping or SearchOptions, not {type(value).__name__}."
    )


#: What ``Registry(search=...)`` takes: a mode name (``"keyword"``, ``"hybrid"``, ``"auto"``),
#: a :class:`SearchOptions`, or a mapping shaped like the ``search:`` section of ``nex.yaml``.
SearchSetting = str | SearchOptions | Mapping[str, Any]
