"""Registration without jsonschema for 2020-12 schemas beyond the flat fast path (``server/_certain.py``).

``certainly_valid`` may only say True when jsonschema's ``check_schema`` accepts the schema and every
``$ref`` in it resolves. These tests compare the two on many generated schemas, valid and not, nested
and referencing each other, and on the schemas pydantic writes; and they check that a server made of
such schemas starts without importing jsonschema.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, Field  # (installed with the mcp SDK, a dev dependency)
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from jsonrpc_mcp.server._certain import certainly_valid
from jsonrpc_mcp.server._schema import (
    CompiledSchema,
    SchemaDefinitionError,
    _has_nested_id,
    _recursion_panic,
    _refs,
)

ROOT = Path(__file__).resolve().parents[2]
NESTED = "the value is nested too deeply to be checked against the schema"
TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]
ODD: list[Any] = ["", "x", -1, 0, 1, 1.5, True, None, [], ["a", "a"], {}, {"a": 1}, "(", "^[a-z]+$"]
SUBSCHEMA_KEYS = ["items", "contains", "additionalProperties", "propertyNames", "not", "if", "then", "else"]
LIST_KEYS = ["prefixItems", "allOf", "anyOf", "oneOf"]
COUNT_KEYS = ["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"]
NUMBER_KEYS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
OTHER_KEYS = [
    "type",
    "required",
    "pattern",
    "$ref",
    "$anchor",
    "enum",
    "const",
    "format",
    "title",
    "default",
    "examples",
    "deprecated",
    "uniqueItems",
    "multipleOf",
    "dependentRequired",
    "patternProperties",
    "properties",
    "x-mcp-header",
    "$id",
    "$dynamicRef",
    "definitions",
    "unknownKeyword",
    "discriminator",
    "dependencies",
]
KEYS = SUBSCHEMA_KEYS + LIST_KEYS + COUNT_KEYS + NUMBER_KEYS + OTHER_KEYS


def _sub(rng: random.Random, depth: int) -> Any:
    if depth > 3 or rng.random() < 0.15:
        return rng.choice([True, False, {}])
    node = {key: _value(rng, key, depth) for key in rng.sample(KEYS, rng.randint(1, 3))}
    if rng.random() < 0.3:
        node["$ref"] = rng.choice(["#/$defs/A", "#/$defs/B", "#anchorA", "#"])
    return node


def _value(rng: random.Random, key: str, depth: int) -> Any:
    if rng.random() < 0.1:
        return rng.choice(ODD)  # often not what the metaschema asks for
    if key in SUBSCHEMA_KEYS:
        return _sub(rng, depth + 1)
    if key in LIST_KEYS:
        return [_sub(rng, depth + 1) for _ in range(rng.randint(0, 2))]
    if key in COUNT_KEYS:
        return rng.choice([0, 3, -1, 1.0])
    if key in NUMBER_KEYS:
        return rng.choice([1, 2.5, -3])
    if key == "type":
        return rng.choice([rng.choice(TYPES), rng.sample(TYPES, rng.randint(0, 3)), "text"])
    if key == "required":
        return rng.choice([["a"], ["a", "b"], [], ["a", "a"], [1]])
    if key == "pattern":
        return rng.choice(["^[a-z]+$", "(", "\\d{2,}"])
    if key == "$ref":
        return rng.choice(
            ["#", "#/$defs/A", "#/$defs/B", "#/$defs/missing", "#anchorA", "#nowhere", "#/properties/a"]
        )
    if key == "$anchor":
        return rng.choice(["anchorA", "anchorB", "1bad"])
    if key in ("properties", "patternProperties"):
        names = ["a", "b"] if key == "properties" else ["^x", "("]
        return {name: _sub(rng, depth + 1) for name in rng.sample(names, rng.randint(0, 2))}
    if key == "dependentRequired":
        return rng.choice([{"a": ["b"]}, {"a": ["b", "b"]}, {"a": "b"}])
    if key == "multipleOf":
        return rng.choice([2, 0.5, 0, -1])
    if key in ("enum", "examples"):
        return rng.choice([[1, "a"], []])
    if key == "discriminator":
        return rng.choice(
            [{"propertyName": "kind", "mapping": {"a": "#/$defs/A"}}, {"x": {"$ref": "#/$defs/Z"}}]
        )
    if key == "definitions":
        return {"A": _sub(rng, depth + 1)}
    return rng.choice(["text", 1, True, None])  # const, format, title, default, $id, $dynamicRef, x-...


def _schema(rng: random.Random) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    schema.update((key, _value(rng, key, 0)) for key in rng.sample(KEYS, rng.randint(0, 3)))
    if rng.random() < 0.7:
        schema["$defs"] = {"A": _sub(rng, 1), "B": _sub(rng, 1)}
        if isinstance(schema["$defs"]["A"], dict) and rng.random() < 0.5:
            schema["$defs"]["A"]["$anchor"] = "anchorA"
    if rng.random() < 0.4:
        schema["properties"] = {"p": {"$ref": rng.choice(["#/$defs/A", "#/$defs/B", "#anchorA"])}}
    if rng.random() < 0.2:
        schema["$schema"] = rng.choice(
            [
                "https://json-schema.org/draft/2020-12/schema",
                "https://json-schema.org/draft/2020-12/schema#",
                "http://json-schema.org/draft-07/schema#",
            ]
        )
    return schema


def _accepted_by_jsonschema(schema: dict[str, Any]) -> bool:
    """What the full check decides: a valid schema whose every ``$ref`` resolves inside it."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        return False
    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    resolver = Registry().with_resource("", resource).resolver(base_uri="")
    for ref in set(_refs(schema)):
        try:
            resolver.lookup(ref)
        except Unresolvable:
            return False
    return True


@pytest.mark.parametrize("seed", range(30))
def test_certainly_valid_only_says_so_when_jsonschema_accepts_the_schema(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(100):
        schema = _schema(rng)
        if schema.get("$schema", "").startswith("http://json-schema.org/draft-07"):
            assert not certainly_valid(schema)  # another dialect: always the full check
            continue
        if certainly_valid(schema):
            assert _accepted_by_jsonschema(schema), schema


def test_the_generated_schemas_reach_both_answers_and_the_nested_keywords() -> None:
    rng = random.Random(7)
    certain = uncertain = with_refs = 0
    for _ in range(3000):
        schema = _schema(rng)
        if certainly_valid(schema):
            certain += 1
            with_refs += bool(set(_refs(schema)) - {"#"})
        elif _accepted_by_jsonschema(schema):
            uncertain += 1  # valid, but beyond what the walk knows: the full check takes it
    assert certain > 250 and uncertain > 40 and with_refs > 40, (certain, uncertain, with_refs)


@pytest.mark.parametrize("seed", range(10))
def test_registration_fails_exactly_when_the_full_check_does(seed: int) -> None:
    rng = random.Random(500 + seed)
    for _ in range(60):
        schema = _schema(rng)
        if "$schema" in schema or _has_nested_id(schema):
            continue  # other dialects: test_schema_fast_path.py; a nested $id scopes refs (never certain)
        expected = _accepted_by_jsonschema(schema)
        try:
            compiled = CompiledSchema(schema)
        except SchemaDefinitionError:
            assert not expected, schema
            continue
        assert expected, schema
        validator = Draft202012Validator(schema)
        instances: list[Any] = [{}, {"a": "x"}, {"a": 1, "b": [1, 1]}, {"x1": None}, [], "text"]
        for instance in instances:
            try:
                valid = validator.is_valid(instance)
            except BaseException as exc:  # a $ref loop that applies to itself: the server says so
                if not isinstance(exc, RecursionError) and not _recursion_panic(exc):
                    raise
                assert compiled.errors(instance) == [NESTED], schema
                continue
            assert (compiled.errors(instance) is None) is valid, (schema, instance)


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}, "does not resolve"),
        ({"type": "object", "properties": {"a": {"pattern": "("}}}, "not a valid JSON Schema"),
        ({"type": "object", "properties": {"a": {"type": "text"}}}, "not a valid JSON Schema"),
        ({"type": "object", "$defs": {"A": {"minLength": -1}}}, "not a valid JSON Schema"),
        ({"type": "object", "properties": {"a": {"$ref": "https://example.com/a"}}}, "never fetched"),
    ],
)
def test_an_invalid_nested_schema_is_still_refused_at_registration(schema: dict[str, Any], why: str) -> None:
    assert not certainly_valid(schema)
    with pytest.raises(SchemaDefinitionError, match=why):
        CompiledSchema(schema, what="tool 't' inputSchema")


def test_a_schema_deeper_than_python_can_walk_is_refused_in_words() -> None:
    deep: Any = "leaf"
    for _ in range(5000):  # (deeper than Python's recursion limit)
        deep = {"next": deep}
    schema = {"type": "object", "deep": deep}
    assert not certainly_valid(schema)  # too deep to tell whether a $ref hides in it
    with pytest.raises(SchemaDefinitionError, match="'t' inputSchema is nested too deeply to be checked"):
        CompiledSchema(schema, what="tool 't' inputSchema")


def _pydantic_schemas() -> list[dict[str, Any]]:
    from enum import Enum
    from typing import Annotated, Literal, Optional, Union

    class Colour(Enum):
        RED = "red"
        BLUE = "blue"

    class Address(BaseModel):
        street: str
        zip_code: Annotated[str, Field(pattern=r"^\d{5}$")]

    class Cat(BaseModel):
        kind: Literal["cat"]
        lives: Annotated[int, Field(ge=0, le=9)] = 9

    class Dog(BaseModel):
        kind: Literal["dog"]
        good: bool = True

    class Person(BaseModel):
        name: Annotated[str, Field(min_length=1, description="full name")]
        home: Address
        previous: list[Address] = Field(default_factory=list)
        nickname: Optional[str] = None  # noqa: UP045 (what 3.10 users write too)
        colour: Colour = Colour.RED
        scores: dict[str, float] = Field(default_factory=dict)
        pet: Annotated[Union[Cat, Dog], Field(discriminator="kind")]  # noqa: UP007
        tags: Annotated[list[str], Field(max_length=3, default_factory=list)]

    class Tree(BaseModel):
        label: str
        children: list[Tree] = Field(default_factory=list)

    return [model.model_json_schema() for model in (Address, Person, Tree)]


def test_the_schemas_pydantic_writes_need_no_jsonschema_at_registration() -> None:
    for schema in _pydantic_schemas():
        assert certainly_valid(schema), schema
        assert _accepted_by_jsonschema(schema)


def test_examples_everything_loads_without_importing_jsonschema() -> None:
    """Its 2020-12 tool ($defs, $anchor, $ref, anyOf...) and its x-mcp-header tool included."""
    script = (
        "import sys\n"
        "from jsonrpc_mcp.cli import load_target\n"
        f"server = load_target({str(ROOT / 'examples' / 'everything' / 'server.py')!r})\n"
        "names = {t.name for t in server.tools}\n"
        "assert {'json_schema_2020_12_tool', 'test_header_parameters'} <= names, names\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jsonschema', 'referencing')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
