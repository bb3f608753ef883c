"""Skills (SEP-2640): a skill's files, its manifest entry, and loading skills from disk or memory.

A skill is an Agent Skills directory: ``SKILL.md`` (YAML frontmatter with ``name`` and
``description``, then Markdown) and any supporting files. Served over MCP, the skill at skill path
``acme/billing/refunds`` (whose last segment is its ``name``) has the resource
``skill://acme/billing/refunds/SKILL.md``, and each supporting file the URI below
``skill://acme/billing/refunds/``. Its entry (``skills/list``, ``skills/get``) carries the URI, the
frontmatter as JSON, and the manifest: ``{uri, digest: "sha256:<hex>", size}`` for every file,
SKILL.md first. Everything is checked when a :class:`Skill` is made (:class:`SkillError`, a
:class:`RegistrationError`), and the files are read once: what a host reads back always matches the
digests it was given.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import RegistrationError
from ._frontmatter import FrontmatterError, parse_frontmatter

__all__ = [
    "EXTENSION_ID",
    "MAX_FILES",
    "MAX_TOTAL_SIZE",
    "SCHEME",
    "Skill",
    "SkillError",
    "SkillFile",
    "digest_of",
    "load_directory",
]

EXTENSION_ID = "io.modelcontextprotocol/skills"
SCHEME = "skill://"
SKILL_MD = "SKILL.md"
MAX_FILES = 512  # resource entries per skill, SKILL.md included (a SHOULD NOT exceed: refused)
MAX_TOTAL_SIZE = 16 * 1024 * 1024  # bytes summed over a skill's files (likewise)
RESERVED_METADATA_PREFIX = "io.modelcontextprotocol/"
_NAME = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")  # Agent Skills naming rules
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")  # an unreserved path segment (the first is a reg-name)
_TEXT_TYPES = {".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain"}


class SkillError(RegistrationError):
    """A skill that cannot be served: the message names the skill and what is wrong."""


def digest_of(data: bytes) -> str:
    """``sha256:<64 lowercase hex>`` of raw bytes, the digest format of skill manifests."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _mime_type(path: str, data: bytes) -> str:
    suffix = os.path.splitext(path)[1].lower()
    known = _TEXT_TYPES.get(suffix) or mimetypes.guess_type(path, strict=False)[0]
    if known:
        return known
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    return "text/plain"


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill: its path inside the skill (``references/FORMS.md``), bytes and type."""

    path: str
    data: bytes
    mime_type: str
    digest: str
    text: str | None  # the data as UTF-8 text, None for a binary file (served as a blob)

    @classmethod
    def make(cls, path: str, data: bytes, mime_type: str | None = None) -> SkillFile:
        """The file at ``path`` with content ``data``: its MIME type (guessed when not given), digest
        and, for UTF-8 content, its text."""
        try:
            text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        return cls(path, data, mime_type or _mime_type(path, data), digest_of(data), text)

    @property
    def size(self) -> int:
        """The file's size in bytes."""
        return len(self.data)


def _check_file_path(skill: str, path: str) -> str:
    if not isinstance(path, str) or not path or path.startswith("/") or "\\" in path:
        raise SkillError(f"skill {skill!r}: file path {path!r} must be relative, with '/' separators")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise SkillError(f"skill {skill!r}: file path {path!r} has an empty, '.' or '..' segment")
    return path


class Skill:
    """A skill ready to serve: its skill path, frontmatter, and files (SKILL.md first).

    Make one with :meth:`from_files` (in memory) or :meth:`from_directory` (an Agent Skills
    directory on disk), or load a whole skills directory with :func:`load_directory`.
    """

    __slots__ = ("_by_uri", "_entry", "base_uri", "files", "frontmatter", "path", "uri")

    def __init__(self, path: str, files: Iterable[SkillFile]) -> None:
        segments = path.split("/") if isinstance(path, str) else []
        if not segments or not all(_SEGMENT.fullmatch(s) and s not in (".", "..") for s in segments):
            raise SkillError(
                f"skill path {path!r} must be '/'-separated segments of letters, digits and '-._~'"
            )
        by_path: dict[str, SkillFile] = {}
        for file in files:
            _check_file_path(path, file.path)
            if file.path in by_path:
                raise SkillError(f"skill {path!r}: file {file.path!r} is given twice")
            by_path[file.path] = file
        skill_md = by_path.pop(SKILL_MD, None)
        if skill_md is None:
            raise SkillError(f"skill {path!r} has no {SKILL_MD} at its root")
        if skill_md.text is None:
            raise SkillError(f"skill {path!r}: {SKILL_MD} is not UTF-8 text")
        try:
            frontmatter = parse_frontmatter(skill_md.text)
        except FrontmatterError as exc:
            raise SkillError(f"skill {path!r}: {exc}") from None
        _check_frontmatter(path, segments[-1], frontmatter)
        if skill_md.mime_type != "text/markdown":
            skill_md = SkillFile(SKILL_MD, skill_md.data, "text/markdown", skill_md.digest, skill_md.text)
        ordered = [skill_md, *(by_path[p] for p in sorted(by_path))]
        if len(ordered) > MAX_FILES:
            raise SkillError(f"skill {path!r} has {len(ordered)} files; a skill serves at most {MAX_FILES}")
        total = sum(f.size for f in ordered)
        if total > MAX_TOTAL_SIZE:
            raise SkillError(
                f"skill {path!r} is {total} bytes; a skill serves at most {MAX_TOTAL_SIZE} bytes"
            )
        self.path = path
        self.frontmatter = frontmatter
        self.files: tuple[SkillFile, ...] = tuple(ordered)
        self.base_uri = SCHEME + path
        self.uri = self.file_uri(SKILL_MD)
        self._by_uri = {self.file_uri(f.path): f for f in ordered}
        self._entry: dict[str, Any] | None = None

    @classmethod
    def from_files(cls, path: str, files: Mapping[str, str | bytes]) -> Skill:
        """A skill from ``{relative path: text or bytes}``, e.g. ``{"SKILL.md": "---\\nname: ..."}``."""
        made = []
        for name, content in files.items():
            data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
            made.append(SkillFile.make(name, data))
        return cls(path, made)

    @classmethod
    def from_directory(cls, directory: str | os.PathLike[str], path: str | None = None) -> Skill:
        """The skill in ``directory`` (its files read now), at skill path ``path`` (default: the
        directory's name). Hidden files and folders (``.name``) are left out."""
        root = Path(directory)
        if not (root / SKILL_MD).is_file():
            raise SkillError(f"{str(root)!r} is not a skill directory: it has no {SKILL_MD}")
        skill_path = path if path is not None else root.resolve().name
        return cls(skill_path, _read_tree(root, skill_path))

    # -- what the extension serves -----------------------------------------------------------------
    @property
    def name(self) -> str:
        """The skill's ``name`` (from its frontmatter)."""
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        """The skill's ``description`` (from its frontmatter)."""
        return str(self.frontmatter["description"])

    def file_uri(self, file_path: str) -> str:
        """The URI of the skill's file at ``file_path`` (relative, ``/``-separated; each part quoted)."""
        return f"{self.base_uri}/{'/'.join(quote(part, safe='') for part in file_path.split('/'))}"

    def file(self, uri: str) -> SkillFile | None:
        """The file a ``skill://`` URI names, if it is one of this skill's."""
        return self._by_uri.get(uri)

    def entry(self) -> dict[str, Any]:
        """The skill entry of ``skills/list`` and ``skills/get`` (treat it as read-only)."""
        if self._entry is None:
            resources = [
                {"uri": self.file_uri(f.path), "digest": f.digest, "size": f.size} for f in self.files
            ]
            self._entry = {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}
        return self._entry

    def directories(self) -> dict[str, list[tuple[str, SkillFile | None]]]:
        """``directory URI -> [(child URI, file or None for a subdirectory)]``, the skill's own
        directory included: what ``resources/directory/read`` answers."""
        tree: dict[str, dict[str, SkillFile | None]] = {self.base_uri: {}}
        for file in self.files:
            parts = file.path.split("/")
            parent = self.base_uri
            for depth in range(1, len(parts)):
                child = self.file_uri("/".join(parts[:depth]))
                tree[parent].setdefault(child, None)
                tree.setdefault(child, {})
                parent = child
            tree[parent][self.file_uri(file.path)] = file
        return {uri: sorted(children.items()) for uri, children in tree.items()}

    def __repr__(self) -> str:
        return f"Skill({self.path!r}, files={len(self.files)})"


def _check_frontmatter(path: str, last_segment: str, frontmatter: dict[str, Any]) -> None:
    name = frontmatter.get("name")
    description = frontmatter.get("description")
    if not isinstance(name, str) or not name:
        raise SkillError(f"skill {path!r}: the frontmatter needs a non-empty string 'name'")
    if not isinstance(description, str) or not description.strip():
        raise SkillError(f"skill {path!r}: the frontmatter needs a non-empty string 'description'")
    if not _NAME.fullmatch(name):
        raise SkillError(
            f"skill {path!r}: name {name!r} breaks the Agent Skills naming rules (1-64 characters of "
            "a-z, 0-9 and '-', no leading, trailing or consecutive '-')"
        )
    if name != last_segment:
        raise SkillError(f"skill {path!r}: the last segment of the skill path must be its name {name!r}")
    if len(description) > 1024:
        raise SkillError(f"skill {path!r}: the description is {len(description)} characters (at most 1024)")
    metadata = frontmatter.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise SkillError(f"skill {path!r}: 'metadata' must be a mapping")
        reserved = sorted(k for k in metadata if k.startswith(RESERVED_METADATA_PREFIX))
        if reserved:
            raise SkillError(
                f"skill {path!r}: metadata keys under {RESERVED_METADATA_PREFIX!r} are reserved for MCP "
                f"extensions, and none is defined: {', '.join(reserved)}"
            )


def _read_tree(root: Path, skill: str) -> list[SkillFile]:
    files: list[SkillFile] = []
    real_root = root.resolve()
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(folder)
        for name in sorted(names):
            if name.startswith("."):
                continue
            full = here / name
            if not full.resolve().is_relative_to(real_root):
                raise SkillError(f"skill {skill!r}: {str(full)!r} links outside the skill directory")
            if not full.is_file():
                continue
            relative = full.relative_to(root).as_posix()
            if relative != SKILL_MD and relative.endswith("/" + SKILL_MD):
                raise SkillError(f"skill {skill!r}: skills cannot nest ({relative!r})")
            files.append(SkillFile.make(relative, full.read_bytes()))
    return files


def load_directory(directory: str | os.PathLike[str]) -> list[Skill]:
    """Every skill under a skills directory: each folder holding a SKILL.md is one, at the skill
    path of its place below ``directory`` (``pdf-processing``, ``acme/billing/refunds``)."""
    root = Path(directory)
    if not root.is_dir():
        raise SkillError(f"skills directory {str(root)!r} does not exist")
    skills: list[Skill] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(folder)
        if here != root and SKILL_MD in names:
            dirs[:] = []  # a skill's own folders are its files (and may not hold another skill)
            skills.append(Skill.from_directory(here, here.relative_to(root).as_posix()))
    return skills
