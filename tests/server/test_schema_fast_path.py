"""The validation fast path never disagrees with jsonschema.

The fast path may only say "valid" when jsonschema would; every instance it rejects is re-checked by
jsonschema. These tests compare the two on many generated schemas and instances.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from jsonrpc_mcp.server.schema import CompiledSchema

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
