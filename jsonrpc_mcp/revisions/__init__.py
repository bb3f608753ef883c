"""The MCP revisions this implementation speaks, oldest first, and version negotiation.

The revisions are found, not listed: every module ``rev_YYYY_MM_DD`` in this package defines one
``REVISION``, so adding a revision is adding a file.
"""

from __future__ import annotations

import pkgutil
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


def discover() -> tuple[Revision, ...]:
    """The ``REVISION`` of every ``rev_*`` module of this package, by version. Found through the
    import system (:func:`pkgutil.iter_modules`), not the file system, so a zip or a bytecode-only
    install finds the same revisions as the source tree."""
    found: list[Revision] = []
    for info in pkgutil.iter_modules(__path__, f"{__name__}."):
        if info.name.rpartition(".")[2].startswith("rev_"):
            __import__(info.name)
            revision = getattr(sys.modules[info.name], "REVISION", None)
            if not isinstance(revision, Revision):
                raise TypeError(f"{info.name} defines no REVISION")
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
