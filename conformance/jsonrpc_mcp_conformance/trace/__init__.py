"""Learning from live traffic: a tap that annotates every MCP frame, and ``explain``.

``jsonrpc-mcp trace -- CMD`` (:mod:`.tap`) sits between a client and a stdio server, passes the
bytes through unchanged and annotates each frame (:mod:`.annotate`) with its meaning, its pairing and
latency, its specification page (:mod:`.catalogue`) and the rules it breaks. ``jsonrpc-mcp explain``
(:mod:`.explain`) does the same for one message, revision by revision.
"""

from .annotate import Frame, Tracer
from .explain import explain

__all__ = ["Frame", "Tracer", "explain"]
