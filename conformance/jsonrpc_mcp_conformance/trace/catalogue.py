"""What each MCP method is: who sends it, what it means, where the specification says so.

The availability of the requests a client sends comes from the revisions themselves
(:attr:`jsonrpc_mcp.revisions.Revision.methods`); this table adds what the revisions do not carry:
the other direction, notifications, a one-line meaning for a learner, what answers a request, and
the specification page. Where the revision table does not say whether a method exists, its
``available`` predicate asks the revision's own flags (``has_handshake``, ``has_elicitation``...),
never its version string.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jsonrpc_mcp import wire
from jsonrpc_mcp.revisions import ALL_REVISIONS, REVISIONS, Revision

__all__ = [
    "CATALOGUE",
    "EXTENSIONS",
    "ExtensionEntry",
    "ExtensionMethod",
    "Method",
    "defined_in",
    "earlier",
    "extension_method",
    "revisions_of",
    "spec_url",
]

SPEC_ROOT = "https://modelcontextprotocol.io/specification"
_ORDER = {r.version: i for i, r in enumerate(ALL_REVISIONS)}  # the revisions, oldest first


def _always(revision: Revision) -> bool:
    return True


def _handshake(revision: Revision) -> bool:  # what went with sessions and server-to-client requests
    return revision.has_handshake


def _stateless(revision: Revision) -> bool:
    return not revision.has_handshake


def _elicitation(revision: Revision) -> bool:
    return revision.has_handshake and revision.has_elicitation


def _url_elicitation(revision: Revision) -> bool:
    return revision.has_handshake and revision.has_url_elicitation


@dataclass(frozen=True)
class Method:
    name: str
    sender: str  # "client", "server" or "either"
    kind: str  # "request" or "notification"
    meaning: str
    answer: str  # what the other side sends back ("" for a notification)
    page: str  # the specification page, under /specification/<revision>/
    modern_page: str = ""  # where the stateless revisions moved it, if they did
    available: Callable[[Revision], bool] = _always  # in which revisions it exists
    client_request: bool = False  # availability follows Revision.methods instead


CATALOGUE: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            wire.INITIALIZE,
            "client",
            "request",
            "opens a session: the client offers a protocol version, its capabilities and its info",
            "the server's chosen version, capabilities, serverInfo and instructions",
            "basic/lifecycle",
            client_request=True,
        ),
        Method(
            wire.INITIALIZED,
            "client",
            "notification",
            "the client has read the initialize result; normal operation begins",
            "",
            "basic/lifecycle",
            available=_handshake,
        ),
        Method(
            wire.PING,
            "either",
            "request",
            "checks that the other side is alive",
            "an empty result, promptly",
            "basic/utilities/ping",
            client_request=True,
        ),
        Method(
            wire.CANCELLED,
            "either",
            "notification",
            "the sender no longer wants the answer to one of its requests (params.requestId)",
            "",
            "basic/utilities/cancellation",
            modern_page="basic/patterns/cancellation",
        ),
        Method(
            wire.PROGRESS,
            "either",
            "notification",
            "progress of a request that asked for it with _meta.progressToken",
            "",
            "basic/utilities/progress",
            modern_page="basic/patterns/progress",
        ),
        Method(
            wire.DISCOVER,
            "client",
            "request",
            "asks which versions, capabilities and instructions the server has (no session)",
            "supportedVersions, capabilities, serverInfo in _meta, with ttlMs and cacheScope",
            "server/discover",
            client_request=True,
        ),
        Method(
            wire.LISTEN,
            "client",
            "request",
            "opens a long-lived stream of the notifications the client names",
            "notifications/subscriptions/acknowledged first, then the notifications asked for",
            "basic/patterns/subscriptions",
            client_request=True,
        ),
        Method(
            wire.SUBSCRIPTIONS_ACKNOWLEDGED,
            "server",
            "notification",
            "which of the requested notification types the server will send on this listen stream",
            "",
            "basic/patterns/subscriptions",
            available=_stateless,
        ),
        Method(
            wire.TOOLS_LIST,
            "client",
            "request",
            "lists the tools the model may call (paginated)",
            "tools, and nextCursor while there are more",
            "server/tools",
            client_request=True,
        ),
        Method(
            wire.TOOLS_CALL,
            "client",
            "request",
            "calls a tool with arguments",
            "content blocks (and structuredContent); a failing tool says isError: true",
            "server/tools",
            client_request=True,
        ),
        Method(
            wire.RESOURCES_LIST,
            "client",
            "request",
            "lists the resources the server offers",
            "resources, and nextCursor while there are more",
            "server/resources",
            client_request=True,
        ),
        Method(
            wire.RESOURCES_TEMPLATES_LIST,
            "client",
            "request",
            "lists URI templates of resources",
            "resourceTemplates, and nextCursor while there are more",
            "server/resources",
            client_request=True,
        ),
        Method(
            wire.RESOURCES_READ,
            "client",
            "request",
            "reads one resource by URI",
            "contents (text or base64 blob)",
            "server/resources",
            client_request=True,
        ),
        Method(
            wire.RESOURCES_SUBSCRIBE,
            "client",
            "request",
            "asks to be told when a resource changes",
            "an empty result; later notifications/resources/updated",
            "server/resources",
            client_request=True,
        ),
        Method(
            wire.RESOURCES_UNSUBSCRIBE,
            "client",
            "request",
            "ends a resource subscription",
            "an empty result",
            "server/resources",
            client_request=True,
        ),
        Method(
            wire.PROMPTS_LIST,
            "client",
            "request",
            "lists the prompt templates the server offers",
            "prompts, and nextCursor while there are more",
            "server/prompts",
            client_request=True,
        ),
        Method(
            wire.PROMPTS_GET,
            "client",
            "request",
            "fills a prompt template with arguments",
            "description and messages",
            "server/prompts",
            client_request=True,
        ),
        Method(
            wire.COMPLETE,
            "client",
            "request",
            "asks for completions of a prompt or resource argument",
            "completion.values (at most 100), total, hasMore",
            "server/utilities/completion",
            client_request=True,
        ),
        Method(
            wire.SET_LEVEL,
            "client",
            "request",
            "sets the lowest log level the server should send",
            "an empty result",
            "server/utilities/logging",
            client_request=True,
        ),
        Method(
            wire.MESSAGE,
            "server",
            "notification",
            "a log message from the server",
            "",
            "server/utilities/logging",
        ),
        Method(
            wire.TOOLS_LIST_CHANGED,
            "server",
            "notification",
            "the list of tools changed",
            "",
            "server/tools",
        ),
        Method(
            wire.RESOURCES_LIST_CHANGED,
            "server",
            "notification",
            "the list of resources changed",
            "",
            "server/resources",
        ),
        Method(
            wire.PROMPTS_LIST_CHANGED,
            "server",
            "notification",
            "the list of prompts changed",
            "",
            "server/prompts",
        ),
        Method(
            wire.RESOURCE_UPDATED,
            "server",
            "notification",
            "a subscribed resource changed",
            "",
            "server/resources",
        ),
        Method(
            wire.CREATE_MESSAGE,
            "server",
            "request",
            "asks the client's model for a completion",
            "role, content, model and stopReason",
            "client/sampling",
            available=_handshake,
        ),
        Method(
            wire.ELICIT,
            "server",
            "request",
            "asks the user for input (a form, or a URL to visit)",
            "action (accept, decline, cancel) and content",
            "client/elicitation",
            available=_elicitation,
        ),
        Method(
            wire.ELICITATION_COMPLETE,
            "server",
            "notification",
            "an out-of-band (URL mode) elicitation has finished",
            "",
            "client/elicitation",
            available=_url_elicitation,
        ),
        Method(
            wire.ROOTS_LIST,
            "server",
            "request",
            "asks which filesystem roots the client exposes",
            "roots (file:// URIs with names)",
            "client/roots",
            available=_handshake,
        ),
        Method(
            wire.ROOTS_LIST_CHANGED,
            "client",
            "notification",
            "the client's roots changed",
            "",
            "client/roots",
            available=_handshake,
        ),
    )
}


def defined_in(method: str, revision: Revision) -> bool:
    """Whether ``method`` exists in ``revision`` (an unknown method exists in none)."""
    entry = CATALOGUE.get(method)
    if entry is None:
        return False
    if entry.client_request:
        return method in revision.methods
    return entry.available(revision)


def revisions_of(method: str) -> list[str]:
    """The revisions (of those this project speaks) that define ``method``."""
    return [r.version for r in ALL_REVISIONS if defined_in(method, r)]


def spec_url(method: str, revision: str) -> str:
    """The specification page of ``method`` in ``revision`` (the lifecycle page if unknown)."""
    entry = CATALOGUE.get(method)
    if entry is None:
        return f"{SPEC_ROOT}/{revision}/basic"
    known = revisions_of(method)
    if known and revision not in known:  # e.g. ping under 2026-07-28: where it was last defined
        later = _ORDER.get(revision, len(_ORDER)) > _ORDER[known[-1]]  # (an unknown one: a newer draft)
        revision = known[-1] if later else known[0]
    spoken = REVISIONS.get(revision)
    stateless = spoken is not None and not spoken.has_handshake
    page = entry.modern_page if entry.modern_page and stateless else entry.page
    return f"{SPEC_ROOT}/{revision}/{page}"


def earlier(version: str, other: str) -> bool:
    """Whether revision ``version`` comes before ``other`` among the revisions this project speaks."""
    return _ORDER.get(version, len(_ORDER)) < _ORDER.get(other, len(_ORDER))


# -- extensions (SEP-2133): negotiated in capabilities.extensions, outside the revisions -----------------
@dataclass(frozen=True)
class ExtensionMethod:
    """A method an extension defines. ``sender`` and ``receiver`` name the parties as the extension
    does (MCP Apps: the view and its host, over ``postMessage``, never the MCP client and server)."""

    name: str
    sender: str
    receiver: str
    kind: str  # "request" or "notification"
    meaning: str
    answer: str = ""


@dataclass(frozen=True)
class ExtensionEntry:
    """An extension: its identifier, where it is specified, and the fields and methods it adds."""

    id: str
    name: str
    spec: str
    summary: str
    fields: dict[str, str]  # where in an MCP message -> what it means
    methods: dict[str, ExtensionMethod]
    on_the_wire: bool  # whether its methods travel between the MCP client and server


APPS_SPEC = "https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx"


def _apps_methods(*methods: ExtensionMethod) -> dict[str, ExtensionMethod]:
    return {m.name: m for m in methods}


APPS = ExtensionEntry(
    id="io.modelcontextprotocol/ui",
    name="MCP Apps (SEP-1865)",
    spec=APPS_SPEC,
    summary="a tool links to an HTML view (a ui:// resource) that the host renders in a sandboxed "
    "iframe; the view talks JSON-RPC with the host over postMessage",
    fields={
        'capabilities.extensions["io.modelcontextprotocol/ui"]': "the side supports MCP Apps; a client "
        'lists the view MIME types it renders: {"mimeTypes": ["text/html;profile=mcp-app"]}',
        "tool _meta.ui.resourceUri": "the view (a ui:// resource, read with resources/read) the host "
        "renders the tool's results in",
        "tool _meta.ui.visibility": 'who may use the tool: "model" (the agent), "app" (the view, same '
        'server only); both when omitted; without "model" a host keeps it from the agent',
        "resource mimeType text/html;profile=mcp-app": "an MCP Apps view: an HTML5 document in text or "
        "blob, under a ui:// URI",
        "resource _meta.ui": "the view's sandbox requests: csp (connectDomains, resourceDomains, "
        "frameDomains, baseUriDomains), permissions (camera, microphone, geolocation, clipboardWrite), "
        "domain, prefersBorder",
    },
    methods=_apps_methods(
        ExtensionMethod(
            "ui/initialize",
            "view",
            "host",
            "request",
            "the view's handshake: its protocol version, appInfo and appCapabilities",
            "the host's capabilities, hostInfo and hostContext (theme, display mode, container size...)",
        ),
        ExtensionMethod(
            "ui/notifications/initialized", "view", "host", "notification", "the view is ready for data"
        ),
        ExtensionMethod(
            "ui/notifications/tool-input",
            "host",
            "view",
            "notification",
            "the complete arguments of the tool call the view belongs to",
        ),
        ExtensionMethod(
            "ui/notifications/tool-input-partial",
            "host",
            "view",
            "notification",
            "the tool call's arguments so far, while the model is still writing them",
        ),
        ExtensionMethod(
            "ui/notifications/tool-result",
            "host",
            "view",
            "notification",
            "the tool's result (content, structuredContent, _meta) once the call ended",
        ),
        ExtensionMethod(
            "ui/notifications/tool-cancelled",
            "host",
            "view",
            "notification",
            "the tool call was cancelled (params.reason may say why)",
        ),
        ExtensionMethod(
            "ui/resource-teardown",
            "host",
            "view",
            "request",
            "the host is about to remove the view (it may save its state first)",
            "an empty result, when the view is ready to go",
        ),
        ExtensionMethod(
            "ui/notifications/request-teardown",
            "view",
            "host",
            "notification",
            "the view asks the host to remove it",
        ),
        ExtensionMethod(
            "ui/notifications/size-changed",
            "view",
            "host",
            "notification",
            "the view's content size changed (width, height in pixels)",
        ),
        ExtensionMethod(
            "ui/notifications/host-context-changed",
            "host",
            "view",
            "notification",
            "part of the host context changed (theme, display mode, size...): merge it",
        ),
        ExtensionMethod(
            "ui/message",
            "view",
            "host",
            "request",
            "the view adds a message to the conversation (role and content)",
            "an empty result, or an error when the host refused",
        ),
        ExtensionMethod(
            "ui/open-link",
            "view",
            "host",
            "request",
            "the view asks the host to open a URL (the sandbox cannot)",
            "an empty result, or an error when the host refused",
        ),
        ExtensionMethod(
            "ui/update-model-context",
            "view",
            "host",
            "request",
            "the view replaces what it tells the model (content, structuredContent) from the next turn",
            "an empty result",
        ),
        ExtensionMethod(
            "ui/request-display-mode",
            "view",
            "host",
            "request",
            "the view asks for another display mode (inline, fullscreen, pip)",
            "the display mode the host set",
        ),
        ExtensionMethod(
            "ui/download-file",
            "view",
            "host",
            "request",
            "the view asks the host to download a file for the user (ext-apps 2.0.4)",
            "an empty result, or an error when the host refused",
        ),
        ExtensionMethod(
            "ui/notifications/sandbox-proxy-ready",
            "sandbox proxy",
            "host",
            "notification",
            "a web host's sandbox proxy iframe is ready to load the view",
        ),
        ExtensionMethod(
            "ui/notifications/sandbox-resource-ready",
            "host",
            "sandbox proxy",
            "notification",
            "the view's HTML, CSP and permissions for the sandbox proxy to load",
        ),
    ),
    on_the_wire=False,
)

EXTENSIONS: dict[str, ExtensionEntry] = {APPS.id: APPS}


def extension_method(method: str) -> tuple[ExtensionEntry, ExtensionMethod] | None:
    """The extension defining ``method`` and its entry, or None."""
    for extension in EXTENSIONS.values():
        found = extension.methods.get(method)
        if found is not None:
            return extension, found
    return None
