"""What a protocol revision is, as data.

Each published MCP revision is one module (``rev_YYYY_MM_DD.py``) that builds one :class:`Revision`;
the package finds them by name, so a new revision is a new file. Code above this layer branches on
these fields and never compares version strings: everything that differs between revisions (which
methods exist, which results are cacheable, which requests may ask the client for input, the error
code of each case, the HTTP status of each error, header rules, batching, content types, whether
results carry ``resultType``) is a field here. (The envelope's ``_meta`` keys are wire names, in
:mod:`jsonrpc_mcp.wire`.)
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import wire

# The requests a client may send in every handshake revision (2024-11-05 .. 2025-11-25).
HANDSHAKE_METHODS = frozenset(
    {
        wire.INITIALIZE,
        wire.PING,
        wire.TOOLS_LIST,
        wire.TOOLS_CALL,
        wire.RESOURCES_LIST,
        wire.RESOURCES_TEMPLATES_LIST,
        wire.RESOURCES_READ,
        wire.RESOURCES_SUBSCRIBE,
        wire.RESOURCES_UNSUBSCRIBE,
        wire.PROMPTS_LIST,
        wire.PROMPTS_GET,
        wire.SET_LEVEL,
        wire.COMPLETE,
    }
)


@dataclass(frozen=True, slots=True)
class Revision:
    """The rules of one MCP revision that the implementation needs to know."""

    version: str
    # lifecycle
    has_handshake: bool
    # JSON-RPC profile
    allows_batch: bool
    error_id_omittable: bool  # an error for an unreadable request may leave "id" out
    # errors
    resource_not_found_code: int
    input_errors_as_tool_results: bool  # SEP-1303: schema violations are isError results
    # capabilities and fields that exist in this revision
    has_completions_capability: bool
    has_tool_annotations: bool
    has_titles: bool
    has_output_schema: bool
    has_icons: bool
    has_audio_content: bool
    has_resource_links: bool
    has_elicitation: bool
    has_progress_message: bool
    has_definition_meta: bool  # "_meta" on Tool/Resource/Prompt definitions and resource contents
    has_content_meta: bool  # "_meta" on content blocks (text, image, audio, resource, resource_link)
    has_annotation_last_modified: bool  # Annotations.lastModified
    has_completion_context: bool  # completion/complete carries context.arguments
    has_url_elicitation: bool  # elicitation mode "url", notifications/elicitation/complete, -32042
    has_extended_elicitation_schema: bool  # form fields: defaults, titled and multi-select enums
    has_sampling_tools: bool  # sampling/createMessage with tools / toolChoice
    tool_name_rules: bool  # 2025-11-25 naming guidance (1-128 chars of [A-Za-z0-9_.-])
    # HTTP
    has_streamable_http: bool
    has_protocol_version_header: bool
    has_sse_priming: bool  # 2025-11-25: an SSE stream opens with an id-only event and a retry field
    # methods: the requests a client may send (anything else is -32601 Method not found)
    methods: frozenset[str] = HANDSHAKE_METHODS
    # -- the stateless revisions' rules (2026-07-28 on); empty or None in the handshake revisions --
    has_result_type: bool = False  # every result says "resultType" and carries the server's info
    cacheable_methods: frozenset[str] = frozenset()  # complete results carry ttlMs and cacheScope
    input_request_methods: frozenset[str] = frozenset()  # may answer with an InputRequiredResult
    missing_capability_code: int | None = None  # a handler needs a capability the client lacks
    unsupported_version_code: int | None = None  # the envelope names a revision not served
    has_routing_headers: bool = False  # Streamable HTTP: Mcp-Method, Mcp-Name, Mcp-Param-* headers
    header_mismatch_code: int | None = None  # ... that disagree with the body
    # the HTTP status of a JSON answer carrying an error, as (code, status) pairs; others: 200
    http_error_status: tuple[tuple[int, int], ...] = ()

    def status_for(self, code: int) -> int:
        """The HTTP status of a JSON answer carrying an error with this code."""
        for known, status in self.http_error_status:
            if known == code:
                return status
        return 200
