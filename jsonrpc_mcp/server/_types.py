"""The annotations beyond JSON's own types: dates, UUIDs, paths, decimals, constraints, pydantic.

Theory of operation. :func:`._introspect.schema_for_type` asks this module three things:

- :func:`scalar_schema` / :func:`scalar_converter`: the string-shaped standard types (``datetime``,
  ``date``, ``time``, ``UUID``, ``Path``, ``Decimal``), as a schema with a ``format`` and a parser;
  ``timedelta`` too, taken as seconds (a number) or an ISO 8601 duration (``"PT1H30M"``), and
  returned as an ISO 8601 duration string.
- :func:`constraint_keywords`: annotated-types metadata (``Ge(1)``, ``Interval(gt=0, lt=1)``,
  ``MaxLen(20)``...) as JSON Schema keywords, which the existing argument validation enforces. The
  objects are recognised by their module, so ``annotated_types`` is never imported here.
- :func:`uses_pydantic`: whether an annotation holds a pydantic model or a pydantic ``Field``; such an
  annotation is handed to pydantic whole (:func:`pydantic_schema`, :func:`pydantic_converter`), which
  knows its own models best. pydantic is never imported by this package: the test looks for it in
  ``sys.modules``, where it must already be if the developer's annotation holds one of its objects.

:func:`hoist_defs` moves every ``$defs`` (pydantic puts nested models there) to the root of the tool's
schema, where the ``#/$defs/...`` references point. :func:`jsonable` turns a returned value (a
dataclass, a pydantic model, a datetime...) into plain JSON data.
"""

from __future__ import annotations

import enum
import re
import sys
import typing
from collections.abc import Callable
from typing import Any

import orjson

__all__ = [
    "constraint_keywords",
    "conversion_problem",
    "dumps",
    "format_duration",
    "hoist_defs",
    "jsonable",
    "pydantic_converter",
    "pydantic_schema",
    "scalar_converter",
    "scalar_schema",
    "uses_pydantic",
]


# -- string-shaped standard types -------------------------------------------------------------------
# Recognised by (module, class name) along the MRO, so that datetime, uuid, pathlib and decimal are
# imported only by the developer's code (about 10 ms of start-up otherwise); a class named here is
# in sys.modules whenever an annotation uses it.
_KINDS = {
    ("datetime", "datetime"): "date-time",  # (a datetime is a date: its own entry comes first)
    ("datetime", "date"): "date",
    ("datetime", "time"): "time",
    ("uuid", "UUID"): "uuid",
    ("pathlib", "PurePath"): "path",
    ("decimal", "Decimal"): "decimal",
    ("datetime", "timedelta"): "duration",
}


def _kind(tp: Any) -> str | None:
    if not isinstance(tp, type):
        return None
    for cls in tp.__mro__:
        kind = _KINDS.get((cls.__module__.split(".")[0], cls.__qualname__))
        if kind is not None:
            return kind
    return None


def _parse_datetime(value: str) -> Any:
    if value.endswith(("Z", "z")):  # (fromisoformat learnt "Z" only in Python 3.11)
        value = value[:-1] + "+00:00"
    return sys.modules["datetime"].datetime.fromisoformat(value)


def _parse_date(value: str) -> Any:
    return sys.modules["datetime"].date.fromisoformat(value)


def _parse_time(value: str) -> Any:
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    return sys.modules["datetime"].time.fromisoformat(value)


def _parse_uuid(value: str) -> Any:
    return sys.modules["uuid"].UUID(value)


def _decimal(value: Any) -> Any:
    decimal = sys.modules["decimal"]
    try:
        return decimal.Decimal(str(value))
    except decimal.InvalidOperation:
        raise ValueError(f"{value!r} is not a decimal number") from None


# ISO 8601 durations of fixed length: weeks, days, hours, minutes, seconds (a fraction on any)
_NUMBER = r"(\d+(?:[.,]\d+)?)"
_DURATION = (
    rf"([-+])?P(?!$)(?:{_NUMBER}W)?(?:{_NUMBER}D)?(?:T(?=\d)(?:{_NUMBER}H)?(?:{_NUMBER}M)?(?:{_NUMBER}S)?)?"
)
_UNITS = (604800, 86400, 3600, 60, 1)  # seconds in a week, day, hour, minute, second


def _duration(value: Any) -> Any:
    """A ``timedelta`` from seconds (a JSON number) or an ISO 8601 duration (``"P1DT2H"``)."""
    timedelta = sys.modules["datetime"].timedelta
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return timedelta(seconds=value)
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a duration (seconds, or ISO 8601 like 'PT1H30M')")
    text = value.strip().upper()
    match = re.fullmatch(_DURATION, text)
    if match is None:
        if re.fullmatch(r"[-+]?P(?:\d+Y)?(?:\d+M)?(?:\d+[WD])?(?:T.*)?", text) and re.search(
            "[YM]", text.split("T")[0]
        ):
            raise ValueError(f"{value!r}: years and months have no fixed length; give days (P30D) instead")
        raise ValueError(f"{value!r} is not an ISO 8601 duration (like 'PT1H30M' or 'P2D') nor seconds")
    sign, *parts = match.groups()
    seconds = sum(
        float(p.replace(",", ".")) * unit for p, unit in zip(parts, _UNITS, strict=True) if p is not None
    )
    return timedelta(seconds=-seconds if sign == "-" else seconds)


def format_duration(value: Any) -> str:
    """A ``timedelta`` as an ISO 8601 duration: ``P1DT2H3M4.5S``, ``-PT30S``, ``PT0S``."""
    micros = (value.days * 86400 + value.seconds) * 1_000_000 + value.microseconds
    sign, micros = ("-" if micros < 0 else ""), abs(micros)
    days, micros = divmod(micros, 86400 * 1_000_000)
    hours, micros = divmod(micros, 3600 * 1_000_000)
    minutes, micros = divmod(micros, 60 * 1_000_000)
    seconds, micros = divmod(micros, 1_000_000)
    clock = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or micros:
        clock += (f"{seconds}.{micros:06d}".rstrip("0") if micros else str(seconds)) + "S"
    if not days and not clock:
        return "PT0S"
    return f"{sign}P{f'{days}D' if days else ''}{'T' + clock if clock else ''}"


def scalar_schema(tp: Any, *, output: bool = False) -> dict[str, Any] | None:
    """The schema of a string-shaped standard type, or None for any other annotation; ``output``:
    of a returned value (a ``timedelta`` is taken as seconds or ISO 8601, returned as ISO 8601)."""
    kind = _kind(tp)
    if kind is None:
        return None
    if kind == "decimal":
        return {"type": ["number", "string"]}
    if kind == "duration" and not output:
        return {
            "anyOf": [{"type": "number", "description": "seconds"}, {"type": "string", "format": "duration"}]
        }
    return {"type": "string", "format": kind}


def scalar_converter(tp: Any) -> Callable[[Any], Any] | None:
    """How to parse a string-shaped standard type from its JSON value, or None."""
    kind = _kind(tp)
    if kind is None:
        return None
    if kind == "path":
        path: Callable[[Any], Any] = tp
        return path
    return {
        "date-time": _parse_datetime,
        "date": _parse_date,
        "time": _parse_time,
        "uuid": _parse_uuid,
        "decimal": _decimal,
        "duration": _duration,
    }[kind]


# -- annotated-types constraints --------------------------------------------------------------------
_BOUNDS = {
    "gt": "exclusiveMinimum",
    "ge": "minimum",
    "lt": "exclusiveMaximum",
    "le": "maximum",
    "multiple_of": "multipleOf",
}
_LENGTH_KEYWORDS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


def _from_annotated_types(item: Any) -> bool:
    return type(item).__module__.split(".")[0] == "annotated_types"


def constraint_keywords(item: Any, schema: dict[str, Any]) -> dict[str, Any] | None:
    """JSON Schema keywords for one annotated-types object (None: not one); ``schema`` is the
    constrained type's schema, which says whether a length is of a string, an array or an object."""
    if not _from_annotated_types(item):
        return None
    out: dict[str, Any] = {}
    parts = list(item) if hasattr(type(item), "__iter__") else [item]  # Interval, Len: grouped
    kind = schema.get("type")
    lengths = _LENGTH_KEYWORDS.get(kind) if isinstance(kind, str) else None
    for part in parts:
        for attr, keyword in _BOUNDS.items():
            value = getattr(part, attr, None)
            if value is not None:
                out[keyword] = value
        for index, attr in enumerate(("min_length", "max_length")):
            value = getattr(part, attr, None)
            if value is not None:
                if lengths is None:
                    raise TypeError(f"{type(part).__name__} constrains a length, and {kind!r} has none")
                out[lengths[index]] = value
    return out


# -- pydantic ---------------------------------------------------------------------------------------
def _pydantic() -> Any:
    return sys.modules.get("pydantic")


def _is_pydantic_object(item: Any) -> bool:
    return type(item).__module__.split(".")[0] == "pydantic"


def uses_pydantic(tp: Any) -> bool:
    """Whether ``tp`` holds a pydantic model or a pydantic ``Field`` / metadata anywhere."""
    pd = _pydantic()
    if pd is None:
        return False
    return _uses(pd, tp, 0)


def _uses(pd: Any, tp: Any, depth: int) -> bool:
    if depth > 20:
        return False
    if isinstance(tp, type):
        return issubclass(tp, pd.BaseModel)
    if typing.get_origin(tp) is typing.Annotated:
        base, *extras = typing.get_args(tp)
        return any(_is_pydantic_object(x) for x in extras) or _uses(pd, base, depth + 1)
    return any(_uses(pd, arg, depth + 1) for arg in typing.get_args(tp))


def pydantic_schema(tp: Any, *, output: bool = False) -> dict[str, Any]:
    """The JSON Schema pydantic gives ``tp`` (its serialized form when ``output``)."""
    adapter = _pydantic().TypeAdapter(tp)
    mode = "serialization" if output else "validation"
    schema: dict[str, Any] = adapter.json_schema(mode=mode, ref_template="#/$defs/{model}")
    return schema


def pydantic_converter(tp: Any) -> Callable[[Any], Any]:
    """pydantic's validation of ``tp`` (a model instance from its JSON object, and so on)."""
    adapter = _pydantic().TypeAdapter(tp)
    validate: Callable[[Any], Any] = adapter.validate_python
    return validate


def conversion_problem(name: str, exc: Exception) -> list[str]:
    """Readable messages for a value the converter of parameter ``name`` could not take."""
    errors = getattr(exc, "errors", None)
    if _is_pydantic_object(exc) and callable(errors):  # a pydantic ValidationError: one line each
        out = []
        for error in errors()[:10]:
            where = ".".join(str(part) for part in (name, *error.get("loc", ())))
            out.append(f"{where}: {error.get('msg', 'invalid')}")
        return out
    return [f"{name}: {exc}"]


# -- schema documents -------------------------------------------------------------------------------
_VALUE_KEYWORDS = frozenset({"const", "default", "enum", "examples"})


def hoist_defs(schema: dict[str, Any], where: str) -> dict[str, Any]:
    """``schema`` with every nested ``$defs`` merged into one at its root (references point there)."""
    found: dict[str, Any] = {}

    def walk(node: Any, root: bool) -> Any:
        if isinstance(node, list):
            return [walk(v, False) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$defs" and isinstance(value, dict):
                for name, definition in value.items():
                    definition = walk(definition, False)
                    if name in found and found[name] != definition:
                        raise TypeError(f"{where}: two different definitions are named {name!r}")
                    found[name] = definition
            elif key in _VALUE_KEYWORDS:
                out[key] = value
            else:
                out[key] = walk(value, False)
        return out

    result: dict[str, Any] = walk(schema, True)
    if found:
        result["$defs"] = found
    return result


# -- values out ------------------------------------------------------------------------------------
def _default(value: Any) -> Any:
    """What orjson cannot encode itself (it does dataclasses, datetimes, UUIDs and enums)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump) and _is_pydantic_object_type(type(value)):
        return dump(mode="json", by_alias=True)
    kind = _kind(type(value))
    if kind in ("decimal", "path"):
        return str(value)
    if kind == "duration":
        return format_duration(value)
    if isinstance(value, (set, frozenset)):
        return list(value)
    if isinstance(value, enum.Enum):
        return value.value
    raise TypeError(f"{type(value).__name__} is not JSON")


def _is_pydantic_object_type(cls: type) -> bool:
    pd = _pydantic()
    return pd is not None and issubclass(cls, pd.BaseModel)


def dumps(value: Any) -> bytes:
    """orjson's encoding, which also takes pydantic models, decimals, paths and sets."""
    return orjson.dumps(value, default=_default)


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (dicts, lists, strings, numbers); TypeError when it is not JSON."""
    if type(value) in (str, int, bool) or value is None:
        return value
    return orjson.loads(dumps(value))
