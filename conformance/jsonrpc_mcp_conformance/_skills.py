"""The ``$skills`` pattern: what a list of SEP-2640 skill entries must (or should) agree on with
itself, rules that relate one member of an entry to another (the pattern language has no way to)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["skill_name", "skills_problems"]

SKILL_MD = "SKILL.md"
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
_NAME = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")  # Agent Skills naming rules
_REG_NAME = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")  # RFC 3986 reg-name
_RESERVED = "io.modelcontextprotocol/"


def _segments(uri: str) -> list[str]:
    _, sep, rest = uri.partition("://")
    return [s for s in rest.split("/") if s] if sep else []


def skill_name(uri: str) -> str | None:
    """The last ``<skill-path>`` segment of a ``<scheme>://<skill-path>/SKILL.md`` URI."""
    segments = _segments(uri)
    return segments[-2] if len(segments) >= 2 and segments[-1] == SKILL_MD else None


def skills_problems(entries: Any, level: str) -> list[str]:
    """The problems of ``entries`` (a skills/list listing) at ``level``, "must" or "should"."""
    if not isinstance(entries, list):
        return [f"expected an array of skill entries, got {type(entries).__name__}"]
    valid = [e for e in entries if isinstance(e, dict) and isinstance(e.get("uri"), str)]
    return _must(valid) if level == "must" else _should(valid)


def _must(entries: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    for entry in entries:
        uri: str = entry["uri"]
        name, frontmatter = skill_name(uri), entry.get("frontmatter")
        declared = frontmatter.get("name") if isinstance(frontmatter, dict) else None
        if name is None:
            problems.append(
                f"{uri}: not <scheme>://<skill-path>/SKILL.md (its skill name is not recoverable)"
            )
        else:
            if name != declared:
                problems.append(
                    f"{uri}: last skill-path segment {name!r} is not frontmatter.name {declared!r}"
                )
            if not _NAME.match(name):
                problems.append(f"{uri}: skill name {name!r} breaks the naming rules (1-64 of a-z 0-9 -)")
        files = entry.get("resources")
        if not isinstance(files, list):
            continue  # ("dynamic": no manifest to judge)
        listed = [f.get("uri") for f in files if isinstance(f, dict)]
        if uri not in listed:
            problems.append(f"{uri}: its resources do not list the skill's own SKILL.md")
        twice = sorted({str(u) for u in listed if listed.count(u) > 1})
        if twice:
            problems.append(f"{uri}: its resources list {', '.join(twice)} more than once")
        directory = uri[: -len(SKILL_MD)]
        outside = [
            str(u) for u in listed if u != uri and not (isinstance(u, str) and u.startswith(directory))
        ]
        if outside:
            problems.append(f"{uri}: resources outside the skill's directory: {', '.join(outside[:5])}")
    return problems


def _should(entries: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    names: dict[str, list[str]] = {}
    for entry in entries:
        uri: str = entry["uri"]
        if not uri.startswith("skill://"):
            problems.append(f"{uri}: not a skill:// URI")
        segments = _segments(uri)
        if segments and not _REG_NAME.match(segments[0]):
            problems.append(f"{uri}: authority {segments[0]!r} is not an RFC 3986 reg-name")
        name = skill_name(uri)
        if name is not None:
            names.setdefault(name, []).append(uri)
        frontmatter = entry.get("frontmatter")
        metadata = frontmatter.get("metadata") if isinstance(frontmatter, dict) else None
        for key in metadata if isinstance(metadata, dict) else {}:
            if key.startswith(_RESERVED):
                problems.append(f"{uri}: frontmatter.metadata key {key!r} is under the reserved prefix")
        files = entry.get("resources")
        if isinstance(files, list):
            if len(files) > MAX_FILES:
                problems.append(f"{uri}: {len(files)} files (more than {MAX_FILES})")
            total = sum(f["size"] for f in files if isinstance(f, dict) and isinstance(f.get("size"), int))
            if total > MAX_BYTES:
                problems.append(f"{uri}: {total} bytes in all (more than 16 MiB)")
    for name, uris in names.items():
        if len(uris) > 1:
            problems.append(f"the name {name!r} is served at {' and '.join(uris)}")
    return problems
