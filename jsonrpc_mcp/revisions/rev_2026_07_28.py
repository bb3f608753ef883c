"""MCP revision 2026-07-28: the stateless revision.

It is 2025-11-25 without the handshake: every request carries its own envelope in ``params._meta``,
there are no sessions (so no SSE resumption or priming), ``initialize``, ``ping``, logging levels and
resource subscriptions are gone (``server/discover`` and ``subscriptions/listen`` take their place),
a missing resource is -32602, and tools, prompts and resources ask the client for input with
multi round-trip results instead of requests.
"""

from dataclasses import replace

from .. import wire
from .base import HANDSHAKE_METHODS
from .rev_2025_11_25 import REVISION as _PREVIOUS

_REMOVED = {wire.INITIALIZE, wire.PING, wire.SET_LEVEL, wire.RESOURCES_SUBSCRIBE, wire.RESOURCES_UNSUBSCRIBE}

REVISION = replace(
    _PREVIOUS,
    version="2026-07-28",
    has_handshake=False,
    resource_not_found_code=-32602,
    has_sse_priming=False,
    methods=(HANDSHAKE_METHODS - _REMOVED) | {wire.DISCOVER, wire.LISTEN},
    has_result_type=True,
    cacheable_methods=frozenset(
        {
            wire.DISCOVER,
            wire.TOOLS_LIST,
            wire.PROMPTS_LIST,
            wire.RESOURCES_LIST,
            wire.RESOURCES_TEMPLATES_LIST,
            wire.RESOURCES_READ,
        }
    ),
    input_request_methods=frozenset({wire.TOOLS_CALL, wire.PROMPTS_GET, wire.RESOURCES_READ}),
    missing_capability_code=wire.MISSING_CLIENT_CAPABILITY,
    unsupported_version_code=wire.UNSUPPORTED_PROTOCOL_VERSION,
    has_routing_headers=True,
    header_mismatch_code=wire.HEADER_MISMATCH,
    http_error_status=(
        (-32700, 400),
        (-32600, 400),
        (-32601, 404),
        (wire.HEADER_MISMATCH, 400),
        (wire.MISSING_CLIENT_CAPABILITY, 400),
        (wire.UNSUPPORTED_PROTOCOL_VERSION, 400),
    ),
)
