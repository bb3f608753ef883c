"""The host side of the skills extension: list skills, and read their files verified.

A host that holds a skill entry (from ``skills/list`` or ``skills/get``) MUST check every file it
reads against the entry: the byte length against ``size``, the SHA-256 of the bytes against
``digest``, and for ``SKILL.md`` its parsed frontmatter against the entry's ``frontmatter``, field
by field. :func:`verify_file` does that for one ``resources/read`` result and raises
:class:`SkillVerificationError` on any difference, so that unverified content is never used.
Used through :meth:`Client.list_skills`, :meth:`Client.get_skill` and :meth:`Client.read_skill_file`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ._frontmatter import FrontmatterError, parse_frontmatter
from ._model import digest_of

__all__ = ["SkillVerificationError", "manifest_item", "verify_file"]


class SkillVerificationError(ValueError):
    """A skill file whose bytes or frontmatter do not match its entry: do not use it."""


def manifest_item(entry: dict[str, Any], uri: str) -> dict[str, Any]:
    """The ``{uri, digest, size}`` of ``uri`` in a skill entry's manifest."""
    resources = entry.get("resources")
    if not isinstance(resources, list):
        raise SkillVerificationError(f"the entry of {entry.get('uri')!r} publishes no file manifest")
    for item in resources:
        if isinstance(item, dict) and item.get("uri") == uri:
            return item
    raise SkillVerificationError(f"{uri!r} is not in the manifest of skill {entry.get('uri')!r}")


def verify_file(entry: dict[str, Any], uri: str, result: dict[str, Any]) -> bytes:
    """The bytes of ``uri`` from a ``resources/read`` result, checked against the skill entry."""
    item = manifest_item(entry, uri)
    contents = result.get("contents")
    if not isinstance(contents, list) or len(contents) != 1 or not isinstance(contents[0], dict):
        raise SkillVerificationError(f"reading {uri!r} did not return exactly one content item")
    content = contents[0]
    data: bytes
    if isinstance(content.get("text"), str):
        data = str(content["text"]).encode("utf-8")
    elif isinstance(content.get("blob"), str):
        try:
            data = base64.b64decode(str(content["blob"]), validate=True)
        except (binascii.Error, ValueError):
            raise SkillVerificationError(f"the blob of {uri!r} is not base64") from None
    else:
        raise SkillVerificationError(f"reading {uri!r} returned neither text nor a blob")
    if len(data) != item.get("size"):
        raise SkillVerificationError(f"{uri!r} is {len(data)} bytes; its entry says {item.get('size')!r}")
    if digest_of(data) != item.get("digest"):
        raise SkillVerificationError(f"{uri!r} does not match its digest {item.get('digest')!r}")
    if uri == entry.get("uri"):
        try:
            frontmatter = parse_frontmatter(data.decode("utf-8"))
        except (FrontmatterError, UnicodeDecodeError) as exc:
            raise SkillVerificationError(f"{uri!r}: {exc}") from None
        if not _same(frontmatter, entry.get("frontmatter")):
            raise SkillVerificationError(f"the frontmatter of {uri!r} differs from its entry's")
    return data


def _same(a: Any, b: Any) -> bool:
    """JSON equality, field by field (``True`` is not ``1``, ``1`` is ``1.0``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b
