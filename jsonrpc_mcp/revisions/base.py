"""What a protocol revision is, as data.

Each published MCP revision is one module (``rev_YYYY_MM_DD.py``) that builds one :class:`Revision`.
Code above this layer branches on these flags and never compares version strings.
"""

from __future__ import annotations

from dataclasses import dataclass


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
