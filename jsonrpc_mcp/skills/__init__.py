"""Skills over MCP (SEP-2640, the ``io.modelcontextprotocol/skills`` extension).

Serve an Agent Skills directory (``<name>/SKILL.md`` and supporting files) with
``server.add_extension(Skills("skills"))``; see :mod:`._extension` for what it serves and
:mod:`._model` for the skill model. The names are loaded on first use (PEP 562): a client that
only checks digests and frontmatter does not load the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._client import SkillVerificationError, verify_file
    from ._extension import Skills
    from ._frontmatter import FrontmatterError, parse_frontmatter
    from ._model import EXTENSION_ID, Skill, SkillError, SkillFile, digest_of, load_directory

__all__ = [
    "EXTENSION_ID",
    "FrontmatterError",
    "Skill",
    "SkillError",
    "SkillFile",
    "SkillVerificationError",
    "Skills",
    "digest_of",
    "load_directory",
    "parse_frontmatter",
    "verify_file",
]

if not TYPE_CHECKING:  # hidden from type checkers, which would take any unknown name for Any
    # the TYPE_CHECKING block as data, so no source is read (tests/test_lazy.py: they agree)
    __getattr__, __dir__ = lazy_names(
        globals(),
        {
            "._client": ("SkillVerificationError", "verify_file"),
            "._extension": ("Skills",),
            "._frontmatter": ("FrontmatterError", "parse_frontmatter"),
            "._model": ("EXTENSION_ID", "Skill", "SkillError", "SkillFile", "digest_of", "load_directory"),
        },
    )
