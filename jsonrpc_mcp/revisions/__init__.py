"""The MCP revisions this implementation speaks, oldest first, and version negotiation.

The revisions are found, not listed: every module ``rev_YYYY_MM_DD.py`` in this package defines one
``REVISION``, so adding a revision is adding a file.
"""

from __future__ import annotations

import os
import sys

from .base import Revision

__all__ = [
    "ALL_REVISIONS",
    "DEFAULT_HTTP_VERSION",
    "HANDSHAKE_REVISIONS",
    "LATEST_HANDSHAKE",
    "MODERN_REVISIONS",
    "REVISIONS",
    "Revision",
    "assumed_http_revision",
    "discover",
    "get_revision",
    "negotiate",
]


def discover(directory: str | None = None, package: str = __name__) -> tuple[Revision, ...]:
    """The ``REVISION`` of every ``rev_*.py`` module of ``package`` (in ``directory``), by version."""
    found: list[Revision] = []
    for name in os.listdir(directory or os.path.dirname(__file__)):
        if name.startswith("rev_") and name.endswith(".py"):
            module = f"{package}.{name[:-3]}"
            __import__(module)
            revision = getattr(sys.modules[module], "REVISION", None)
            if not isinstance(revision, Revision):
                raise TypeError(f"{module} defines no REVISION")
            found.append(revision)
    return tuple(sorted(found, key=lambda r: r.version))


ALL_REVISIONS: tuple[Revision, ...] = discover()
HANDSHAKE_REVISIONS: tuple[Revision, ...] = tuple(r for r in ALL_REVISIONS if r.has_handshake)
MODERN_REVISIONS: tuple[Revision, ...] = tuple(r for r in ALL_REVISIONS if not r.has_handshake)
REVISIONS: dict[str, Revision] = {r.version: r for r in ALL_REVISIONS}
LATEST_HANDSHAKE = HANDSHAKE_REVISIONS[-1]


def assumed_http_revision(supported: tuple[Revision, ...]) -> Revision:
    """What a handshake-era Streamable HTTP request without ``MCP-Protocol-Version`` is taken to
    speak: the latest of ``supported`` with Streamable HTTP but not yet that header (2025-03-26),
    else the latest handshake revision, else the latest. (A stateless request names its revision
    in its body.)"""
    handshake = [r for r in supported if r.has_handshake] or list(supported)
    for revision in reversed(handshake):
        if revision.has_streamable_http and not revision.has_protocol_version_header:
            return revision
    return handshake[-1]


# the version a header-less Streamable HTTP request is taken to speak, among all we know
DEFAULT_HTTP_VERSION = assumed_http_revision(ALL_REVISIONS).version


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
