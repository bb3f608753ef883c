"""Tool results: the ``outputSchema`` a return annotation gives, and a returned value as a result.

Theory of operation. At registration :func:`infer_output` reads the tool function's return
annotation. An object type (a ``TypedDict``, a dataclass, a pydantic model, ``dict[str, T]``) is the
``outputSchema`` itself; any other expressible type (``int``, ``list[T]``, ``Model | None``...) is
wrapped, as the official SDK and FastMCP do: ``{"type": "object", "properties": {"result": ...},
"required": ["result"]}``, the value then travels as ``{"result": value}``. No schema comes from an
annotation that says nothing about the shape (none, ``Any``, ``None``, bare ``dict`` or ``list``,
``dict[str, Any]``, which may well be content blocks), from ``str`` (the text block already is the
value), from :class:`ToolResult` or from a type that cannot be expressed.

At call time :func:`tool_result` turns the value into plain JSON (:func:`._types.jsonable`),
validates it against the schema, and returns ``structuredContent`` plus its JSON as a text block
(a wrapped value's text is the wrapper's JSON, ``{"result": ...}``: the spec asks for "the serialized
JSON" of the structured content); revisions without structured output get the value's text only.
A value that breaks the schema is the tool's failure, reported to the model as an ``isError``
result (and logged).
"""

from __future__ import annotations

import inspect
import logging
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Union

from ..content import fit_all, for_revision, is_content_block
from ..revisions import Revision
from . import _types
from ._boundary import tool_error
from ._introspect import schema_for_type
from ._schema import CompiledSchema

__all__ = ["ToolResult", "infer_output", "tool_result"]

logger = logging.getLogger("jsonrpc_mcp.server")

MISSING: Any = object()


@dataclass(slots=True)
class ToolResult:
    """Full control over a ``tools/call`` result (otherwise return a str, or JSON-able data)."""

    content: list[dict[str, Any]] = field(default_factory=list)
    structured_content: Any = MISSING
    is_error: bool = False
    meta: dict[str, Any] | None = None


_TEXTUAL = (str, type(None))
# schemas that say nothing about a value's shape: no outputSchema from them
_LOOSE: tuple[dict[str, Any], ...] = (
    {},
    {"type": "object"},
    {"type": "array"},
    {"type": "array", "items": {}},
    {"type": "array", "items": {"type": "object"}},
    {"type": "null"},
)


def _gives_no_schema(annotation: Any) -> bool:
    if annotation is inspect.Parameter.empty or annotation is None or annotation in (bytes, bytearray):
        return True
    if typing.get_origin(annotation) is typing.Annotated:
        return _gives_no_schema(typing.get_args(annotation)[0])
    if annotation in _TEXTUAL:
        return True
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return all(a in _TEXTUAL for a in typing.get_args(annotation))
    return isinstance(annotation, type) and issubclass(annotation, ToolResult)


def infer_output(annotation: Any, where: str) -> tuple[dict[str, Any], bool] | None:
    """(outputSchema, wrapped) for a tool's return annotation; None when it gives no schema."""
    if _gives_no_schema(annotation):
        return None
    try:
        schema = _types.hoist_defs(schema_for_type(annotation, where, output=True), where)
    except TypeError as exc:
        logger.debug("%s: no outputSchema from the return annotation: %s", where, exc)
        return None
    if schema in _LOOSE:
        return None
    if schema.get("type") == "object":
        return schema, False
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def tool_result(
    value: Any,
    revision: Revision,
    *,
    name: str,
    validator: CompiledSchema | None,
    wrap: bool = False,
) -> dict[str, Any]:
    """What the handler of tool ``name`` returned, as a ``CallToolResult`` (TypeError: not JSON)."""
    if isinstance(value, ToolResult):
        result: dict[str, Any] = {"content": fit_all(value.content, revision)}
        structured = value.structured_content
        if value.is_error:
            return {**result, "isError": True, **({"_meta": value.meta} if value.meta else {})}
        if value.meta:
            result["_meta"] = value.meta
        if structured is not MISSING:
            structured = _types.jsonable(structured)
    elif validator is None:  # no outputSchema: the value as content
        if value is None:
            return {"content": []}
        if isinstance(value, str):
            return {"content": [{"type": "text", "text": value}]}
        if is_content_block(value):
            return {"content": [for_revision(value, revision)]}
        if type(value) is list and value and all(is_content_block(v) for v in value):
            return {"content": fit_all(value, revision)}
        return {"content": [{"type": "text", "text": _types.dumps(value).decode()}]}
    else:
        try:
            structured = _types.jsonable(value)
        except TypeError:
            logger.error("tool %r returned a %s, which is not JSON", name, type(value).__name__)
            return tool_error(f"Tool {name!r} returned a {type(value).__name__}, which is not JSON")
        if value is None:
            content: list[dict[str, Any]] = []
        elif isinstance(value, str):
            content = [{"type": "text", "text": value}]
        else:
            content = [{"type": "text", "text": _types.dumps(structured).decode()}]
        if wrap:
            structured = {"result": structured}
            if revision.has_output_schema:  # the text block is the JSON of the structured content
                content = [{"type": "text", "text": _types.dumps(structured).decode()}]
        result = {"content": content}
    if structured is MISSING:
        return result
    if validator is not None:
        errors = validator.errors(structured)
        if errors:
            detail = "; ".join(errors)
            logger.error("tool %r broke its own outputSchema: %s", name, detail)
            return tool_error(
                f"Tool {name!r} returned a value that does not match its outputSchema: {detail}"
            )
    if revision.has_output_schema:
        result["structuredContent"] = structured
    return result
