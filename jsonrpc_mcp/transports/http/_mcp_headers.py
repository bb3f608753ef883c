"""The ``Mcp-*`` request headers of the stateless revisions (2026-07-28), for both sides of HTTP.

A modern POST mirrors parts of its body in headers so that intermediaries can route it without
reading the body: ``MCP-Protocol-Version`` (the envelope's protocol version), ``Mcp-Method``,
``Mcp-Name`` (``params.name`` of ``tools/call`` and ``prompts/get``, ``params.uri`` of
``resources/read``) and, for ``tools/call``, ``Mcp-Param-{Name}`` for each argument whose property
schema carries ``"x-mcp-header": "{Name}"``.

This module holds the rules both sides must agree on, once: which properties are header
parameters (:func:`header_parameters`), which declarations are invalid
(:func:`invalid_header_declarations`: a client over HTTP must leave such a tool out of
``tools/list`` and never call it), how a value is written into a header
(:func:`encode_header_value`, :func:`header_text`) and read back (:func:`decode_value`,
:func:`header_matches`). The client builds a request's headers with :func:`modern_headers`; the
server checks them against the body with the decoder and the comparison.

Value encoding: a value travels as it is when it is plain visible ASCII (space allowed inside),
without surrounding whitespace, and does not look like the sentinel; anything else travels as
``=?base64?<base64 of its UTF-8>?=``. A header whose value has the sentinel's exact shape is
decoded; one whose payload is not base64 of UTF-8 is malformed.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any, NamedTuple

from ... import wire

__all__ = [
    "HeaderParameter",
    "InvalidHeaderDeclaration",
    "METHOD_HEADER",
    "NAMED_BY",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "VERSION_HEADER",
    "decode_value",
    "encode_header_value",
    "header_matches",
    "header_parameters",
    "header_text",
    "invalid_header_declarations",
    "modern_headers",
    "value_at",
]

VERSION_HEADER = wire.VERSION_HEADER
METHOD_HEADER = wire.METHOD_HEADER
NAME_HEADER = wire.NAME_HEADER
PARAM_HEADER_PREFIX = wire.PARAM_HEADER_PREFIX

# method -> the params key Mcp-Name mirrors
NAMED_BY = {
    wire.TOOLS_CALL: "name",
    wire.PROMPTS_GET: "name",
    wire.RESOURCES_READ: "uri",
    # the tasks extension's methods (SEP-2663, "Streamable HTTP: routing headers")
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

HeaderParameter = tuple[tuple[str, ...], str]  # (property path from the root, header name)

_SENTINEL = re.compile(r"=\?base64\?(.*)\?=", re.DOTALL)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an RFC 9110 field name (1*tchar)
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_MAX_PATH = 1024
_HEADER_KEY = "x-mcp-header"
_PRIMITIVE_TYPES = frozenset({"string", "integer", "boolean"})


# -- which arguments are header parameters ---------------------------------------------------------
def header_parameters(input_schema: Any) -> list[HeaderParameter]:
    """``(property path, header name)`` of every ``x-mcp-header`` annotation of a tool's input schema.

    The rule (2026-07-28, Streamable HTTP, "custom headers from tool parameters"): an annotation
    counts on a property reached from the root through ``properties`` alone, at any nesting depth,
    when its value is an HTTP token; annotations under ``items``, ``anyOf``, ``$ref`` ... and the
    root's own do not. (Which declarations make the whole tool invalid, so that a client over HTTP
    leaves it out, is :func:`invalid_header_declarations`.) The result is in schema order (depth
    first, as the properties are written), so the client sends the headers and the server reports
    a mismatch in the order a reader of the schema expects. The walk is iterative; its one bound,
    ``_MAX_PATH`` properties deep, is beyond what any JSON text reaches through a parser's nesting
    limit (orjson: 1024 containers, two per level), so it only stops a Python schema that contains
    itself.
    """
    found: list[HeaderParameter] = []
    stack: list[tuple[tuple[str, ...], Any]] = [((), input_schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        token = node.get("x-mcp-header")
        if path and isinstance(token, str) and _TOKEN.fullmatch(token):
            found.append((path, token))
        properties = node.get("properties")
        if isinstance(properties, dict) and len(path) < _MAX_PATH:
            # reversed onto the stack, so that they come off it in the order they are written
            stack.extend(((*path, name), sub) for name, sub in reversed(properties.items()))
    return found


class InvalidHeaderDeclaration(NamedTuple):
    """One ``x-mcp-header`` declaration that breaks the revision's rules.

    ``pointer`` is where it sits in the input schema (a JSON Pointer, ``""`` for the root),
    ``rule`` which rule it breaks (``"string"``, ``"empty"``, ``"token"``, ``"unique"``, ``"type"``
    or ``"placement"``), ``reason`` the same in words."""

    pointer: str
    rule: str
    reason: str

    def __str__(self) -> str:
        return f"{self.pointer or '(the root)'}: {self.reason}"


# the keywords whose values are schemas (2020-12, plus draft-07's), by the shape of the value: a
# schema, a list of schemas (draft-07's "items" may be either), an object of schemas
_SUBSCHEMA = frozenset(
    {"additionalProperties", "unevaluatedProperties", "propertyNames", "items", "contains",
     "unevaluatedItems", "additionalItems", "not", "if", "then", "else"}
)  # fmt: skip
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SUBSCHEMA_MAPS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)


def invalid_header_declarations(input_schema: Any) -> list[InvalidHeaderDeclaration]:
    """The ``x-mcp-header`` declarations of a tool's input schema that break the rules of
    2026-07-28 (Streamable HTTP, "custom headers from tool parameters"), in schema order; ``[]``
    when the tool may be listed and called.

    A declaration is valid when its value is a non-empty HTTP token (RFC 9110 ``1*tchar``: no space,
    colon, control character or non-ASCII letter), no other declaration of the schema names the same
    header in any letter case, it sits on a property reached from the root through ``properties``
    alone (not the root, nor anything under ``items``, ``anyOf``, ``$defs`` ...), and that property's
    ``type`` is ``string``, ``integer`` or ``boolean`` (a list of those, ``"null"`` allowed beside
    them). Every schema position is visited, so a declaration where none may be is found too; a
    schema that contains itself (a Python object, never parsed JSON) is walked once per path.
    """
    found: list[InvalidHeaderDeclaration] = []
    seen: dict[str, str] = {}  # a lower-cased header name -> where it was declared first
    ancestors: set[int] = set()  # the ids of the nodes on the path to the current one
    # (node, pointer segments, whether the node is the root or a property reached from it through
    # properties alone); an int is the id of a node whose children are done (it leaves ancestors)
    stack: list[tuple[Any, tuple[str, ...], bool] | int] = [(input_schema, (), True)]
    while stack:
        item = stack.pop()
        if isinstance(item, int):
            ancestors.discard(item)
            continue
        node, segments, on_chain = item
        if not isinstance(node, dict) or id(node) in ancestors:
            continue
        if _HEADER_KEY in node:
            pointer = "".join("/" + s.replace("~", "~0").replace("/", "~1") for s in segments)
            found.extend(_declaration_problems(node, pointer, on_chain and bool(segments), seen))
        ancestors.add(id(node))
        stack.append(id(node))
        children: list[tuple[Any, tuple[str, ...], bool]] = []
        for key, value in node.items():
            if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
                chain = on_chain and key == "properties"
                children.extend((sub, (*segments, key, name), chain) for name, sub in value.items())
            elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
                children.extend((sub, (*segments, key, str(i)), False) for i, sub in enumerate(value))
            elif key in _SUBSCHEMA:
                children.append((value, (*segments, key), False))
        stack.extend(reversed(children))  # so that they come off the stack in the order written
    return found


def _declaration_problems(
    node: dict[str, Any], pointer: str, is_property: bool, seen: dict[str, str]
) -> list[InvalidHeaderDeclaration]:
    """What is wrong with the declaration of ``node`` (at ``pointer``): its name, its place, the
    type of its property. ``seen`` collects the names declared so far."""
    declared = node[_HEADER_KEY]
    problems: list[InvalidHeaderDeclaration] = []
    if not isinstance(declared, str):
        problems.append(InvalidHeaderDeclaration(pointer, "string", "x-mcp-header is not a string"))
    elif not declared:
        problems.append(InvalidHeaderDeclaration(pointer, "empty", "x-mcp-header is empty"))
    elif not _TOKEN.fullmatch(declared):
        reason = f"x-mcp-header {declared!r} {_why_not_a_token(declared)}"
        problems.append(InvalidHeaderDeclaration(pointer, "token", reason))
    else:
        first = seen.setdefault(declared.lower(), pointer)
        if first != pointer:
            earlier = first or "(the root)"
            reason = f"x-mcp-header {declared!r} repeats the header of {earlier} (case-insensitively)"
            problems.append(InvalidHeaderDeclaration(pointer, "unique", reason))
    if not is_property:
        where = "the root schema" if not pointer else "a schema reached otherwise than through properties"
        reason = f"x-mcp-header on {where} (only a property reached through properties can have one)"
        problems.append(InvalidHeaderDeclaration(pointer, "placement", reason))
    else:
        kind = node.get("type")
        named = [k for k in (kind if isinstance(kind, list) else [kind]) if k != "null"]
        if not named or not all(isinstance(k, str) and k in _PRIMITIVE_TYPES for k in named):
            stated = f"of type {kind!r}" if kind is not None else "without a type"
            reason = f"x-mcp-header on a property {stated} (only string, integer or boolean)"
            problems.append(InvalidHeaderDeclaration(pointer, "type", reason))
    return problems


def _why_not_a_token(name: str) -> str:
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in name):
        return "contains a control character"
    if not name.isascii():
        return "contains a character outside ASCII"
    if " " in name:
        return "contains a space"
    if ":" in name:
        return "contains a colon"
    return "is not an HTTP field-name token (RFC 9110 tchar only)"


# -- values --------------------------------------------------------------------------------------
def encode_header_value(value: str) -> str:
    """``value`` as a header carries it: as it is when it is plain visible ASCII without surrounding
    whitespace that does not look like the sentinel, else ``=?base64?...?=``."""
    if value.isascii() and value.isprintable() and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_value(raw: bytes) -> str | None:
    """A header value as the string it stands for; None when it is malformed (characters outside
    visible ASCII, a ``=?base64?...?=`` whose payload is not base64 of UTF-8)."""
    if not raw.isascii():
        return None
    text = raw.decode("ascii")
    if not text.isprintable():  # (for ASCII: a control character, \x00-\x1f or \x7f)
        return None
    if not text.startswith("=?"):
        return text
    wrapped = _SENTINEL.fullmatch(text)
    if wrapped is None:
        return text
    try:
        return base64.b64decode(wrapped.group(1), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def header_text(value: Any) -> str | None:
    """The text of an argument's header (before encoding); None for what is not mirrored (null,
    objects, arrays). Integral numbers are written without a fraction (``42.0`` as ``42``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None


def header_matches(value: Any, text: str) -> bool:
    """Whether a header's decoded ``text`` stands for the argument's ``value``: numbers compare as
    numbers (``42`` matches ``42.0``), booleans as ``true``/``false``, strings exactly."""
    if type(value) is bool:
        return text == ("true" if value else "false")
    if type(value) is int or type(value) is float:
        if _DECIMAL.fullmatch(text) is None:
            return text == str(value)
        try:
            return Decimal(text) == Decimal(repr(value))
        except InvalidOperation:
            return False
    if type(value) is str:
        return text == value
    return False  # an object or array has no header form


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at ``path`` (None when any step is missing or not an object)."""
    node: Any = arguments
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


# -- the client: a request's headers ---------------------------------------------------------------
def modern_headers(
    message: Any, parameters: Iterable[HeaderParameter] = ()
) -> list[tuple[bytes, bytes]] | None:
    """The headers a stateless-revision request carries, derived from its body; None when the message
    is not such a request. ``parameters`` are the tool's ``x-mcp-header`` properties (for
    ``tools/call``; see :func:`header_parameters`)."""
    if not isinstance(message, dict) or "id" not in message:
        return None
    method, params = message.get("method"), message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(wire.PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if not isinstance(method, str) or not isinstance(version, str):
        return None
    assert isinstance(params, dict)
    headers = [
        (VERSION_HEADER.encode("ascii"), version.encode("utf-8")),
        (METHOD_HEADER.encode("ascii"), method.encode("utf-8")),
    ]
    key = NAMED_BY.get(method)
    name = params.get(key) if key is not None else None
    if isinstance(name, str):
        headers.append((NAME_HEADER.encode("ascii"), encode_header_value(name).encode("ascii")))
    arguments = params.get("arguments")
    prefix = PARAM_HEADER_PREFIX.encode("ascii")
    for path, token in parameters:
        text = header_text(value_at(arguments, path))
        if text is not None:
            headers.append((prefix + token.encode("ascii"), encode_header_value(text).encode("ascii")))
    # what cannot travel in a header (a version or method with odd characters) is left to the server
    return [(n, v) for n, v in headers if all(0x20 <= b <= 0x7E for b in v)]
