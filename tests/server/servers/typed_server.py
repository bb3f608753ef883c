"""Tools with rich annotations, in and out (tests/server/test_types.py): pydantic models and Field,
annotated-types constraints, dataclasses, TypedDicts, datetimes, UUIDs, paths, decimals, Enums."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import pathlib
import uuid
from typing import Annotated, Literal, TypedDict

import annotated_types as at
from pydantic import BaseModel, Field

from jsonrpc_mcp import Server, ToolError

server = Server("typed")


class Address(BaseModel):
    street: str
    city: str


class Person(BaseModel):
    name: str = Field(description="Full name")
    age: int = Field(ge=0, le=150)
    address: Address | None = None


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclasses.dataclass
class Booking:
    room: int
    day: dt.date
    notes: str = ""


class Weather(TypedDict):
    city: str
    celsius: float


@server.tool()
def rate(stars: Annotated[int, Field(ge=1, le=5, description="How many stars")]) -> str:
    """Rate something."""
    return f"{stars} stars"


@server.tool()
def span(
    width: Annotated[float, at.Interval(gt=0, lt=10)],
    label: Annotated[str, at.MinLen(2), at.MaxLen(5)] = "ab",
    tags: Annotated[list[str], at.MaxLen(2)] | None = None,
) -> str:
    return f"{width} {label} {tags}"


@server.tool()
def greet(person: Person) -> Person:
    """Return the person a year older."""
    assert isinstance(person, Person)
    assert person.address is None or isinstance(person.address, Address)
    return person.model_copy(update={"age": person.age + 1})


@server.tool()
def book(booking: Booking, at_: dt.datetime, ident: uuid.UUID, color: Color) -> Booking:
    """Move the booking a day on (checks every argument arrived as its Python type)."""
    assert isinstance(booking, Booking) and isinstance(booking.day, dt.date)
    assert isinstance(at_, dt.datetime) and at_.tzinfo is not None
    assert isinstance(ident, uuid.UUID) and isinstance(color, Color)
    return dataclasses.replace(booking, day=booking.day + dt.timedelta(days=1), notes=color.value)


@server.tool()
def where(path: pathlib.Path, amount: decimal.Decimal, when: dt.date, hour: dt.time) -> str:
    assert isinstance(path, pathlib.Path) and isinstance(amount, decimal.Decimal)
    assert isinstance(when, dt.date) and isinstance(hour, dt.time)
    return f"{path.name} {amount + 1} {when.isoformat()} {hour.isoformat()}"


@server.tool()
def weather(city: str) -> Weather:
    return {"city": city, "celsius": 21.5}


@server.tool()
def count(n: int) -> int:
    return n * 2


@server.tool()
def names(kind: Literal["short", "long"] = "short") -> list[str]:
    return ["ada", "grace"] if kind == "short" else ["Ada Lovelace", "Grace Hopper"]


@server.tool()
def maybe(found: bool) -> Person | None:
    return Person(name="Ada", age=36) if found else None


@server.tool()
def broken() -> Weather:
    return {"city": "Paris", "celsius": "warm"}  # type: ignore[typeddict-item]


@server.tool()
def refuses() -> Weather:
    raise ToolError("no weather today")


@server.tool()
def unannotated():  # type: ignore[no-untyped-def]
    return Person(name="Grace", age=85)


@server.tool()
def plain(text: str) -> str:
    return text.upper()


if __name__ == "__main__":
    server.run()
