"""Property test: generated payloads against ten tools.

For bad input only ToolValidationError escapes; valid input always reaches the function with
the right Python types. Payloads are generated from a seeded random JSON generator (5,000
per tool: random objects, valid payloads, and valid payloads with one field corrupted).
"""

from __future__ import annotations

import enum
import json
import random
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from nexus_jupyter import Registry, ToolValidationError

PAYLOADS_PER_TOOL = 5_000


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


class Item(BaseModel):
    sku: str
    qty: Annotated[int, Field(ge=1)]


@dataclass
class Box:
    w: float
    h: float


violations: list[str] = []


def check(name: str, value: Any, kind: Any) -> None:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        violations.append(f"{name}={value!r} is {type(value).__name__}, wanted {kind}")


def t_add(a: int, b: int) -> int:
    check("a", a, int), check("b", b, int)
    return a + b


def t_text(text: str, times: int = 1, upper: bool = False) -> str:
    check("text", text, str), check("times", times, int), check("upper", upper, bool)
    return text


def t_opt(x: float | None = None) -> None:
    if x is not None:
        check("x", x, float | int)


def t_literal(mode: Literal["fast", "slow"], unit: Unit = Unit.C) -> str:
    check("mode", mode, str), check("unit", unit, Unit)
    if mode not in ("fast", "slow"):
        violations.append(f"mode {mode!r}")
    return mode


def t_list(items: list[str], limit: Annotated[int, Field(ge=0, le=100)] = 10) -> int:
    check("items", items, list), check("limit", limit, int)
    for i in items:
        check("item", i, str)
    if not 0 <= limit <= 100:
        violations.append(f"limit {limit}")
    return len(items)


def t_dict(counts: dict[str, int]) -> int:
    check("counts", counts, dict)
    for k, v in counts.items():
        check("key", k, str), check("value", v, int)
    return sum(counts.values())


def t_model(items: list[Item]) -> int:
    for it in items:
        check("item", it, Item)
        if it.qty < 1:
            violations.append(f"qty {it.qty}")
    return len(items)


def t_dataclass(box: Box, label: str = "") -> float:
    check("box", box, Box)
    return box.w * box.h


def t_tuple(pair: tuple[int, str]) -> str:
    check("pair", pair, tuple)
    if len(pair) != 2:
        violations.append(f"pair {pair!r}")
    check("pair0", pair[0], int), check("pair1", pair[1], str)
    return pair[1]


def t_union(value: int | str, tags: set[str] | None = None) -> str:
    check("value", value, int | str)
    if tags is not None:
        check("tags", tags, set)
    return str(value)


def _rand_json(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["int", "float", "str", "bool", "null", "bigint", "numstr", "jsonstr"]
    if depth < 3:
        kinds += ["list", "dict"]
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.randint(-1000, 1000)
    if kind == "bigint":
        return rng.choice([2**70, -(2**70), 10**400])
    if kind == "float":
        return rng.choice([rng.uniform(-1e6, 1e6), float("nan"), float("inf"), 0.5, 1.0])
    if kind == "str":
        return "".join(rng.choice("ab \x00é😀{}[]\"'") for _ in range(rng.randint(0, 8)))
    if kind == "numstr":
        return rng.choice(["1", "1.5", "-3", "true", "1e3", " 7 "])
    if kind == "jsonstr":
        return json.dumps(_rand_json(rng, depth + 1))
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "list":
        return [_rand_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {
        rng.choice(["sku", "qty", "w", "h", "a", "x", "k"]): _rand_json(rng, depth + 1)
        for _ in range(rng.randint(0, 4))
    }


VALID: dict[str, Any] = {
    "t_add": lambda r: {"a": r.randint(-9, 9), "b": r.randint(-9, 9)},
    "t_text": lambda r: {"text": "hi", "times": r.randint(0, 5), "upper": r.random() < 0.5},
    "t_opt": lambda r: r.choice([{}, {"x": r.random()}, {"x": None}, {"x": 3}]),
    "t_literal": lambda r: {
        "mode": r.choice(["fast", "slow"]),
        "unit": r.choice(["celsius", "fahrenheit"]),
    },
    "t_list": lambda r: {"items": ["a"] * r.randint(0, 3), "limit": r.randint(0, 100)},
    "t_dict": lambda r: {"counts": {"a": r.randint(0, 5)}},
    "t_model": lambda r: {"items": [{"sku": "x", "qty": r.randint(1, 9)}]},
    "t_dataclass": lambda r: {"box": {"w": r.random(), "h": 2}},
    "t_tuple": lambda r: {"pair": [r.randint(0, 9), "s"]},
    "t_union": lambda r: r.choice([{"value": 1}, {"value": "v", "tags": ["a", "b"]}]),
}

TOOLS = [t_add, t_text, t_opt, t_literal, t_list, t_dict, t_model, t_dataclass, t_tuple, t_union]


def _payloads(name: str, rng: random.Random) -> list[tuple[Any, bool]]:
    """(payload, known_valid) pairs."""
    out: list[tuple[Any, bool]] = []
    make_valid = VALID[name]
    for i in range(PAYLOADS_PER_TOOL):
        mode = i % 4
        if mode == 0:
            out.append((make_valid(rng), True))
        elif mode == 1:  # corrupt one field of a valid payload (may stay valid: unknown)
            payload = make_valid(rng)
            key = rng.choice([*payload, "unexpected"]) if payload else "unexpected"
            payload[key] = _rand_json(rng)
            out.append((payload, False))
        elif mode == 2:
            out.append((_rand_json(rng), False))
        else:
            valid = make_valid(rng)  # valid payload sent with JSON strings for containers
            out.append(
                (
                    {
                        k: json.dumps(v) if isinstance(v, list | dict) else v
                        for k, v in valid.items()
                    },
                    True,
                )
            )
    return out


@pytest.fixture(scope="module")
def reg() -> Any:
    registry = Registry(search="keyword")
    for fn in TOOLS:
        registry.add(fn)
    yield registry
    registry.close()


@pytest.mark.parametrize("fn", TOOLS, ids=[f.__name__ for f in TOOLS])
def test_generated_payloads_only_validation_errors_escape(reg: Registry, fn: Any) -> None:
    rng = random.Random(f"nexus-{fn.__name__}")
    violations.clear()
    counts = {"ok": 0, "invalid": 0}
    for payload, known_valid in _payloads(fn.__name__, rng):
        try:
            result = reg.call_sync(fn.__name__, payload)
        except ToolValidationError as exc:
            assert not known_valid, f"valid payload rejected: {payload!r}: {exc}"
            assert exc.errors and all(e.message for e in exc.errors)
            counts["invalid"] += 1
            continue
        assert result.error is None, f"{payload!r} -> {result.error}"
        counts["ok"] += 1
    assert violations == []
    assert counts["ok"] >= PAYLOADS_PER_TOOL // 2  # the valid half all went through
    assert counts["invalid"] > 0
    assert sum(counts.values()) == PAYLOADS_PER_TOOL
