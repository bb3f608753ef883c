"""The validation fast path never disagrees with jsonschema.

The fast path may only say "valid" when jsonschema would; every instance it rejects is re-checked by
jsonschema. These tests compare the two on many generated schemas and instances.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from jsonrpc_mcp.server._schema import CompiledSchema

TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
VALUES: list[Any] = [
    "",
    "a",
    "héllo",
    "x" * 30,
    0,
    1,
    -5,
    20,
    21,
    2.0,
    2.5,
    -0.5,
    1e300,
    True,
    False,
    None,
    [],
    [1],
    {},
    {"k": 1},
]


def _property(rng: random.Random) -> dict[str, Any]:
    kind = rng.choice(TYPES)
    schema: dict[str, Any] = {"type": kind, "description": "d"}
    if kind in ("integer", "number"):
        for key in rng.sample(
            ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"], rng.randint(0, 2)
        ):
            schema[key] = rng.choice([0, 1, 2, 20, 2.5, -1])
    if kind == "string":
        for key in rng.sample(["minLength", "maxLength"], rng.randint(0, 2)):
            schema[key] = rng.choice([0, 1, 2, 5])
    return schema


def _schema(rng: random.Random) -> dict[str, Any]:
    names = rng.sample(["a", "b", "c", "d"], rng.randint(0, 4))
    schema: dict[str, Any] = {"type": "object", "properties": {n: _property(rng) for n in names}}
    if names:
        schema["required"] = rng.sample(names, rng.randint(0, len(names)))
    if rng.random() < 0.5:
        schema["additionalProperties"] = rng.random() < 0.5
    if rng.random() < 0.3:
        schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    return schema


def _instance(rng: random.Random) -> Any:
    if rng.random() < 0.05:
        return rng.choice(VALUES)  # not even an object
    return {n: rng.choice(VALUES) for n in rng.sample(["a", "b", "c", "d", "e"], rng.randint(0, 5))}


@pytest.mark.parametrize("seed", range(20))
def test_fast_path_agrees_with_jsonschema(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        schema = _schema(rng)
        compiled = CompiledSchema(schema)
        assert compiled._fast is not None, schema  # these schemas are all in the fast path's reach
        reference = Draft7Validator if "$schema" in schema else Draft202012Validator
        for _ in range(40):
            instance = _instance(rng)
            expected = reference(schema).is_valid(instance)
            if compiled._fast(instance):  # "valid" from the fast path must be jsonschema's verdict too
                assert expected, (schema, instance)
            assert (compiled.errors(instance) is None) is expected, (schema, instance)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string", "format": "date"}}},
        {"type": "object", "properties": {"a": {"enum": [1, 2]}}},
        {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "$defs": {}, "properties": {}},
        {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "properties": {}},
    ],
)
def test_schemas_beyond_the_fast_path_use_jsonschema_only(schema: dict[str, Any]) -> None:
    assert CompiledSchema(schema)._fast is None


def test_a_rejected_instance_still_gets_jsonschemas_messages() -> None:
    compiled = CompiledSchema({"type": "object", "properties": {"limit": {"type": "integer", "maximum": 20}}})
    assert compiled.errors({"limit": 100}) == ["limit: 100 is greater than the maximum of 20"]


# -- registration without jsonschema ---------------------------------------------------------------
# A flat schema that is certainly valid is not checked against its metaschema at registration (so a
# server need not import jsonschema to start). These schemas mix valid and invalid annotations,
# lengths, "required" lists and $schema spellings: registration must fail exactly when jsonschema's
# check_schema does, and what is accepted must validate as jsonschema does.
ODD_VALUES: list[Any] = ["text", "", 3, None, True, ["a"], ("a",), {"k": "v"}, 1.5]
DIALECTS = [
    None,
    "http://json-schema.org/draft-07/schema#",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-07/schema##",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-04/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema#",
]


def _annotate(rng: random.Random, schema: dict[str, Any]) -> None:
    for key in rng.sample(["description", "title", "$comment", "examples", "deprecated", "default"], 2):
        schema[key] = rng.choice(ODD_VALUES)


def _maybe_invalid_schema(rng: random.Random) -> dict[str, Any]:
    schema = _schema(rng)
    schema.pop("$schema", None)
    for sub in schema["properties"].values():
        if rng.random() < 0.3:
            _annotate(rng, sub)
        if sub["type"] == "string" and rng.random() < 0.3:
            sub[rng.choice(["minLength", "maxLength"])] = rng.choice([-1, 0, 2, 1.0, True])
    if rng.random() < 0.3:
        _annotate(rng, schema)
    if rng.random() < 0.2:
        schema["required"] = rng.choice([["a", "a"], [1], ["a", None], [], ["b"]])
    if rng.random() < 0.1:
        schema["properties"][7] = {"type": "string"}
    dialect = rng.choice(DIALECTS)
    if dialect is not None:
        schema["$schema"] = dialect
    return schema


def _reference_class(schema: dict[str, Any]) -> Any:
    import jsonschema

    from jsonrpc_mcp.server import _schema as schema_module

    declared = schema.get("$schema")
    name = "Draft202012Validator" if declared is None else schema_module._DIALECTS[declared.rstrip("#")]
    return getattr(jsonschema, name)


@pytest.mark.parametrize("seed", range(20))
def test_registration_fails_exactly_when_check_schema_does(seed: int) -> None:
    from jsonschema.exceptions import SchemaError

    from jsonrpc_mcp.server._schema import SchemaDefinitionError

    rng = random.Random(1000 + seed)
    for _ in range(60):
        schema = _maybe_invalid_schema(rng)
        reference = _reference_class(schema)
        try:
            reference.check_schema(schema)
            valid_schema = True
        except SchemaError:
            valid_schema = False
        try:
            compiled = CompiledSchema(schema)
        except SchemaDefinitionError:
            assert not valid_schema, schema
            continue
        assert valid_schema, schema
        for _ in range(10):
            instance = _instance(rng)
            expected = reference(schema).is_valid(instance)
            assert (compiled.errors(instance) is None) is expected, (schema, instance)


def test_a_certainly_valid_flat_schema_builds_no_validator_until_an_instance_is_rejected() -> None:
    compiled = CompiledSchema({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}})
    assert compiled._validator is None
    assert compiled.errors({"n": 3}) is None
    assert compiled._validator is None
    assert compiled.errors({"n": -1}) == ["n: -1 is less than the minimum of 0"]
    assert compiled._validator is not None
