"""The demo catalog's generated tools read as plain English."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

CATALOG = Path(__file__).resolve().parents[2] / "notebooks" / "demo_catalog.py"


def load_catalog() -> ModuleType:
    spec = importlib.util.spec_from_file_location("demo_catalog_under_test", CATALOG)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unit_converter_descriptions_use_the_right_article() -> None:
    catalog = load_catalog()
    docs = {fn.__name__: fn.__doc__ or "" for fn in catalog.demo_tools()}
    assert docs["sqm_to_sqft"].startswith("Convert an area from square metres to square feet.")
    assert docs["gb_to_gib"].startswith("Convert an amount of data from gigabytes to gibibytes.")
    for name, doc in docs.items():
        if not doc.startswith("Convert "):
            continue
        first = doc.split("\n", 1)[0]
        assert not re.search(r"\ba [aeiou]", first), f"{name}: {first}"
        assert not re.search(r"\ban [^aeiou]", first), f"{name}: {first}"
        assert "a data" not in doc and "The data in" not in doc, f"{name}: {doc}"
