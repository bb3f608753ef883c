"""MCP revision 2025-03-26."""

from .base import Revision

REVISION = Revision(
    version="2025-03-26",
    has_handshake=True,
    allows_batch=True,
    error_id_omittable=False,
    resource_not_found_code=-32002,
    input_errors_as_tool_results=False,
    has_completions_capability=True,
    has_tool_annotations=True,
    has_titles=False,
    has_output_schema=False,
    has_icons=False,
    has_audio_content=True,
    has_resource_links=False,
    has_elicitation=False,
    has_progress_message=True,
    has_definition_meta=False,
    has_content_meta=False,
    has_annotation_last_modified=False,
    has_completion_context=False,
    has_url_elicitation=False,
    has_extended_elicitation_schema=False,
    has_sampling_tools=False,
    tool_name_rules=False,
    has_streamable_http=True,
    has_protocol_version_header=False,
    has_sse_priming=False,
)
