"""A test-only revision, and the whole of what adding one takes: this file.

It is 2026-07-28 with one more method removed (``resources/templates/list``) and one error code
changed (a capability the client did not declare: -32099 instead of -32021). Dropped into
``jsonrpc_mcp/revisions/`` it is found by name; passed in ``Server(revisions=...)`` it is served.
"""

from dataclasses import replace

from jsonrpc_mcp.revisions.rev_2026_07_28 import REVISION as _PREVIOUS

REVISION = replace(
    _PREVIOUS,
    version="2099-01-01",
    methods=_PREVIOUS.methods - {"resources/templates/list"},
    missing_capability_code=-32099,
    http_error_status=(*_PREVIOUS.http_error_status, (-32099, 400)),
)
