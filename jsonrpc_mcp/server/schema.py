"""JSON Schema validation of tool arguments and structured results, on ``jsonschema``.

Each schema is compiled once, when the tool is registered, and checked then: an invalid schema, an
unsupported ``$schema`` dialect or a ``$ref`` that would need the network is the registering
developer's error (:class:`SchemaDefinitionError`), never the client's. ``$schema`` is honoured;
without it a schema is JSON Schema 2020-12. Remote references are never fetched.

Validation errors read like ``limit: 100 is greater than the maximum of 20``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from jsonschema import (
    Draft4Validator,
    Draft6Validator,
    Draft7Validator,
    Draft201909Validator,
    Draft202012Validator,
)
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema_specifications import REGISTRY as _METASCHEMAS  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource, Unresolvable
from referencing.jsonschema import DRAFT202012

__all__ = ["CompiledSchema", "SchemaDefinitionError"]

_DIALECTS: dict[str, Any] = {
    "http://json-schema.org/draft-04/schema": Draft4Validator,
    "http://json-schema.org/draft-06/schema": Draft6Validator,
    "http://json-schema.org/draft-07/schema": Draft7Validator,
    "https://json-schema.org/draft/2019-09/schema": Draft201909Validator,
    "https://json-schema.org/draft/2020-12/schema": Draft202012Validator,
}
_MAX_ERRORS = 10
_MAX_MESSAGE = 300


class SchemaDefinitionError(ValueError):
    """A schema given at registration is unusable (invalid, unsupported dialect, remote ``$ref``)."""


def _refuse_remote(uri: str) -> Resource[Any]:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


# the published metaschemas are known offline (they ship with jsonschema); anything else is refused
_NO_NETWORK: Registry[Any] = Registry(retrieve=_refuse_remote).with_resources(  # type: ignore[call-arg]
    _METASCHEMAS.items()
)


def _validator_class(schema: dict[str, Any], what: str) -> Any:
    dialect = schema.get("$schema")
    if dialect is None:
        return Draft202012Validator
    if not isinstance(dialect, str):
        raise SchemaDefinitionError(f"{what}: $schema must be a string")
    cls = _DIALECTS.get(dialect.rstrip("#"))
    if cls is None:
        supported = ", ".join(sorted(_DIALECTS))
        raise SchemaDefinitionError(
            f"{what}: JSON Schema dialect {dialect!r} is not supported (use one of {supported})"
        )
    return cls


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("$ref", "$dynamicRef") and isinstance(value, str):
                yield value
            elif key not in ("const", "enum", "default", "examples"):
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _has_nested_id(node: Any, root: bool = True) -> bool:
    if isinstance(node, dict):
        if not root and isinstance(node.get("$id"), str):
            return True
        return any(_has_nested_id(v, False) for k, v in node.items() if k not in ("const", "enum", "default"))
    if isinstance(node, list):
        return any(_has_nested_id(v, False) for v in node)
    return False


def _path(error: ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _shorten(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


def format_error(error: ValidationError) -> str:
    """``path: message`` (just the message for the root)."""
    path = _path(error)
    message = _shorten(error.message)
    return f"{path}: {message}" if path else message


# -- fast path ------------------------------------------------------------------------------------
# Most tool schemas are a flat object of typed properties. For those, a small compiled check decides
# "valid" without jsonschema's generic machinery (about 10x faster). It only ever says "valid" when
# jsonschema would too; anything it does not fully understand, and every instance it rejects, goes
# to jsonschema, which has the last word and writes the error messages.
_Check = Callable[[Any], bool]
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "$comment", "deprecated"})
_ROOT_KEYS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "$schema"}
_TYPE_CHECKS: dict[str, _Check] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int or (type(v) is float and v.is_integer()),
    "number": lambda v: type(v) is int or type(v) is float,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "array": lambda v: type(v) is list,
    "object": lambda v: type(v) is dict,
}
_NUMERIC = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_LENGTHS = frozenset({"minLength", "maxLength"})


def _number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and value == value  # not bool, not NaN


def _property_check(schema: Any) -> _Check | None:
    if not isinstance(schema, dict) or not isinstance(schema.get("type"), str):
        return None
    kind = schema["type"]
    type_ok = _TYPE_CHECKS.get(kind)
    constraints = set(schema) - _ANNOTATIONS - {"type"}
    allowed = _NUMERIC if kind in ("integer", "number") else _LENGTHS if kind == "string" else frozenset()
    if type_ok is None or not constraints <= allowed:
        return None
    if not all(_number(schema[c]) and (c in _NUMERIC or type(schema[c]) is int) for c in constraints):
        return None
    if not constraints:
        return type_ok
    low, high = schema.get("minimum"), schema.get("maximum")
    xlow, xhigh = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    min_len, max_len = schema.get("minLength"), schema.get("maxLength")

    def check(value: Any) -> bool:
        if not type_ok(value):
            return False
        if kind == "string":
            n = len(value)
            return (min_len is None or n >= min_len) and (max_len is None or n <= max_len)
        return (
            (low is None or value >= low)
            and (high is None or value <= high)
            and (xlow is None or value > xlow)
            and (xhigh is None or value < xhigh)
        )

    return check


def _fast_check(schema: dict[str, Any], cls: Any) -> _Check | None:
    """A quick "is it valid" for flat object schemas, or None when the schema is beyond it."""
    if cls is Draft4Validator or not set(schema) <= _ROOT_KEYS or schema.get("type") != "object":
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    additional = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) or type(additional) is not bool:
        return None
    checks: dict[str, _Check] = {}
    for name, sub in properties.items():
        check = _property_check(sub)
        if check is None:
            return None
        checks[name] = check
    needed = tuple(required)

    def valid(instance: Any) -> bool:
        if type(instance) is not dict:
            return False
        for name in needed:
            if name not in instance:
                return False
        for key, value in instance.items():
            check = checks.get(key)
            if check is None:
                if not additional:
                    return False
            elif not check(value):
                return False
        return True

    return valid


class CompiledSchema:
    """A schema checked and compiled once; :meth:`errors` validates an instance against it."""

    __slots__ = ("_fast", "_validator", "schema")

    def __init__(self, schema: Any, *, what: str = "schema", require_object: bool = False) -> None:
        if not isinstance(schema, dict):
            raise SchemaDefinitionError(f"{what} must be a JSON object (a dict), got {type(schema).__name__}")
        if require_object and schema.get("type") != "object":
            raise SchemaDefinitionError(f'{what} must have "type": "object" at its root')
        cls = _validator_class(schema, what)
        try:
            cls.check_schema(schema)
        except SchemaError as exc:
            raise SchemaDefinitionError(
                f"{what} is not a valid JSON Schema: {_shorten(exc.message)}"
            ) from None
        self.schema = schema
        self._validator = cls(schema, registry=_NO_NETWORK, format_checker=cls.FORMAT_CHECKER)
        self._check_refs(what)
        self._fast = _fast_check(schema, cls)

    def _check_refs(self, what: str) -> None:
        refs = set(_refs(self.schema))
        if not refs:
            return
        spec = DRAFT202012 if self._validator.__class__ is Draft202012Validator else None
        resource = Resource.from_contents(self.schema, default_specification=spec or DRAFT202012)
        base = self.schema.get("$id", "") if isinstance(self.schema.get("$id"), str) else ""
        resolver = _NO_NETWORK.with_resource(base, resource).resolver(base_uri=base)
        nested_ids = _has_nested_id(self.schema)
        for ref in sorted(refs):
            if ref.startswith("#") and nested_ids:
                continue  # scoped by a nested $id; jsonschema resolves it when validating
            try:
                resolver.lookup(ref)
            except Unresolvable:
                if ref.startswith("#"):
                    raise SchemaDefinitionError(
                        f"{what}: $ref {ref!r} does not resolve inside the schema"
                    ) from None
                raise SchemaDefinitionError(
                    f"{what}: $ref {ref!r} points outside the schema; remote references are never fetched "
                    "(inline the definition under $defs)"
                ) from None

    def errors(self, instance: Any) -> list[str] | None:
        """None when valid; otherwise readable messages, most specific first, at most ten."""
        if self._fast is not None and self._fast(instance):
            return None
        validator = self._validator
        first = next(validator.iter_errors(instance), None)
        if first is None:
            return None
        found = sorted(validator.iter_errors(instance), key=lambda e: (-len(e.absolute_path), _path(e)))
        return [format_error(e) for e in found[:_MAX_ERRORS]]
