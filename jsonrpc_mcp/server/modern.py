"""The names this module had before the stateless dispatcher moved to :mod:`._stateless` (kept for
one release): the wire names are in :mod:`jsonrpc_mcp.wire`, the errors in
:mod:`jsonrpc_mcp.errors`."""

from __future__ import annotations

from ..errors import MissingClientCapability, UnsupportedProtocolVersion
from ..wire import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION, SERVER_INFO
from ._stateless import finish, serve_checked, serve_modern

__all__ = [
    "CLIENT_CAPABILITIES",
    "CLIENT_INFO",
    "LOG_LEVEL",
    "PROTOCOL_VERSION",
    "SERVER_INFO",
    "MissingClientCapability",
    "UnsupportedProtocolVersion",
    "finish",
    "serve_checked",
    "serve_modern",
]
