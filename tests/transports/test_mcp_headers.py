"""The ``Mcp-*`` header rules of 2026-07-28, shared by the client and the server: which arguments are
header parameters, which declarations make a tool invalid, and how a value is written into a header
and read back."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from jsonrpc_mcp import wire
from jsonrpc_mcp.transports.http._mcp_headers import (
    decode_value,
    encode_header_value,
    header_matches,
    header_parameters,
    header_text,
    invalid_header_declarations,
    modern_headers,
)


def _nested(depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    """A schema whose property ``p0.p1...`` is ``depth`` levels deep, ending in ``leaf``."""
    node = leaf
    for level in reversed(range(depth)):
        node = {"type": "object", "properties": {f"p{level}": node}}
    return node


# -- header parameters ----------------------------------------------------------------------------
def test_annotations_at_any_depth_count() -> None:
    # the revision: x-mcp-header MAY be applied at any nesting depth (the old client stopped at 32)
    schema = _nested(40, {"type": "string", "x-mcp-header": "Deep"})
    assert header_parameters(schema) == [(tuple(f"p{i}" for i in range(40)), "Deep")]


def test_parameters_come_in_schema_order_depth_first() -> None:
    schema = {
        "type": "object",
        "properties": {
            "z": {"type": "string", "x-mcp-header": "Z"},
            "o": {
                "type": "object",
                "x-mcp-header": "O",
                "properties": {"b": {"type": "integer", "x-mcp-header": "B"}},
            },
            "a": {"type": "boolean", "x-mcp-header": "A"},
        },
    }
    assert header_parameters(schema) == [(("z",), "Z"), (("o",), "O"), (("o", "b"), "B"), (("a",), "A")]


@pytest.mark.parametrize(
    "schema",
    [
        {"x-mcp-header": "Root", "type": "object"},  # the root itself is not an argument
        {"properties": {"a": {"items": {"x-mcp-header": "A"}}}},
        {"properties": {"a": {"anyOf": [{"x-mcp-header": "A"}]}}},
        {"anyOf": [{"properties": {"a": {"x-mcp-header": "A"}}}]},
        {"$defs": {"a": {"x-mcp-header": "A"}}, "properties": {"a": {"$ref": "#/$defs/a"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "not a token"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": ""}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "Re:gion"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": 7}}},
        {"properties": {"a": True}},
        {"properties": ["a"]},
        None,
        "not a schema",
    ],
)
def test_only_properties_reached_through_properties_with_a_token_name_count(schema: Any) -> None:
    assert header_parameters(schema) == []


# -- invalid declarations (a client over HTTP leaves such a tool out) --------------------------------
def _one(prop: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"value": prop}}


def _two(first: str, second: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "field1": {"type": "string", "x-mcp-header": first},
            "field2": {"type": "string", "x-mcp-header": second},
        },
    }


A: dict[str, Any] = {"type": "string", "x-mcp-header": "A"}  # a valid declaration, where it sits
V = "/properties/value"


@pytest.mark.parametrize(
    ("schema", "pointer", "rule"),
    [
        # the name: a non-empty string of RFC 9110 tchar (the official suite's charset cases first)
        (_one({"type": "string", "x-mcp-header": ""}), V, "empty"),
        (_one({"type": "string", "x-mcp-header": "My Region"}), V, "token"),
        (_one({"type": "string", "x-mcp-header": "Region:Primary"}), V, "token"),
        (_one({"type": "string", "x-mcp-header": "R\u00e9gion"}), V, "token"),
        (_one({"type": "string", "x-mcp-header": "Region\t1"}), V, "token"),
        (_one({"type": "string", "x-mcp-header": "Region\r\n"}), V, "token"),
        (_one({"type": "string", "x-mcp-header": "Region\x7f"}), V, "token"),
        (_one({"type": "string", "x-mcp-header": "Region(1)"}), V, "token"),
        (_one({"type": "string", "x-mcp-header": "a@b"}), V, "token"),
        (_one({"type": "string", "x-mcp-header": 7}), V, "string"),
        (_one({"type": "string", "x-mcp-header": None}), V, "string"),
        # unique in any letter case
        (_two("Region", "Region"), "/properties/field2", "unique"),
        (_two("MyField", "myfield"), "/properties/field2", "unique"),
        # the property's type: string, integer or boolean only
        (_one({"type": "object", "x-mcp-header": "Data"}), V, "type"),
        (_one({"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}), V, "type"),
        (_one({"type": "null", "x-mcp-header": "Nil"}), V, "type"),
        (_one({"type": "number", "x-mcp-header": "Score"}), V, "type"),
        (_one({"x-mcp-header": "Untyped"}), V, "type"),
        (_one({"type": ["string", "object"], "x-mcp-header": "Mixed"}), V, "type"),
        (_one({"type": ["null"], "x-mcp-header": "OnlyNull"}), V, "type"),
        (_one({"type": 3, "x-mcp-header": "Odd"}), V, "type"),
        # the place: a property reached from the root through properties alone
        ({"type": "object", "x-mcp-header": "Root"}, "", "placement"),
        (_one({"type": "array", "items": A}), V + "/items", "placement"),
        ({"type": "object", "prefixItems": [A]}, "/prefixItems/0", "placement"),
        ({"anyOf": [{"properties": {"a": A}}]}, "/anyOf/0/properties/a", "placement"),
        (_one({"oneOf": [A]}), V + "/oneOf/0", "placement"),
        (_one({"allOf": [A]}), V + "/allOf/0", "placement"),
        (_one({"not": A}), V + "/not", "placement"),
        (_one({"if": {}, "then": A}), V + "/then", "placement"),
        ({"$defs": {"r": A}, "properties": {"a": {"$ref": "#/$defs/r"}}}, "/$defs/r", "placement"),
        ({"type": "object", "additionalProperties": A}, "/additionalProperties", "placement"),
        ({"type": "object", "patternProperties": {"^a/b~": A}}, "/patternProperties/^a~1b~0", "placement"),
        # (properties under a schema off the chain are off it too)
        (_one({"items": {"properties": {"b": A}}}), V + "/items/properties/b", "placement"),
    ],
)
def test_each_broken_rule_is_reported_where_it_is(schema: dict[str, Any], pointer: str, rule: str) -> None:
    found = invalid_header_declarations(schema)
    assert [(problem.pointer, problem.rule) for problem in found] == [(pointer, rule)]
    assert str(found[0]).startswith(f"{pointer or '(the root)'}: x-mcp-header")


@pytest.mark.parametrize(
    "schema",
    [
        _one({"type": "string", "x-mcp-header": "Region"}),
        _one({"type": "integer", "x-mcp-header": "Priority"}),
        _one({"type": "boolean", "x-mcp-header": "Verbose"}),
        _one({"type": ["string", "null"], "x-mcp-header": "Nullable"}),  # null: the header is left out
        _one({"type": "string", "x-mcp-header": "!#$%&'*+-.^_`|~09azAZ"}),  # every tchar
        _two("Region", "Zone"),
        _nested(40, {"type": "string", "x-mcp-header": "Deep"}),
        {"type": "object", "properties": {"a": {"type": "string"}}, "anyOf": [{"required": ["a"]}]},
        {"type": "object"},
        {"type": "object", "properties": {"a": True, "b": {"items": False}}},
        {"type": "object", "properties": {"a": {"const": {"x-mcp-header": ""}}}},  # data, not a schema
        None,
        "not a schema",
    ],
)
def test_a_valid_or_plain_schema_has_no_invalid_declaration(schema: Any) -> None:
    assert invalid_header_declarations(schema) == []


def test_every_invalid_declaration_is_reported_in_schema_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "z": {"type": "number", "x-mcp-header": "Z"},
            "o": {"type": "object", "properties": {"b": {"type": "string", "x-mcp-header": "z"}}},
            "a": {"type": "object", "x-mcp-header": "bad name"},
        },
    }
    found = invalid_header_declarations(schema)
    assert [(p.pointer, p.rule) for p in found] == [
        ("/properties/z", "type"),
        ("/properties/o/properties/b", "unique"),
        ("/properties/a", "token"),
        ("/properties/a", "type"),
    ]
    assert "repeats the header of /properties/z" in found[1].reason


def test_a_property_schema_shared_by_two_properties_is_a_duplicate() -> None:
    # (a Python schema may share one object; parsed JSON never does)
    region = {"type": "string", "x-mcp-header": "Region"}
    found = invalid_header_declarations({"type": "object", "properties": {"a": region, "b": region}})
    assert [(p.pointer, p.rule) for p in found] == [("/properties/b", "unique")]


def test_a_schema_that_contains_itself_is_checked_and_the_walk_ends() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["again"] = schema
    schema["anyOf"] = [schema, schema]
    schema["properties"]["a"] = {"type": "number", "x-mcp-header": "A"}
    assert [(p.pointer, p.rule) for p in invalid_header_declarations(schema)] == [("/properties/a", "type")]


# -- values ---------------------------------------------------------------------------------------
VALUES = [
    "eu-west",
    "file:///a b/c.txt",
    "a=?b",
    "",
    " padded ",
    "tab\tinside",
    "line\nbreak",
    "Z\u00fcrich",
    "\u65e5\u672c",
    "=?base64?eA==?=",  # a literal value shaped like the sentinel
    "=?base64?not base64?=",
    "x" * 300,
]


@pytest.mark.parametrize("value", VALUES)
def test_what_the_client_encodes_the_server_decodes_to_the_same_value(value: str) -> None:
    encoded = encode_header_value(value)
    assert all(0x20 <= ord(ch) <= 0x7E for ch in encoded)
    assert decode_value(encoded.encode("ascii")) == value


def test_a_sentinel_shaped_value_is_wrapped_so_it_is_not_mistaken_for_an_encoding() -> None:
    encoded = encode_header_value("=?base64?eA==?=")
    assert encoded != "=?base64?eA==?="
    assert base64.b64decode(encoded[len("=?base64?") : -2]).decode("utf-8") == "=?base64?eA==?="


@pytest.mark.parametrize(
    "raw",
    [
        "caf\u00e9".encode(),  # not ASCII
        b"a\x00b",
        b"a\x7fb",
        b"=?base64?!!!?=",  # not base64
        b"=?base64?" + base64.b64encode(b"\xff\xfe") + b"?=",  # base64, but not of UTF-8
    ],
)
def test_a_malformed_header_value_decodes_to_none(raw: bytes) -> None:
    assert decode_value(raw) is None


def test_a_value_that_merely_starts_like_the_sentinel_is_literal() -> None:
    assert decode_value(b"=?base64?eA==") == "=?base64?eA=="
    assert decode_value(b"=?utf-8?q?x?=") == "=?utf-8?q?x?="


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "true"), (False, "false"), (42, "42"), (42.0, "42"), (2.5, "2.5"), ("s", "s"), (None, None)],
)
def test_header_text_and_matching_agree(value: Any, text: str | None) -> None:
    assert header_text(value) == text
    if text is not None:
        assert header_matches(value, text)


@pytest.mark.parametrize(
    ("value", "text", "expected"),
    [
        (42, "42.0", True),  # numbers compare as numbers
        (42.0, "42", True),
        (42, "43", False),
        (False, "False", False),  # booleans only as true/false
        ("42", "42.0", False),  # strings exactly
        ({"a": 1}, "{}", False),  # objects have no header form
        ([1], "1", False),
    ],
)
def test_header_matches(value: Any, text: str, expected: bool) -> None:
    assert header_matches(value, text) is expected


# -- a request's headers --------------------------------------------------------------------------
def test_modern_headers_mirror_nested_arguments_by_the_shared_rule() -> None:
    schema = _nested(3, {"type": "string", "x-mcp-header": "Region"})
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": wire.TOOLS_CALL,
        "params": {
            "name": "t\u00e9",
            "arguments": {"p0": {"p1": {"p2": " eu "}}},
            "_meta": {wire.PROTOCOL_VERSION: "2026-07-28"},
        },
    }
    headers = modern_headers(message, header_parameters(schema))
    assert headers is not None
    named = dict(headers)
    assert named[wire.VERSION_HEADER.encode()] == b"2026-07-28"
    assert named[wire.METHOD_HEADER.encode()] == wire.TOOLS_CALL.encode()
    assert decode_value(named[wire.NAME_HEADER.encode()]) == "t\u00e9"
    assert decode_value(named[wire.PARAM_HEADER_PREFIX.encode() + b"Region"]) == " eu "


def test_an_absent_or_null_argument_sends_no_header() -> None:
    parameters = [(("region",), "Region")]
    for arguments in ({}, {"region": None}, {"region": {"nested": 1}}):
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": wire.TOOLS_CALL,
            "params": {"name": "t", "arguments": arguments, "_meta": {wire.PROTOCOL_VERSION: "2026-07-28"}},
        }
        names = [name for name, _ in modern_headers(message, parameters) or []]
        assert not any(name.startswith(wire.PARAM_HEADER_PREFIX.encode()) for name in names)


def test_a_schema_that_contains_itself_does_not_hang_the_walk() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["again"] = schema
    schema["properties"]["a"] = {"type": "string", "x-mcp-header": "A"}
    found = header_parameters(schema)  # returns: the walk is bounded
    assert found[-1] == (("a",), "A")
    assert max(len(path) for path, _ in found) == 1024
