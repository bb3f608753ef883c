"""Whether a JSON Schema 2020-12 document is certainly valid, decided without ``jsonschema``.

Theory of operation. Checking a tool's schema against its metaschema at registration needs
``jsonschema``, whose import is about a third of a small server's start. Most schemas are made of a
few dozen well-known keywords (pydantic's included: ``$defs``, ``$ref``, ``anyOf``, ``enum``,
``pattern``, ``format``...), whose valid values are simple to state. :func:`certainly_valid` walks
the document and says True only when every keyword in it is one it knows, with a value of exactly the
type the 2020-12 metaschema asks for, every ``pattern`` compiles, and every ``$ref`` is local and
lands on a subschema it has walked. It is stricter than the metaschema (exact Python types; no
``$id``, ``$dynamicRef``, ``$vocabulary``, draft-era keyword or remote reference; ``$ref`` only to
``#``, ``#/$defs/NAME`` or a ``#ANCHOR``): whatever it does not know gets the full check by
``jsonschema``, so no invalid schema is let through (``tests/server/test_schema_certain.py`` compares
it with ``check_schema``). A member no 2020-12 vocabulary defines (pydantic's ``discriminator``, an
``x-...`` extension) may have any value by the metaschema, and asserts nothing; only a ``$ref``
inside one is left to the full check (which resolves every ``$ref`` it finds).
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["certainly_valid", "extension_keyword"]

_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_STRINGS = frozenset({"title", "description", "$comment", "format", "contentEncoding", "contentMediaType"})
_BOOLEANS = frozenset({"deprecated", "readOnly", "writeOnly", "uniqueItems"})
_ANYTHING = frozenset({"default", "const"})
_ARRAYS = frozenset({"examples", "enum"})
_NUMBERS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_COUNTS = frozenset(
    {
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minContains",
        "maxContains",
    }
)
_SUBSCHEMAS = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "propertyNames",
        "if",
        "then",
        "else",
        "not",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_SCHEMA_MAPS = frozenset({"properties", "dependentSchemas", "$defs"})
_SCHEMA_LISTS = frozenset({"prefixItems", "allOf", "anyOf", "oneOf"})
# defined by 2020-12 (or kept from earlier drafts by its metaschema) and left to the full check
_LEFT_TO_JSONSCHEMA = frozenset(
    {"$id", "$schema", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "definitions", "dependencies"}
    | {"$recursiveAnchor", "$recursiveRef"}
)
_ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*\Z")
_DEF_NAME = re.compile(r"[A-Za-z0-9_.-]+\Z")
_MAX_DEPTH = 64  # deeper documents get the full check (and keep this walk far from recursion limits)
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def extension_keyword(key: Any) -> bool:
    """A member no JSON Schema dialect defines (``x-...``): any value is valid, and it asserts nothing."""
    return type(key) is str and key.startswith("x-")


def certainly_valid(schema: dict[str, Any]) -> bool:
    """True only when ``schema`` (a 2020-12 document) is a valid schema whose ``$ref``s all resolve."""
    declared = schema.get("$schema", _DIALECT)
    if declared not in (_DIALECT, _DIALECT + "#"):
        return False
    walk = _Walk()
    if not walk.schema({k: v for k, v in schema.items() if k != "$schema"}, 0):
        return False
    defs = schema.get("$defs", {})
    for ref in walk.refs:
        if ref == "#":
            continue
        if ref.startswith("#/$defs/"):
            if ref[len("#/$defs/") :] not in defs:
                return False
        elif ref[1:] not in walk.anchors:
            return False
    return len(walk.anchors) == walk.anchor_count  # (an anchor named twice: let jsonschema judge)


def _integer(value: Any) -> bool:
    return type(value) is int and value >= 0


def _number(value: Any) -> bool:
    return type(value) is int or (type(value) is float and math.isfinite(value))


def _strings(value: Any) -> bool:
    return type(value) is list and all(type(s) is str for s in value) and len(set(value)) == len(value)


def _pattern(value: Any) -> bool:
    if type(value) is not str:
        return False
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _type(value: Any) -> bool:
    if type(value) is str:
        return value in _SIMPLE_TYPES
    return (
        type(value) is list
        and len(value) > 0
        and all(type(t) is str and t in _SIMPLE_TYPES for t in value)
        and len(set(value)) == len(value)
    )


def _mentions_ref(value: Any, depth: int = 0) -> bool:
    """Whether a ``$ref`` member is anywhere in ``value`` (or it is too deep to tell)."""
    if depth > _MAX_DEPTH:
        return True
    if type(value) is dict:
        return "$ref" in value or any(_mentions_ref(v, depth + 1) for v in value.values())
    return type(value) is list and any(_mentions_ref(v, depth + 1) for v in value)


class _Walk:
    """One walk over a document: the ``$ref`` values met and the ``$anchor`` names defined."""

    def __init__(self) -> None:
        self.refs: set[str] = set()
        self.anchors: set[str] = set()
        self.anchor_count = 0

    def schema(self, node: Any, depth: int) -> bool:
        if type(node) is bool:
            return True
        if type(node) is not dict or depth > _MAX_DEPTH:
            return False
        return all(self._keyword(key, value, depth + 1) for key, value in node.items())

    def _keyword(self, key: Any, value: Any, depth: int) -> bool:
        if key in _SUBSCHEMAS:
            return self.schema(value, depth)
        if key in _SCHEMA_MAPS:
            return type(value) is dict and all(
                type(name) is str and self.schema(sub, depth) for name, sub in value.items()
            )
        if key in _SCHEMA_LISTS:
            return type(value) is list and len(value) > 0 and all(self.schema(sub, depth) for sub in value)
        if key in _STRINGS:
            return type(value) is str
        if key in _BOOLEANS:
            return type(value) is bool
        if key in _ANYTHING:
            return True
        if key in _ARRAYS:
            return type(value) is list
        if key in _NUMBERS:
            return _number(value)
        if key in _COUNTS:
            return _integer(value)
        return self._special(key, value, depth)

    def _special(self, key: Any, value: Any, depth: int) -> bool:
        if key == "type":
            return _type(value)
        if key == "required":
            return _strings(value)
        if key == "multipleOf":
            return _number(value) and value > 0
        if key == "pattern":
            return _pattern(value)
        if key == "patternProperties":
            return type(value) is dict and all(
                _pattern(name) and self.schema(sub, depth) for name, sub in value.items()
            )
        if key == "dependentRequired":
            return type(value) is dict and all(type(n) is str and _strings(v) for n, v in value.items())
        if key == "$ref":
            return self._ref(value)
        if key == "$anchor":
            if type(value) is not str or not _ANCHOR.match(value):
                return False
            self.anchors.add(value)
            self.anchor_count += 1
            return True
        if key in _LEFT_TO_JSONSCHEMA or type(key) is not str:
            return False
        return not _mentions_ref(value)  # a member no vocabulary defines

    def _ref(self, value: Any) -> bool:
        if type(value) is not str or not value.startswith("#"):
            return False
        fragment = value[1:]
        if fragment.startswith("/$defs/"):
            local = _DEF_NAME.match(fragment[len("/$defs/") :]) is not None
        else:
            local = fragment == "" or _ANCHOR.match(fragment) is not None
        if local:
            self.refs.add(value)
        return local
