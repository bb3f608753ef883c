"""Durations and unions of several members as tool arguments (tests/server/test_types_unions.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional, Union

from jsonrpc_mcp import Server

server = Server("unions")


@dataclass
class Circle:
    radius: float


@dataclass
class Rect:
    width: float
    height: float


@dataclass
class Square:
    side: float
    label: str = ""


@dataclass
class One:
    x: int


@dataclass
class Two:
    x: int
    y: int


@server.tool()
def pick(p: One | Two) -> str:
    """Which dataclass the argument became: {"x", "y"} fits One's schema, but only Two takes it."""
    return repr(p)


@server.tool()
def wait(timeout: dt.timedelta, grace: Optional[dt.timedelta] = None) -> str:  # noqa: UP045 (the old spelling on purpose)
    """Says what it got: the durations' types and total seconds."""
    extra = "none" if grace is None else f"{type(grace).__name__} {grace.total_seconds():g}"
    return f"{type(timeout).__name__} {timeout.total_seconds():g}; grace {extra}"


@server.tool()
def later(by: dt.timedelta) -> dt.timedelta:
    """Twice the duration (returned as ISO 8601)."""
    return by * 2


@server.tool()
def ident(key: int | str) -> str:
    """The key's Python type and value."""
    return f"{type(key).__name__} {key!r}"


@server.tool()
def area(shape: Circle | Rect | Square) -> str:
    """The area of a circle, rectangle or square; says which it got."""
    if isinstance(shape, Circle):
        return f"Circle {3.14159 * shape.radius**2:.2f}"
    if isinstance(shape, Rect):
        return f"Rect {shape.width * shape.height:g}"
    return f"Square {shape.side**2:g}"


@server.tool()
def maybe(shape: Union[Circle, Rect, None] = None, when: dt.date | int | None = None) -> str:  # noqa: UP007
    """Optional unions: None stays None; a date string becomes a date, a number stays an int."""
    return f"{type(shape).__name__} {type(when).__name__} {when!r}"


if __name__ == "__main__":
    server.run()
