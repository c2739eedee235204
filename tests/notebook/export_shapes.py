"""The notebook cell shapes the export round-trip test runs: (id, cells, tool name, calls)."""

from __future__ import annotations

IMPORT = "from nexus_jupyter import tool, ToolContext\n"

# (id, cells, tool name, sample calls)
SHAPES: list[tuple[str, list[str], str, list[dict]]] = [
    (
        "plain",
        [IMPORT + "@tool\ndef add(a: int, b: int = 2) -> int:\n    'Add.'\n    return a + b"],
        "add",
        [{"a": 1}, {"a": 2, "b": 5}],
    ),
    (
        "async",
        [
            IMPORT + "import asyncio\n@tool\nasync def slow_echo(text: str) -> str:\n"
            "    'Echo after a tick.'\n    await asyncio.sleep(0)\n    return text.upper()"
        ],
        "slow_echo",
        [{"text": "hi"}],
    ),
    (
        "helper_other_cell",
        [
            "def _double(x):\n    return 2 * x",
            IMPORT + "@tool\ndef doubled(n: int) -> int:\n    'Double.'\n    return _double(n)",
        ],
        "doubled",
        [{"n": 21}],
    ),
    (
        "transitive",
        [
            "LIMIT = 10\ndef _clip(x):\n    return min(x, LIMIT)",
            "def _score(x):\n    return _clip(x) * 3",
            IMPORT + "@tool\ndef score(x: int) -> int:\n    'Score.'\n    return _score(x)",
        ],
        "score",
        [{"x": 4}, {"x": 99}],
    ),
    (
        "module_alias",
        [
            "import json as js\nimport collections.abc as cabc\nimport numpy as np",
            IMPORT + "@tool\ndef stats(xs: list[float]) -> dict:\n    'Stats.'\n"
            "    assert isinstance(xs, cabc.Sequence)\n"
            "    return json_round({'mean': float(np.mean(xs)), 'dump': js.dumps(xs)})",
            "def json_round(d):\n    return d",
        ],
        "stats",
        [{"xs": [1.0, 2.0, 4.5]}],
    ),
    (
        "from_import_alias",
        [
            "from math import sqrt as root, pi\nfrom os.path import join",
            IMPORT + "@tool\ndef geo(r: float) -> dict:\n    'Geometry.'\n"
            "    return {'area': pi * r * r, 'root': root(r), 'p': join('a', 'b')}",
        ],
        "geo",
        [{"r": 4.0}],
    ),
    (
        "constants",
        [
            "GREETING = 'hello'\nWEIGHTS = {'a': [1, 2.5, None], 'b': (True, b'x'.hex())}\nN = -3",
            IMPORT + "@tool\ndef consts(key: str = 'a') -> list:\n    'Constants.'\n"
            "    return [GREETING, WEIGHTS[key], N]",
        ],
        "consts",
        [{}, {"key": "b"}],
    ),
    (
        "plain_class",
        [
            "class Counter:\n    def __init__(self, start):\n        self.n = start\n"
            "    def bump(self, by=1):\n        self.n += by\n        return self.n",
            IMPORT + "@tool\ndef bump(start: int, times: int) -> int:\n    'Bump.'\n"
            "    c = Counter(start)\n    for _ in range(times):\n        c.bump()\n    return c.n",
        ],
        "bump",
        [{"start": 3, "times": 4}],
    ),
    (
        "pydantic_model",
        [
            "from pydantic import BaseModel, Field\nclass Point(BaseModel):\n"
            "    x: float\n    y: float = Field(0.0, description='The y coordinate.')",
            IMPORT
            + "@tool\ndef norm(p: Point) -> float:\n    'Norm.'\n    return (p.x ** 2 + p.y ** 2) ** 0.5",
        ],
        "norm",
        [{"p": {"x": 3, "y": 4}}],
    ),
    (
        "nested_models",
        [
            "from pydantic import BaseModel\nfrom typing import Literal\n"
            "class Item(BaseModel):\n    name: str\n    qty: int = 1\n"
            "class Order(BaseModel):\n    items: list[Item]\n    mode: Literal['fast', 'slow'] = 'fast'",
            IMPORT + "@tool\ndef total(order: Order) -> dict:\n    'Total.'\n"
            "    return {'n': sum(i.qty for i in order.items), 'mode': order.mode}",
        ],
        "total",
        [{"order": {"items": [{"name": "a", "qty": 2}, {"name": "b"}]}}],
    ),
    (
        "dataclass",
        [
            "from dataclasses import dataclass\n@dataclass\nclass Pair:\n    a: int\n    b: int",
            IMPORT
            + "@tool\ndef pair_sum(a: int, b: int) -> int:\n    'Pair.'\n    return sum([Pair(a, b).a, Pair(a, b).b])",
        ],
        "pair_sum",
        [{"a": 1, "b": 2}],
    ),
    (
        "enum_param",
        [
            "from enum import Enum\nclass Color(str, Enum):\n    RED = 'red'\n    BLUE = 'blue'",
            IMPORT
            + "@tool\ndef paint(color: Color = Color.RED) -> str:\n    'Paint.'\n    return Color(color).value * 2",
        ],
        "paint",
        [{}, {"color": "blue"}],
    ),
    (
        "options",
        [
            IMPORT + "@tool(name='renamed', permission='workspace_write', categories=['x', 'y'],"
            " capabilities=['cap'], eager=True, timeout=9)\ndef orig(v: str) -> str:\n"
            "    'Options.'\n    return v[::-1]"
        ],
        "renamed",
        [{"v": "abc"}],
    ),
    (
        "percent_tool_cell",
        [
            "%%tool --permission workspace_write --category text\n"
            "def shout(text: str) -> str:\n    'Shout.'\n    return text.upper() + '!'"
        ],
        "shout",
        [{"text": "hey"}],
    ),
    (
        "context_and_defaults",
        [
            "DEFAULT_N = 3",
            IMPORT
            + "@tool\ndef repeat(word: str, n: int = DEFAULT_N, *, ctx: ToolContext) -> str:\n"
            "    'Repeat.'\n    return ' '.join([word] * n)",
        ],
        "repeat",
        [{"word": "na"}],
    ),
    (
        "recursive_and_cached_helper",
        [
            "import functools\n@functools.lru_cache(maxsize=None)\ndef fib(n):\n"
            "    return n if n < 2 else fib(n - 1) + fib(n - 2)",
            IMPORT + "@tool\ndef fibo(n: int) -> int:\n    'Fibonacci.'\n    return fib(n)",
        ],
        "fibo",
        [{"n": 20}],
    ),
    (
        "helper_is_a_tool",
        [
            IMPORT + "@tool\ndef base(x: int) -> int:\n    'Base.'\n    return x + 1",
            IMPORT + "@tool\ndef twice(x: int) -> int:\n    'Twice.'\n    return base(base(x))",
        ],
        "twice",
        [{"x": 1}],
    ),
]
