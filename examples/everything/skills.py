"""The skills of the everything server (SEP-2640): the Agent Skills directory beside this file,
and one skill made in memory."""

from __future__ import annotations

from pathlib import Path

from jsonrpc_mcp import Server
from jsonrpc_mcp.skills import Skill, Skills

SKILLS_DIR = Path(__file__).with_name("skills")

RELEASE_NOTES = """\
---
name: release-notes
description: Write release notes from a list of merged changes, grouped by kind. Use when preparing a release.
---

# Release notes

Group the changes under **Added**, **Changed**, **Fixed** and **Removed**, newest release first.
One line per change, in the imperative, naming what a user notices rather than the code that changed.
See `TEMPLATE.md` for the layout.
"""

TEMPLATE = """\
## [VERSION] - YYYY-MM-DD

### Added
- ...

### Fixed
- ...
"""


def add_skill_fixtures(server: Server) -> Skills:
    """Serve the skills on ``server`` (``skills/list``, ``skills/get``, their files as resources)."""
    in_memory = Skill.from_files("release-notes", {"SKILL.md": RELEASE_NOTES, "TEMPLATE.md": TEMPLATE})
    skills = Skills(SKILLS_DIR, in_memory)
    server.add_extension(skills)
    return skills
