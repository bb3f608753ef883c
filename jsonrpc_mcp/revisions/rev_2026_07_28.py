"""MCP revision 2026-07-28: the stateless revision (no handshake; every request carries its envelope)."""

from .base import Revision

REVISION = Revision(
    version="2026-07-28",
    has_handshake=False,
    allows_batch=False,
    error_id_omittable=True,
    resource_not_found_code=-32602,
    input_errors_as_tool_results=True,
    has_completions_capability=True,
    has_tool_annotations=True,
    has_titles=True,
    has_output_schema=True,
    has_icons=True,
    has_audio_content=True,
    has_resource_links=True,
    has_elicitation=True,
    has_progress_message=True,
    has_definition_meta=True,
    has_content_meta=True,
    has_annotation_last_modified=True,
    has_completion_context=True,
    has_url_elicitation=True,
    has_extended_elicitation_schema=True,
    has_sampling_tools=True,
    tool_name_rules=True,
    has_streamable_http=True,
    has_protocol_version_header=True,
    has_sse_priming=False,
)
