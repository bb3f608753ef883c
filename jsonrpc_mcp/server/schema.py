"""JSON Schema validation of tool arguments and structured results, on ``jsonschema``.

Each schema is compiled once, when the tool is registered, and checked then: an invalid schema, an
unsupported ``$schema`` dialect or a ``$ref`` that would need the network is the registering
developer's error (:class:`SchemaDefinitionError`), never the client's. ``$schema`` is honoured;
without it a schema is JSON Schema 2020-12. Remote references are never fetched.

Validation errors read like ``limit: 100 is greater than the maximum of 20``.
"""

from __future__ import annotations

from collections.abc import Iterator
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


class CompiledSchema:
    """A schema checked and compiled once; :meth:`errors` validates an instance against it."""

    __slots__ = ("_validator", "schema")

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
        validator = self._validator
        first = next(validator.iter_errors(instance), None)
        if first is None:
            return None
        found = sorted(validator.iter_errors(instance), key=lambda e: (-len(e.absolute_path), _path(e)))
        return [format_error(e) for e in found[:_MAX_ERRORS]]
