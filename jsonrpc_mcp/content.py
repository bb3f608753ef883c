"""Content blocks: what tools return and prompts and sampling messages carry.

Each helper returns a plain dict in the wire shape of the newest revision::

    from jsonrpc_mcp import content

    @server.tool()
    def chart() -> list[dict]:
        return [content.text("Here it is:"), content.image(png_bytes, "image/png")]

A tool may return one block, a list of blocks, or ``ToolResult(content=[...])``. Before a block is
sent, :func:`for_revision` fits it to the negotiated revision: blocks the revision does not define
(``audio`` before 2025-03-26, ``resource_link`` before 2025-06-18) become a text block describing
them, and fields it does not define (``_meta``, ``annotations.lastModified``, a link's ``title`` or
``icons``) are left out. Nothing a revision cannot read is ever sent raw.

(No ``from __future__ import annotations`` here: it would clash with :func:`annotations`.)
"""

import base64
from typing import Any

from .revisions import Revision

__all__ = [
    "CONTENT_TYPES",
    "annotations",
    "audio",
    "embedded_resource",
    "for_revision",
    "image",
    "is_content_block",
    "resource_link",
    "text",
]

CONTENT_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})

# the field each block type cannot do without: a dict with "type" and this field is a content block
_REQUIRED = {"text": "text", "image": "data", "audio": "data", "resource": "resource", "resource_link": "uri"}


def _b64(data: bytes | bytearray | memoryview | str) -> str:
    if isinstance(data, str):
        return data  # already base64
    return base64.b64encode(bytes(data)).decode("ascii")


def _extras(block: dict[str, Any], annotations: dict[str, Any] | None, meta: dict[str, Any] | None) -> None:
    if annotations:
        block["annotations"] = annotations
    if meta:
        block["_meta"] = meta


def annotations(
    audience: list[str] | None = None, priority: float | None = None, last_modified: str | None = None
) -> dict[str, Any]:
    """An ``annotations`` object: ``audience`` ("user"/"assistant"), ``priority`` (0..1),
    ``last_modified`` (ISO 8601; sent from 2025-06-18 on)."""
    out: dict[str, Any] = {}
    if audience is not None:
        out["audience"] = list(audience)
    if priority is not None:
        if not 0 <= priority <= 1:
            raise ValueError(f"priority must be between 0 and 1, got {priority}")
        out["priority"] = priority
    if last_modified is not None:
        out["lastModified"] = last_modified
    return out


def text(
    text: str, annotations: dict[str, Any] | None = None, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A text block."""
    block: dict[str, Any] = {"type": "text", "text": text}
    _extras(block, annotations, meta)
    return block


def image(
    data: bytes | str,
    mime_type: str = "image/png",
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An image block; ``data`` is the raw bytes, or a str already base64-encoded."""
    block: dict[str, Any] = {"type": "image", "data": _b64(data), "mimeType": mime_type}
    _extras(block, annotations, meta)
    return block


def audio(
    data: bytes | str,
    mime_type: str = "audio/wav",
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An audio block (2025-03-26+; described in text for older clients)."""
    block: dict[str, Any] = {"type": "audio", "data": _b64(data), "mimeType": mime_type}
    _extras(block, annotations, meta)
    return block


def embedded_resource(
    uri: str,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
    resource_meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``resource`` block embedding the resource's contents: ``text``, or ``blob`` (bytes, or a
    str already base64-encoded). ``meta`` goes on the block, ``resource_meta`` on the contents."""
    if text is not None and blob is not None:
        raise ValueError("an embedded resource has text or a blob, not both")
    resource: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        resource["mimeType"] = mime_type
    if blob is not None:
        resource["blob"] = _b64(blob)
    else:
        resource["text"] = text if text is not None else ""
    if resource_meta:
        resource["_meta"] = resource_meta
    block: dict[str, Any] = {"type": "resource", "resource": resource}
    _extras(block, annotations, meta)
    return block


def resource_link(
    uri: str,
    name: str,
    mime_type: str | None = None,
    description: str | None = None,
    title: str | None = None,
    size: int | None = None,
    icons: list[dict[str, Any]] | None = None,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``resource_link`` block pointing at a resource the client may read (2025-06-18+;
    described in text for older clients)."""
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    if title is not None:
        block["title"] = title
    if description is not None:
        block["description"] = description
    if mime_type is not None:
        block["mimeType"] = mime_type
    if size is not None:
        block["size"] = size
    if icons:
        block["icons"] = icons
    _extras(block, annotations, meta)
    return block


def is_content_block(value: Any) -> bool:
    """Whether ``value`` is a content block: a dict with a known ``type`` and that type's data."""
    if type(value) is not dict:
        return False
    kind = value.get("type")
    return isinstance(kind, str) and kind in _REQUIRED and _REQUIRED[kind] in value


def _describe_link(block: dict[str, Any]) -> str:
    label = block.get("title") or block.get("name") or block.get("uri")
    out = f"Resource link: {label} <{block.get('uri')}>"
    if block.get("mimeType"):
        out += f" ({block['mimeType']})"
    if block.get("description"):
        out += f": {block['description']}"
    return out


def _describe_audio(block: dict[str, Any], revision: Revision) -> str:
    data = block.get("data")
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    return (
        f"[audio content ({block.get('mimeType', 'unknown type')}, about {size} bytes) not shown: "
        f"protocol revision {revision.version} cannot carry audio]"
    )


def _fit_annotations(value: Any, revision: Revision) -> Any:
    if isinstance(value, dict) and "lastModified" in value and not revision.has_annotation_last_modified:
        value = {k: v for k, v in value.items() if k != "lastModified"}
    return value


def for_revision(block: dict[str, Any], revision: Revision) -> dict[str, Any]:
    """``block`` as ``revision`` can carry it (the same dict when nothing needs to change)."""
    kind = block.get("type")
    if kind == "audio" and not revision.has_audio_content:
        block = {"type": "text", "text": _describe_audio(block, revision), **_keep(block, "annotations")}
    elif kind == "resource_link" and not revision.has_resource_links:
        block = {"type": "text", "text": _describe_link(block), **_keep(block, "annotations")}
    drop: set[str] = set()
    if "_meta" in block and not revision.has_content_meta:
        drop.add("_meta")
    if kind == "resource_link":
        if "title" in block and not revision.has_titles:
            drop.add("title")
        if "icons" in block and not revision.has_icons:
            drop.add("icons")
    if drop:
        block = {k: v for k, v in block.items() if k not in drop}
    notes = block.get("annotations")
    fitted = _fit_annotations(notes, revision)
    if fitted is not notes:
        block = {**block, "annotations": fitted}
    if kind == "resource":
        inner = block.get("resource")
        if isinstance(inner, dict) and "_meta" in inner and not revision.has_definition_meta:
            block = {**block, "resource": {k: v for k, v in inner.items() if k != "_meta"}}
    return block


def _keep(block: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: block[k] for k in keys if k in block}


def fit_all(blocks: list[dict[str, Any]], revision: Revision) -> list[dict[str, Any]]:
    """Every block of a list through :func:`for_revision` (the same list when nothing changes)."""
    fitted = [for_revision(b, revision) if type(b) is dict else b for b in blocks]
    if all(a is b for a, b in zip(fitted, blocks, strict=True)):
        return blocks
    return fitted


def fit_annotations(value: Any, revision: Revision) -> Any:
    """An ``annotations`` object (of a resource definition) as ``revision`` can carry it."""
    return _fit_annotations(value, revision)
