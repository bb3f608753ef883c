"""Reading an OpenAPI 3.0 or 3.1 document: each operation as what a tool needs.

Theory of operation
-------------------
:func:`operations` walks ``paths`` (every method of every path item, the path item's parameters
merged under the operation's own) and describes each as an :class:`Operation`: its arguments
(path, query and header parameters, and the request body: an object body's properties become
arguments of their own when no parameter has their name, any other body is the ``body``
argument), the tool's ``inputSchema`` made of them, and an ``outputSchema`` from the first 2xx
response's JSON schema (an object schema as it is; any other wrapped as ``{"result": ...}``).

References are resolved inside the document only (``#/...``): one that points elsewhere is refused
and never fetched. A schema of ``components.schemas`` is kept by reference, copied into the tool
schema's ``$defs`` (so recursive schemas stay finite); other references (parameters, request bodies,
responses) are replaced by what they point to.

Schemas are made JSON Schema 2020-12, which 3.1 already is: 3.0's ``nullable`` becomes a ``"null"``
type, and its boolean ``exclusiveMinimum``/``exclusiveMaximum`` the numeric ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Argument", "OpenAPIError", "Operation", "operations"]

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_DATA_KEYS = frozenset({"example", "examples", "enum", "const", "default"})  # values, not schemas
_SCHEMAS = "#/components/schemas/"
_MAX_DEPTH = 64


class OpenAPIError(ValueError):
    """The OpenAPI document cannot be read (not 3.x, a reference it cannot resolve, ...)."""


@dataclass
class Argument:
    """One argument of a tool, and where its value goes in the HTTP request."""

    name: str  # the argument's name in the tool's inputSchema
    wire_name: str  # the parameter's (or body property's) name in the request
    location: str  # "path", "query", "header", "body" (the whole body) or "body-property"
    required: bool
    schema: dict[str, Any]
    style: str | None = None
    explode: bool | None = None


@dataclass
class Operation:
    """An operation of the document, ready to become a tool."""

    method: str  # upper case
    path: str
    operation_id: str | None
    summary: str | None
    description: str | None
    tags: list[str]
    deprecated: bool
    arguments: list[Argument] = field(default_factory=list)
    body_media_type: str | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    wrap_output: bool = False

    @property
    def key(self) -> str:
        """``METHOD /path``, how route maps and errors name it."""
        return f"{self.method} {self.path}"


class _Reader:
    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        version = str(document.get("openapi", ""))
        if not version.startswith("3."):
            raise OpenAPIError(f"not an OpenAPI 3.0 or 3.1 document (openapi: {version or 'missing'!r})")
        self.v30 = version.startswith("3.0")

    def pointer(self, ref: Any) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise OpenAPIError(
                f"$ref {ref!r} is not inside the document: only local references (#/...) are resolved, "
                "never fetched"
            )
        node: Any = self.document
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise OpenAPIError(f"$ref {ref!r} does not resolve inside the document")
        return node

    def deref(self, node: Any) -> Any:
        """A parameter, request body or response, its ``$ref`` (chain) followed."""
        seen: set[str] = set()
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if ref in seen:
                raise OpenAPIError(f"$ref {ref!r} refers to itself")
            seen.add(ref)
            node = self.pointer(ref)
        return node

    def schema(self, node: Any, defs: dict[str, Any], depth: int = 0) -> Any:
        """``node`` as JSON Schema 2020-12; the component schemas it refers to go to ``defs``."""
        if depth > _MAX_DEPTH:
            raise OpenAPIError("a schema nests too deep (a cycle of references outside components.schemas?)")
        if isinstance(node, list):
            return [self.schema(item, defs, depth + 1) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            if ref.startswith(_SCHEMAS) and "/" not in ref[len(_SCHEMAS) :]:
                name = ref[len(_SCHEMAS) :].replace("~1", "/").replace("~0", "~")
                if name not in defs:
                    defs[name] = {}  # (a placeholder: a recursive schema refers to itself)
                    defs[name] = self.schema(self.pointer(ref), defs, depth + 1)
                target: dict[str, Any] = {"$ref": "#/$defs/" + _escape(name)}
            else:
                target = self.schema(self.pointer(ref), defs, depth + 1)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if not siblings:
                return target
            return {**self.schema(siblings, defs, depth + 1), "allOf": [target]}
        out: dict[str, Any] = {}
        for key, value in node.items():
            out[key] = value if key in _DATA_KEYS else self.schema(value, defs, depth + 1)
        if self.v30:
            _from_30(out)
        return out


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _from_30(schema: dict[str, Any]) -> None:
    """3.0's spellings as JSON Schema 2020-12's (in place)."""
    if schema.pop("nullable", False) is True:
        kind = schema.get("type")
        if isinstance(kind, str):
            schema["type"] = [kind, "null"]
        elif "enum" in schema and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = schema.get(exclusive)
        if isinstance(flag, bool):
            del schema[exclusive]
            if flag and bound in schema:
                schema[exclusive] = schema.pop(bound)


def _shape(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The schema itself, or the component schema it refers to."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found = defs.get(ref[len("#/$defs/") :].replace("~1", "/").replace("~0", "~"))
        return found if isinstance(found, dict) else {}
    return schema


def _json_media(content: dict[str, Any]) -> str | None:
    for media in content:
        base = media.split(";")[0].strip().lower()
        if base == "application/json" or base.endswith("+json"):
            return media
    return None


def operations(document: dict[str, Any]) -> list[Operation]:
    """Every operation of the document, in the order of its paths and methods."""
    reader = _Reader(document)
    paths = document.get("paths") or {}
    if not isinstance(paths, dict):
        raise OpenAPIError("'paths' must be an object")
    found: list[Operation] = []
    for path, raw_item in paths.items():
        item = reader.deref(raw_item)
        if not isinstance(item, dict):
            continue
        shared = item.get("parameters") or []
        for method in METHODS:
            spec = item.get(method)
            if isinstance(spec, dict):
                found.append(_operation(reader, method, str(path), spec, shared))
    return found


def _operation(reader: _Reader, method: str, path: str, spec: dict[str, Any], shared: list[Any]) -> Operation:
    where = f"{method.upper()} {path}"
    tags = spec.get("tags")
    op = Operation(
        method=method.upper(),
        path=path,
        operation_id=spec.get("operationId") if isinstance(spec.get("operationId"), str) else None,
        summary=spec.get("summary") if isinstance(spec.get("summary"), str) else None,
        description=spec.get("description") if isinstance(spec.get("description"), str) else None,
        tags=[t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
        deprecated=spec.get("deprecated") is True,
    )
    defs: dict[str, Any] = {}
    params: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*shared, *(spec.get("parameters") or [])]:  # the operation's replace the path item's
        param = reader.deref(raw)
        if (
            isinstance(param, dict)
            and isinstance(param.get("name"), str)
            and isinstance(param.get("in"), str)
        ):
            params[(param["name"], param["in"])] = param
    taken: set[str] = set()
    for location in ("path", "query", "header"):
        for (name, where_in), param in params.items():
            if where_in != location:
                continue
            schema = param.get("schema")
            if schema is None and isinstance(param.get("content"), dict) and param["content"]:
                schema = next(iter(param["content"].values())).get("schema")
            converted = reader.schema(schema if isinstance(schema, dict) else {}, defs)
            if isinstance(param.get("description"), str) and "description" not in converted:
                converted = {**converted, "description": param["description"]}
            argument = name if name not in taken else f"{name}_{location}"
            taken.add(argument)
            op.arguments.append(
                Argument(argument, name, location, location == "path" or param.get("required") is True,
                         converted, param.get("style"), param.get("explode"))
            )  # fmt: skip
    _body(reader, spec, op, defs, taken, where)
    properties = {a.name: a.schema for a in op.arguments}
    required = [a.name for a in op.arguments if a.required]
    op.input_schema = {"type": "object", "properties": properties}
    if required:
        op.input_schema["required"] = required
    if defs:
        op.input_schema["$defs"] = defs
    _output(reader, spec, op)
    return op


def _body(
    reader: _Reader, spec: dict[str, Any], op: Operation, defs: dict[str, Any], taken: set[str], where: str
) -> None:
    body = reader.deref(spec.get("requestBody"))
    if not isinstance(body, dict) or not isinstance(body.get("content"), dict) or not body["content"]:
        return
    content: dict[str, Any] = body["content"]
    media = _json_media(content)
    if media is None:
        forms = [m for m in content if m.split(";")[0].strip().lower() == "application/x-www-form-urlencoded"]
        media = forms[0] if forms else next(iter(content))
    op.body_media_type = media
    raw = content[media].get("schema") if isinstance(content[media], dict) else None
    schema = reader.schema(raw if isinstance(raw, dict) else {}, defs)
    required = body.get("required") is True
    base = media.split(";")[0].strip().lower()
    structured = _json_media({media: None}) is not None or base == "application/x-www-form-urlencoded"
    # an object body whose properties name no parameter: each property is an argument
    shape = _shape(schema, defs)
    props = shape.get("properties") if shape.get("type") in ("object", None) else None
    if structured and isinstance(props, dict) and props and not (set(props) & taken):
        inner_required = set(shape.get("required") or [])
        for name, prop in props.items():
            op.arguments.append(
                Argument(name, name, "body-property", required and name in inner_required, prop)
            )
            taken.add(name)
        return
    name = "body" if "body" not in taken else "request_body"
    if not structured and not schema:
        schema = {"type": "string"}
    op.arguments.append(Argument(name, name, "body", required, schema))
    taken.add(name)


def _output(reader: _Reader, spec: dict[str, Any], op: Operation) -> None:
    responses = spec.get("responses")
    if not isinstance(responses, dict):
        return
    codes = sorted(str(code) for code in responses if re.fullmatch(r"2(\d\d|XX)", str(code)))
    for code in codes:
        response = reader.deref(responses.get(code) if code in responses else responses.get(int(code)))
        content = response.get("content") if isinstance(response, dict) else None
        media = _json_media(content) if isinstance(content, dict) else None
        if media is None or not isinstance(content, dict) or not isinstance(content[media], dict):
            continue
        raw = content[media].get("schema")
        if not isinstance(raw, dict) or not raw:
            return
        defs: dict[str, Any] = {}
        schema = reader.schema(raw, defs)
        shape = _shape(schema, defs)
        if shape.get("type") == "object" and "$ref" not in schema:
            out = dict(schema)
        elif shape.get("type") == "object":
            out = {"type": "object", "allOf": [schema]}
        else:
            out = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
            op.wrap_output = True
        if defs:
            out["$defs"] = defs
        op.output_schema = out
        return
