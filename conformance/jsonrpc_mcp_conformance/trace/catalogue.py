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

__all__ = ["CATALOGUE", "Method", "defined_in", "earlier", "revisions_of", "spec_url"]

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
