"""A demo catalog of more than 50 small, working tools, to show browsing and search at scale.

Twenty are written by hand (math, text, dates, data, geo, finance, colours, a fake weather
service); the unit converters are generated from a table, one tool per pair of units.

    import nexus_jupyter
    from demo_catalog import register_demo_catalog
    register_demo_catalog(nexus_jupyter.registry())
"""

from __future__ import annotations

import json
import math
import random
import re
import statistics
from collections.abc import Callable
from datetime import date
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, urlparse

from pydantic import Field

from nexus_jupyter import ToolContext, tool

__all__ = ["HAND_WRITTEN", "UNIT_TABLE", "demo_tools", "register_demo_catalog"]


# -- hand-written tools ---------------------------------------------------------------------


@tool(categories=["math"], capabilities=["arithmetic"])
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


@tool(categories=["math", "statistics"], capabilities=["summary_statistics"])
def describe_numbers(values: list[float]) -> dict[str, float]:
    """Mean, median, standard deviation, minimum and maximum of a list of numbers.

    Args:
        values: The numbers to summarise (at least one).
    """
    return {"mean": statistics.fmean(values), "median": statistics.median(values),
            "stdev": statistics.pstdev(values), "min": min(values), "max": max(values)}  # fmt: skip


@tool(categories=["math"], capabilities=["sequences"])
def fibonacci(n: Annotated[int, Field(ge=1, le=90)] = 10) -> list[int]:
    """The first n Fibonacci numbers.

    Args:
        n: How many numbers to return (1 to 90).
    """
    out = [0, 1]
    while len(out) < n:
        out.append(out[-1] + out[-2])
    return out[:n]


@tool(categories=["math"], capabilities=["number_theory"])
def is_prime(n: int) -> bool:
    """Whether an integer is a prime number."""
    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))


@tool(categories=["text"], capabilities=["text_statistics"])
def word_count(text: str) -> dict[str, int]:
    """Count the words, lines and characters of a text."""
    return {"words": len(text.split()), "lines": text.count("\n") + 1, "characters": len(text)}


@tool(categories=["text", "web"], capabilities=["slugify"])
def slugify(title: str, separator: Literal["-", "_"] = "-") -> str:
    """Turn a title into a URL slug ("Hello, World!" -> "hello-world")."""
    return re.sub(r"[^a-z0-9]+", separator, title.lower()).strip(separator)


@tool(categories=["text"], capabilities=["rewrite"])
def find_replace(text: str, find: str, replace: str, ignore_case: bool = False) -> str:
    """Replace every occurrence of a word or phrase in a text.

    Args:
        text: The text to edit.
        find: What to look for.
        replace: What to put instead.
        ignore_case: Match regardless of upper/lower case.
    """
    flags = re.IGNORECASE if ignore_case else 0
    return re.sub(re.escape(find), replace, text, flags=flags)


@tool(categories=["text"], capabilities=["rewrite"])
def title_case(text: str) -> str:
    """Capitalise the first letter of every word."""
    return text.title()


@tool(categories=["dates"], capabilities=["date_arithmetic"])
def days_between(start: date, end: date) -> int:
    """Number of days from one date to another (negative if end is earlier)."""
    return (end - start).days


@tool(categories=["dates"], capabilities=["calendar"])
def weekday_of(day: date) -> str:
    """The day of the week of a date (Monday, Tuesday, ...)."""
    return day.strftime("%A")


@tool(categories=["data"], capabilities=["json"])
def pretty_json(document: str, indent: Annotated[int, Field(ge=0, le=8)] = 2) -> str:
    """Re-indent a JSON document so people can read it."""
    return json.dumps(json.loads(document), indent=indent, sort_keys=True)


@tool(categories=["data"], capabilities=["csv"])
def csv_columns(header_line: str, delimiter: Literal[",", ";", "\t"] = ",") -> list[str]:
    """Split a CSV header line into its column names."""
    return [c.strip() for c in header_line.split(delimiter)]


@tool(categories=["web"], capabilities=["url_parsing"])
def parse_url(url: str) -> dict[str, Any]:
    """Split a URL into scheme, host, path and query parameters."""
    parts = urlparse(url)
    return {"scheme": parts.scheme, "host": parts.hostname, "port": parts.port,
            "path": parts.path, "query": parse_qs(parts.query)}  # fmt: skip


@tool(categories=["geo"], capabilities=["distance"])
def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres between two points given in degrees."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return round(6371.0 * 2 * math.asin(math.sqrt(a)), 3)


_CITIES = {"paris": (11.0, "cloudy"), "oslo": (-3.0, "snow"), "cairo": (27.0, "sunny"),
           "lima": (19.0, "fog"), "tokyo": (14.0, "rain")}  # fmt: skip


@tool(categories=["weather"], capabilities=["current_weather"])
def weather(city: str, units: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Current weather for a city (a fake service with a handful of cities).

    Args:
        city: City name, e.g. Paris.
        units: Temperature units.
    """
    temp, sky = _CITIES.get(city.lower(), (15.0, "clear"))
    if units == "fahrenheit":
        temp = temp * 9 / 5 + 32
    return {"city": city, "temperature": temp, "units": units, "sky": sky}


@tool(categories=["weather"], capabilities=["forecast"])
async def forecast(city: str, days: Annotated[int, Field(ge=1, le=7)] = 3, *,
                   ctx: ToolContext) -> list[dict[str, Any]]:  # fmt: skip
    """A fake multi-day forecast; reports progress day by day."""
    base, sky = _CITIES.get(city.lower(), (15.0, "clear"))
    rng = random.Random(city)
    out = []
    for day in range(days):
        await ctx.progress(day + 1, days, f"day {day + 1}")
        out.append({"day": day + 1, "temperature": round(base + rng.uniform(-4, 4), 1), "sky": sky})
    return out


@tool(categories=["finance"], capabilities=["interest"])
def compound_interest(principal: float, rate_percent: float, years: int,
                      per_year: Literal[1, 4, 12] = 12) -> float:  # fmt: skip
    """Value of a deposit after compound interest.

    Args:
        principal: Amount deposited.
        rate_percent: Yearly interest rate in percent.
        years: Number of years.
        per_year: Compounding periods per year.
    """
    return round(principal * (1 + rate_percent / 100 / per_year) ** (per_year * years), 2)


@tool(categories=["finance"], capabilities=["loans"])
def loan_payment(amount: float, rate_percent: float, months: int) -> float:
    """Monthly payment of a fixed-rate loan."""
    r = rate_percent / 100 / 12
    return round(amount / months if r == 0 else amount * r / (1 - (1 + r) ** -months), 2)


@tool(categories=["design"], capabilities=["colors"])
def hex_to_rgb(color: Annotated[str, Field(pattern=r"^#?[0-9a-fA-F]{6}$")]) -> list[int]:
    """Convert a hex colour (#ff8800) to red, green and blue values."""
    color = color.lstrip("#")
    return [int(color[i : i + 2], 16) for i in (0, 2, 4)]


@tool(categories=["games", "random"], capabilities=["dice"])
def roll_dice(count: Annotated[int, Field(ge=1, le=20)] = 2, sides: int = 6,
              seed: int | None = None) -> list[int]:  # fmt: skip
    """Roll some dice; give a seed for repeatable rolls."""
    rng = random.Random(seed)
    return [rng.randint(1, sides) for _ in range(count)]


HAND_WRITTEN: list[Callable[..., Any]] = [
    multiply, describe_numbers, fibonacci, is_prime, word_count, slugify, find_replace,
    title_case, days_between, weekday_of, pretty_json, csv_columns, parse_url, distance_km,
    weather, forecast, compound_interest, loan_payment, hex_to_rgb, roll_dice,
]  # fmt: skip


# -- generated unit converters ----------------------------------------------------------------

# (quantity, from, to, from_name, to_name, factor, offset): to = from * factor + offset
UNIT_TABLE: list[tuple[str, str, str, str, str, float, float]] = [
    ("length", "km", "mi", "kilometres", "miles", 0.621371, 0),
    ("length", "mi", "km", "miles", "kilometres", 1.609344, 0),
    ("length", "m", "ft", "metres", "feet", 3.28084, 0),
    ("length", "ft", "m", "feet", "metres", 0.3048, 0),
    ("length", "cm", "in", "centimetres", "inches", 0.393701, 0),
    ("length", "in", "cm", "inches", "centimetres", 2.54, 0),
    ("length", "nmi", "km", "nautical miles", "kilometres", 1.852, 0),
    ("mass", "kg", "lb", "kilograms", "pounds", 2.204623, 0),
    ("mass", "lb", "kg", "pounds", "kilograms", 0.453592, 0),
    ("mass", "g", "oz", "grams", "ounces", 0.035274, 0),
    ("mass", "oz", "g", "ounces", "grams", 28.349523, 0),
    ("mass", "t", "lb", "tonnes", "pounds", 2204.623, 0),
    ("temperature", "c", "f", "degrees Celsius", "degrees Fahrenheit", 1.8, 32),
    ("temperature", "f", "c", "degrees Fahrenheit", "degrees Celsius", 5 / 9, -160 / 9),
    ("temperature", "c", "k", "degrees Celsius", "kelvin", 1, 273.15),
    ("temperature", "k", "c", "kelvin", "degrees Celsius", 1, -273.15),
    ("volume", "l", "gal", "litres", "US gallons", 0.264172, 0),
    ("volume", "gal", "l", "US gallons", "litres", 3.785412, 0),
    ("volume", "ml", "floz", "millilitres", "US fluid ounces", 0.033814, 0),
    ("volume", "cup", "ml", "US cups", "millilitres", 236.588, 0),
    ("speed", "kmh", "mph", "kilometres per hour", "miles per hour", 0.621371, 0),
    ("speed", "mph", "kmh", "miles per hour", "kilometres per hour", 1.609344, 0),
    ("speed", "ms", "kmh", "metres per second", "kilometres per hour", 3.6, 0),
    ("speed", "kn", "kmh", "knots", "kilometres per hour", 1.852, 0),
    ("data", "mb", "mib", "megabytes", "mebibytes", 0.953674, 0),
    ("data", "gb", "gib", "gigabytes", "gibibytes", 0.931323, 0),
    ("data", "mbit", "mb", "megabits", "megabytes", 0.125, 0),
    ("time", "h", "min", "hours", "minutes", 60, 0),
    ("time", "day", "h", "days", "hours", 24, 0),
    ("time", "week", "day", "weeks", "days", 7, 0),
    ("area", "ha", "acre", "hectares", "acres", 2.471054, 0),
    ("area", "sqm", "sqft", "square metres", "square feet", 10.76391, 0),
    ("energy", "kwh", "mj", "kilowatt-hours", "megajoules", 3.6, 0),
    ("energy", "kcal", "kj", "kilocalories", "kilojoules", 4.184, 0),
    ("pressure", "bar", "psi", "bar", "pounds per square inch", 14.50377, 0),
]


# How a sentence names an amount of each quantity ("a length", "an area", "an amount of data").
_AMOUNT_OF = {"data": "amount of data", "energy": "amount of energy", "time": "duration"}


def _an(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _converter(quantity: str, src: str, dst: str, src_name: str, dst_name: str,
               factor: float, offset: float) -> Callable[..., Any]:  # fmt: skip
    def convert(value: float) -> float:
        return round(value * factor + offset, 6)

    noun = _AMOUNT_OF.get(quantity, quantity)
    convert.__name__ = convert.__qualname__ = f"{src}_to_{dst}"
    convert.__doc__ = (
        f"Convert {_an(noun)} from {src_name} to {dst_name}.\n\n"
        f"Args:\n    value: The {noun} in {src_name}.\n"
    )
    return tool(categories=["units", quantity], capabilities=[f"convert_{quantity}"])(convert)


def demo_tools() -> list[Callable[..., Any]]:
    """Every demo tool: the hand-written ones and one converter per row of the unit table."""
    return [*HAND_WRITTEN, *(_converter(*row) for row in UNIT_TABLE)]


def register_demo_catalog(registry: Any) -> int:
    """Add every demo tool to ``registry``; returns how many were added."""
    tools = demo_tools()
    for fn in tools:
        registry.add(fn, origin="notebooks/demo_catalog.py")
    return len(tools)
