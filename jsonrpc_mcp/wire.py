"""Wire names of MCP in one place: methods, ``_meta`` keys, error codes, HTTP header names.

Everything that crosses the wire by name is spelled here once, so it greps against the
specification and a typo is an ``AttributeError`` rather than a silent mismatch. This module
imports nothing: every layer (server, client, HTTP, harness) may use it.
"""

from __future__ import annotations

# -- methods: lifecycle and utilities ---------------------------------------------------------
INITIALIZE = "initialize"
INITIALIZED = "notifications/initialized"
PING = "ping"
CANCELLED = "notifications/cancelled"
PROGRESS = "notifications/progress"
DISCOVER = "server/discover"  # 2026-07-28
LISTEN = "subscriptions/listen"  # 2026-07-28
SUBSCRIPTIONS_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"  # 2026-07-28

# -- methods: server features -----------------------------------------------------------------
TOOLS_LIST = "tools/list"
TOOLS_CALL = "tools/call"
RESOURCES_LIST = "resources/list"
RESOURCES_TEMPLATES_LIST = "resources/templates/list"
RESOURCES_READ = "resources/read"
RESOURCES_SUBSCRIBE = "resources/subscribe"
RESOURCES_UNSUBSCRIBE = "resources/unsubscribe"
PROMPTS_LIST = "prompts/list"
PROMPTS_GET = "prompts/get"
COMPLETE = "completion/complete"
SET_LEVEL = "logging/setLevel"
MESSAGE = "notifications/message"
TOOLS_LIST_CHANGED = "notifications/tools/list_changed"
RESOURCES_LIST_CHANGED = "notifications/resources/list_changed"
PROMPTS_LIST_CHANGED = "notifications/prompts/list_changed"
RESOURCE_UPDATED = "notifications/resources/updated"

# -- methods: client features (the server asks) -----------------------------------------------
CREATE_MESSAGE = "sampling/createMessage"
ELICIT = "elicitation/create"
ELICITATION_COMPLETE = "notifications/elicitation/complete"  # 2025-11-25
ROOTS_LIST = "roots/list"
ROOTS_LIST_CHANGED = "notifications/roots/list_changed"

# -- params: the cancellation notification names its request by this key ---------------------
CANCEL_ID_KEY = "requestId"

# -- _meta keys -------------------------------------------------------------------------------
PROGRESS_TOKEN = "progressToken"
META_PREFIX = "io.modelcontextprotocol/"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"  # 2026-07-28 request envelope
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"  # 2026-07-28 result _meta
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

# -- MCP error codes (the JSON-RPC standard codes live in jsonrpc_mcp.jsonrpc.errors) --------
SESSION_NOT_FOUND = -32001  # Streamable HTTP: an unknown or ended Mcp-Session-Id (with 404)
RESOURCE_NOT_FOUND = -32002  # before 2026-07-28; that revision uses -32602
HEADER_MISMATCH = -32020  # 2026-07-28 HTTP: Mcp-* headers disagree with the body
MISSING_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25

# -- HTTP header names (lower case, as ASGI and h11 carry them) -------------------------------
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"  # 2026-07-28
NAME_HEADER = "mcp-name"  # 2026-07-28
PARAM_HEADER_PREFIX = "mcp-param-"  # 2026-07-28
LAST_EVENT_ID = "last-event-id"

# -- media types ------------------------------------------------------------------------------
JSON_MEDIA = "application/json"
EVENT_STREAM_MEDIA = "text/event-stream"
