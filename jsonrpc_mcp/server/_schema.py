"""JSON Schema validation of tool arguments and structured results, on ``jsonschema``.

Each schema is compiled once, when the tool is registered, and checked then: an invalid schema, an
unsupported ``$schema`` dialect or a ``$ref`` that would need the network is the registering
developer's error (:class:`SchemaDefinitionError`), never the client's. ``$schema`` is honoured;
without it a schema is JSON Schema 2020-12. Remote references are never fetched.

``jsonschema`` is imported only when a schema needs it: a schema that is certainly valid (a flat one, see
"fast path" below, or a 2020-12 one made of well-known keywords and local ``$ref``s, see ``_certain``) is
not checked by it at registration, so a server starts without loading it; it is loaded when such a
schema's instances first need it (an instance rejected, or a schema beyond the fast path).

Validation errors read like ``limit: 100 is greater than the maximum of 20``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ._certain import certainly_valid, extension_keyword

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from referencing import Registry, Resource

__all__ = ["CompiledSchema", "SchemaDefinitionError"]

# dialect URI -> the name of its validator class in ``jsonschema`` (imported when first needed)
_DIALECTS: dict[str, str] = {
    "http://json-schema.org/draft-04/schema": "Draft4Validator",
    "http://json-schema.org/draft-06/schema": "Draft6Validator",
    "http://json-schema.org/draft-07/schema": "Draft7Validator",
    "https://json-schema.org/draft/2019-09/schema": "Draft201909Validator",
    "https://json-schema.org/draft/2020-12/schema": "Draft202012Validator",
}
_DEFAULT_DIALECT = "Draft202012Validator"
_MAX_ERRORS = 10
_MAX_MESSAGE = 300


class SchemaDefinitionError(ValueError):
    """A schema given at registration is unusable (invalid, unsupported dialect, remote ``$ref``)."""


def _refuse_remote(uri: str) -> Resource[Any]:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


@functools.cache
def _no_network() -> Registry[Any]:
    """The published metaschemas, known offline (they ship with jsonschema); anything else is refused."""
    from jsonschema_specifications import REGISTRY as metaschemas  # type: ignore[import-untyped]
    from referencing import Registry

    registry: Registry[Any] = Registry(retrieve=_refuse_remote).with_resources(  # type: ignore[call-arg]
        metaschemas.items()
    )
    return registry


def _dialect(schema: dict[str, Any], what: str) -> str:
    """The name of the validator class for the schema's ``$schema`` (2020-12 without one)."""
    dialect = schema.get("$schema")
    if dialect is None:
        return _DEFAULT_DIALECT
    if not isinstance(dialect, str):
        raise SchemaDefinitionError(f"{what}: $schema must be a string")
    name = _DIALECTS.get(dialect.rstrip("#"))
    if name is None:
        supported = ", ".join(sorted(_DIALECTS))
        raise SchemaDefinitionError(
            f"{what}: JSON Schema dialect {dialect!r} is not supported (use one of {supported})"
        )
    return name


def _validator_class(name: str) -> Any:
    import jsonschema

    return getattr(jsonschema, name)


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


_TOO_DEEP = "the value is nested too deeply to be checked against the schema"


def _recursion_panic(exc: BaseException) -> bool:
    """Python's recursion limit reached inside a Rust extension (``rpds``, under ``referencing``): pyo3
    turns it into a ``PanicException``, a BaseException that would otherwise lose the request."""
    return type(exc).__name__ == "PanicException" and "RecursionError" in str(exc)


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


def _annotations_certain(schema: dict[str, Any]) -> bool:
    """Annotation values every supported metaschema accepts (stricter than they are)."""
    for key in ("description", "title", "$comment"):
        if key in schema and type(schema[key]) is not str:
            return False
    if "examples" in schema and type(schema["examples"]) is not list:
        return False
    return "deprecated" not in schema or type(schema["deprecated"]) is bool


def _property_check(schema: Any) -> _Check | None:
    if not isinstance(schema, dict) or not isinstance(schema.get("type"), str):
        return None
    kind = schema["type"]
    type_ok = _TYPE_CHECKS.get(kind)
    constraints = {k for k in schema if k not in _ANNOTATIONS and k != "type" and not extension_keyword(k)}
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


def _fast_check(schema: dict[str, Any], dialect: str) -> _Check | None:
    """A quick "is it valid" for flat object schemas, or None when the schema is beyond it."""
    if dialect == "Draft4Validator" or schema.get("type") != "object":
        return None
    if any(key not in _ROOT_KEYS and not extension_keyword(key) for key in schema):
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


def _certainly_valid(schema: dict[str, Any]) -> bool:
    """Whether a schema :func:`_fast_check` accepted is certainly a valid JSON Schema.

    Such a schema needs no check against its metaschema (so no ``jsonschema`` at registration), and it
    has no ``$ref`` to resolve. The test is stricter than the metaschemas (exact Python types, only the
    two usual ``$schema`` spellings): anything else gets the full check, so no invalid schema is let
    through (tests/server/test_schema_fast_path.py compares it with ``check_schema``).
    """
    declared = schema.get("$schema")
    if declared is not None and declared not in _DIALECT_SPELLINGS:
        return False
    if not _annotations_certain(schema):
        return False
    properties = schema.get("properties", {})
    for name, sub in properties.items():
        if type(name) is not str or not _annotations_certain(sub):
            return False
        for key in _LENGTHS:
            if key in sub and sub[key] < 0:
                return False
    required = schema.get("required", [])
    return all(type(name) is str for name in required) and len(set(required)) == len(required)


_DIALECT_SPELLINGS = frozenset(_DIALECTS) | {uri + "#" for uri in _DIALECTS}


class CompiledSchema:
    """A schema checked and compiled once; :meth:`errors` validates an instance against it.

    A flat schema that is certainly valid (the common case) is taken as it is, with its fast check;
    the ``jsonschema`` validator is then built the first time an instance is rejected, to write the
    messages. Every other schema is checked and compiled by ``jsonschema`` at once.
    """

    __slots__ = ("_dialect", "_fast", "_validator", "schema")

    def __init__(self, schema: Any, *, what: str = "schema", require_object: bool = False) -> None:
        if not isinstance(schema, dict):
            raise SchemaDefinitionError(f"{what} must be a JSON object (a dict), got {type(schema).__name__}")
        if require_object and schema.get("type") != "object":
            raise SchemaDefinitionError(f'{what} must have "type": "object" at its root')
        self.schema = schema
        self._dialect = _dialect(schema, what)
        self._validator: Any = None
        self._fast = _fast_check(schema, self._dialect)
        if (self._fast is not None and _certainly_valid(schema)) or (
            self._dialect == _DEFAULT_DIALECT and certainly_valid(schema)
        ):
            return  # nothing more to check; jsonschema waits for the first instance that needs it
        from jsonschema.exceptions import SchemaError

        cls = _validator_class(self._dialect)
        try:
            cls.check_schema(schema)
            self._validator = self._build()
            self._check_refs(what)
        except SchemaError as exc:
            raise SchemaDefinitionError(
                f"{what} is not a valid JSON Schema: {_shorten(exc.message)}"
            ) from None
        except RecursionError:
            raise SchemaDefinitionError(f"{what} is nested too deeply to be checked") from None

    def _build(self) -> Any:
        cls = _validator_class(self._dialect)
        return cls(self.schema, registry=_no_network(), format_checker=cls.FORMAT_CHECKER)

    def _check_refs(self, what: str) -> None:
        refs = set(_refs(self.schema))
        if not refs:
            return
        from referencing import Resource
        from referencing.exceptions import Unresolvable
        from referencing.jsonschema import DRAFT202012

        resource = Resource.from_contents(self.schema, default_specification=DRAFT202012)
        base = self.schema.get("$id", "") if isinstance(self.schema.get("$id"), str) else ""
        resolver = _no_network().with_resource(base, resource).resolver(base_uri=base)
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
        try:
            if self._fast is not None and self._fast(instance):
                return None
            validator = self._validator
            if validator is None:
                validator = self._validator = self._build()
            first = next(validator.iter_errors(instance), None)
            if first is None:
                return None
            found = sorted(validator.iter_errors(instance), key=lambda e: (-len(e.absolute_path), _path(e)))
        except RecursionError:  # the checks recurse with the value's depth (JSON allows about 1,000)
            return [_TOO_DEEP]
        except BaseException as exc:  # the same, met inside referencing's Rust maps (a pyo3 panic)
            if not _recursion_panic(exc):
                raise
            return [_TOO_DEEP]
        return [format_error(e) for e in found[:_MAX_ERRORS]]
