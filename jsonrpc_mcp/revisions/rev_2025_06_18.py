"""MCP revision 2025-06-18."""

from .base import Revision

REVISION = Revision(
    version="2025-06-18",
    has_handshake=True,
    allows_batch=False,
    error_id_omittable=False,
    resource_not_found_code=-32002,
    input_errors_as_tool_results=False,
    has_completions_capability=True,
    has_tool_annotations=True,
    has_titles=True,
    has_output_schema=True,
    has_icons=False,
    has_audio_content=True,
    has_resource_links=True,
    has_elicitation=True,
    has_progress_message=True,
    has_definition_meta=True,
    has_content_meta=True,
    has_annotation_last_modified=True,
    has_completion_context=True,
    has_url_elicitation=False,
    has_extended_elicitation_schema=False,
    has_sampling_tools=False,
    tool_name_rules=False,
    has_streamable_http=True,
    has_protocol_version_header=True,
    has_sse_priming=False,
)
