"""The MCP revisions this implementation speaks, oldest first, and version negotiation."""

from __future__ import annotations

from .base import Revision
from .rev_2024_11_05 import REVISION as REV_2024_11_05
from .rev_2025_03_26 import REVISION as REV_2025_03_26
from .rev_2025_06_18 import REVISION as REV_2025_06_18
from .rev_2025_11_25 import REVISION as REV_2025_11_25
from .rev_2026_07_28 import REVISION as REV_2026_07_28

__all__ = [
    "ALL_REVISIONS",
    "HANDSHAKE_REVISIONS",
    "LATEST_HANDSHAKE",
    "MODERN_REVISIONS",
    "REVISIONS",
    "Revision",
    "get_revision",
    "negotiate",
]

HANDSHAKE_REVISIONS: tuple[Revision, ...] = (REV_2024_11_05, REV_2025_03_26, REV_2025_06_18, REV_2025_11_25)
MODERN_REVISIONS: tuple[Revision, ...] = (REV_2026_07_28,)
ALL_REVISIONS: tuple[Revision, ...] = HANDSHAKE_REVISIONS + MODERN_REVISIONS
REVISIONS: dict[str, Revision] = {r.version: r for r in ALL_REVISIONS}
LATEST_HANDSHAKE = HANDSHAKE_REVISIONS[-1]


def get_revision(version: str) -> Revision | None:
    """The revision with exactly this version string, if we speak it."""
    return REVISIONS.get(version)


def negotiate(requested: object, supported: tuple[Revision, ...] = HANDSHAKE_REVISIONS) -> Revision:
    """The handshake rule: the requested revision when supported, otherwise our latest handshake one."""
    handshake = [revision for revision in supported if revision.has_handshake]
    if isinstance(requested, str):
        for revision in handshake:
            if revision.version == requested:
                return revision
    return handshake[-1]
