"""MCP revision 2026-07-28: the stateless revision.

It is 2025-11-25 without the handshake: every request carries its own envelope, there are no
sessions (so no SSE resumption or priming), and a missing resource is -32602.
"""

from dataclasses import replace

from .rev_2025_11_25 import REVISION as _PREVIOUS

REVISION = replace(
    _PREVIOUS,
    version="2026-07-28",
    has_handshake=False,
    resource_not_found_code=-32602,
    has_sse_priming=False,
)
