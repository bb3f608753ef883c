"""Deprecated location of the HTTP server's Host/Origin policy: use :mod:`jsonrpc_mcp.http`.

The code now lives in ``jsonrpc_mcp/http/_security.py``, with the rest of the server side of MCP
over HTTP; this module re-exports its names for one release.
"""

from __future__ import annotations

from ...http import _security
from ...http._security import *  # noqa: F403  (exactly its __all__)

__all__ = _security.__all__
