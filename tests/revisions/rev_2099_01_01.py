"""A test-only revision, and the whole of what adding one takes: this file.

It is 2026-07-28 with one more method removed (``resources/templates/list``), its error codes
changed (a capability the client did not declare: -32099 instead of -32021; a revision not served:
-32097 instead of -32022; HTTP headers that disagree with the body: -32098 instead of -32020) and
no routing headers over HTTP (``Mcp-Method``, ``Mcp-Name``: neither required nor checked). Dropped
into ``jsonrpc_mcp/revisions/`` it is found by name; passed in ``Server(revisions=...)`` it is
served, in memory, over stdio and over HTTP.
"""

from dataclasses import replace

from jsonrpc_mcp.revisions.rev_2026_07_28 import REVISION as _PREVIOUS

REVISION = replace(
    _PREVIOUS,
    version="2099-01-01",
    methods=_PREVIOUS.methods - {"resources/templates/list"},
    missing_capability_code=-32099,
    unsupported_version_code=-32097,
    has_routing_headers=False,
    header_mismatch_code=-32098,
    http_error_status=(*_PREVIOUS.http_error_status, (-32099, 400), (-32097, 400), (-32098, 400)),
)
