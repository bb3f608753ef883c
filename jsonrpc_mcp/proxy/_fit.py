"""What crosses the proxy, fitted to the revision the downstream client speaks.

The upstream answers in its own revision; the downstream may speak an older one, or the other era.
These functions drop what the downstream revision does not define (definition fields, content block
types and fields, the stateless revisions' result fields) and leave the rest as it came. Each one
returns the same object when nothing needs to change.
"""

from __future__ import annotations

from typing import Any

from .. import wire
from ..content import fit_all, fit_annotations, for_revision
from ..revisions import Revision

__all__ = ["fit_items", "fit_result", "handshake_result"]

# the fields only the stateless revisions' results carry
_MODERN_FIELDS = ("resultType", "ttlMs", "cacheScope")


def _without(item: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in keys} if keys else item


def _definition(item: dict[str, Any], revision: Revision) -> dict[str, Any]:
    """A tool, resource, template or prompt definition as ``revision`` spells it."""
    drop = set()
    if "title" in item and not revision.has_titles:
        drop.add("title")
    if "icons" in item and not revision.has_icons:
        drop.add("icons")
    if "_meta" in item and not revision.has_definition_meta:
        drop.add("_meta")
    if "outputSchema" in item and not revision.has_output_schema:
        drop.add("outputSchema")
    if "annotations" in item and "inputSchema" in item and not revision.has_tool_annotations:
        drop.add("annotations")
    fitted = _without(item, drop)
    annotations = fitted.get("annotations")
    if annotations is not None and "inputSchema" not in fitted:  # a resource's annotations
        kept = fit_annotations(annotations, revision)
        if kept is not annotations:
            fitted = {**fitted, "annotations": kept}
    arguments = fitted.get("arguments")
    if (
        type(arguments) is list  # a prompt's arguments
        and not revision.has_titles
        and any(type(a) is dict and "title" in a for a in arguments)
    ):
        plain = [_without(a, {"title"}) if type(a) is dict else a for a in arguments]
        fitted = {**fitted, "arguments": plain}
    return fitted


def fit_items(items: list[Any], revision: Revision) -> list[Any]:
    """The definitions of a list result (``tools``, ``resources``, ...) for ``revision``."""
    return [_definition(item, revision) if type(item) is dict else item for item in items]


def fit_result(method: str, result: Any, revision: Revision) -> Any:
    """The content of a ``tools/call``, ``prompts/get`` or ``resources/read`` result for ``revision``."""
    if type(result) is not dict:
        return result
    if method == wire.TOOLS_CALL:
        content = result.get("content")
        if type(content) is list:
            fitted = fit_all(content, revision)
            if fitted is not content:
                result = {**result, "content": fitted}
        if "structuredContent" in result and not revision.has_output_schema:
            result = _without(result, {"structuredContent"})
    elif method == wire.PROMPTS_GET:
        messages = result.get("messages")
        if type(messages) is list:
            fitted_messages = [_message(m, revision) for m in messages]
            if any(a is not b for a, b in zip(fitted_messages, messages, strict=True)):
                result = {**result, "messages": fitted_messages}
    elif method == wire.RESOURCES_READ and not revision.has_definition_meta:
        contents = result.get("contents")
        if type(contents) is list and any(type(c) is dict and "_meta" in c for c in contents):
            stripped = [_without(c, {"_meta"}) if type(c) is dict else c for c in contents]
            result = {**result, "contents": stripped}
    return result


def _message(message: Any, revision: Revision) -> Any:
    if type(message) is not dict or type(message.get("content")) is not dict:
        return message
    content = for_revision(message["content"], revision)
    return message if content is message["content"] else {**message, "content": content}


def handshake_result(result: Any) -> Any:
    """A result for a handshake-era client: without the stateless revisions' fields (``resultType``,
    caching hints, the server's info in ``_meta``)."""
    if type(result) is not dict:
        return result
    out = _without(result, {k for k in _MODERN_FIELDS if k in result})
    meta = out.get("_meta")
    if type(meta) is dict and wire.SERVER_INFO in meta:
        rest = {k: v for k, v in meta.items() if k != wire.SERVER_INFO}
        out = {**out, "_meta": rest} if rest else _without(out, {"_meta"})
    return out
