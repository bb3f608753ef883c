"""``jsonrpc-mcp explain``: what one JSON-RPC message is, revision by revision."""

from __future__ import annotations

import json
from typing import Any

from jsonrpc_mcp import wire
from jsonrpc_mcp.revisions import ALL_REVISIONS, REVISIONS

from .annotate import CLIENT, SERVER, Tracer, extension_fields
from .catalogue import CATALOGUE, SPEC_ROOT, earlier, extension_method, revisions_of, spec_url

__all__ = ["explain"]

# why 2026-07-28 dropped what it dropped (the stateless revision: no session to hang state on)
_GONE_IN_MODERN = {
    wire.INITIALIZE: "there is no handshake: every request carries its version, capabilities and "
    "client info in params._meta, and server/discover tells what the server supports",
    wire.INITIALIZED: "there is no handshake to complete",
    wire.PING: "it went with sessions, which 2026-07-28 removed (on HTTP the answer comes with 404)",
    wire.SET_LEVEL: "no session holds a level: each request names its own in "
    '_meta["io.modelcontextprotocol/logLevel"]',
    wire.RESOURCES_SUBSCRIBE: "subscriptions/listen with notifications.resourceSubscriptions replaces it",
    wire.RESOURCES_UNSUBSCRIBE: "closing the subscriptions/listen stream ends a subscription",
    wire.CREATE_MESSAGE: "the server cannot send requests: a tool asks with an InputRequiredResult "
    "whose inputRequests hold this request, and the client retries with inputResponses",
    wire.ELICIT: "the server cannot send requests: it is asked inside an InputRequiredResult",
    wire.ROOTS_LIST: "the server cannot send requests: it is asked inside an InputRequiredResult",
    wire.ELICITATION_COMPLETE: "URL elicitations have no ids to complete; the client answers when done",
    wire.ROOTS_LIST_CHANGED: "there is no session to notify",
}

_CODES = {
    -32700: "Parse error: the frame is not JSON",
    -32600: "Invalid Request: not a valid JSON-RPC request object",
    -32601: "Method not found (or a capability the server did not declare)",
    -32602: "Invalid params (2026-07-28 also: resource not found, a missing required _meta field)",
    -32603: "Internal error",
    wire.SESSION_NOT_FOUND: "Streamable HTTP: the session is unknown or has ended (with 404)",
    wire.RESOURCE_NOT_FOUND: "Resource not found (before 2026-07-28; that revision uses -32602)",
    wire.HEADER_MISMATCH: "2026-07-28 HTTP: the Mcp-* headers disagree with the body",
    wire.MISSING_CLIENT_CAPABILITY: "2026-07-28: the request needs a client capability it did not declare",
    wire.UNSUPPORTED_PROTOCOL_VERSION: (
        "2026-07-28: the envelope names a protocol version the server does not serve"
    ),
    wire.URL_ELICITATION_REQUIRED: "2025-11-25: the request needs a URL-mode elicitation first",
}


def explain(text: str, revision: str | None = None) -> str:
    """A learner's account of the message in ``text``: its kind and meaning, the revisions that
    define it, what answers it, how the revisions differ, and (with ``revision``) what it breaks."""
    try:
        message = json.loads(text)
    except ValueError as exc:
        return f"Not JSON ({exc}). A JSON-RPC peer answers it with -32700 Parse error and id null.\n"
    if revision is not None and revision not in REVISIONS:
        known = ", ".join(REVISIONS)
        return f"Unknown revision {revision!r}; the revisions are: {known}.\n"
    if isinstance(message, list):
        parts = [f"A JSON-RPC batch of {len(message)} messages."]
        batching = [r.version for r in ALL_REVISIONS if r.allows_batch]
        parts.append(
            f"Only {', '.join(batching) or 'no revision'} allowed batches; other revisions refuse them."
        )
        return "\n".join(parts) + "\n\n" + "\n".join(explain(json.dumps(item), revision) for item in message)
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return 'Not a JSON-RPC 2.0 message: one needs an object with "jsonrpc": "2.0".\n'
    if "method" in message:
        return _request(message, revision)
    return _answer(message, revision)


def _request(message: dict[str, Any], revision: str | None) -> str:
    method = message.get("method")
    if not isinstance(method, str):
        return "A message whose method is not a string: -32600 Invalid Request.\n"
    entry = CATALOGUE.get(method)
    is_request = "id" in message
    lines = [
        f"{'A request' if is_request else 'A notification'} {method}"
        + (f" (id {json.dumps(message['id'])})" if is_request else "")
    ]
    if entry is None and (found := extension_method(method)) is not None:
        return _extension_request(method, is_request, *found)
    if entry is None:
        lines.append("Not a method of any MCP revision this project knows (an extension's, or a typo).")
        lines.append(
            "A receiver answers a request for it with -32601 Method not found and ignores a notification."
        )
        return "\n".join(lines) + "\n"
    lines.append(f"Meaning: {entry.meaning}.")
    lines.append(f"Sent by: the {entry.sender}" if entry.sender != "either" else "Sent by: either side")
    defined = revisions_of(method)
    lines.append(f"Defined in: {', '.join(defined) or 'no revision'}")
    if entry.kind == "request":
        lines.append(f"The answer: {entry.answer}.")
        if not is_request:
            lines.append(
                "It is a request, but this message has no id: the receiver takes it for a "
                "notification and never answers."
            )
    else:
        lines.append("A notification: it has no id and nobody answers it.")
    missing = [r for r in ALL_REVISIONS if r.version not in defined]
    for missed in missing:
        version = missed.version
        if not missed.has_handshake and method in _GONE_IN_MODERN:
            reply = "-32601 Method not found" if entry.kind == "request" else "nothing (it is ignored)"
            lines.append(f"In {version}: {reply}. Why: {_GONE_IN_MODERN[method]}.")
            lines.append(f"  See {SPEC_ROOT}/{version}/changelog")
        elif defined and earlier(version, defined[0]):
            lines.append(f"In {version}: not yet defined (it came in {defined[0]}).")
    target = revision or (defined[-1] if defined else ALL_REVISIONS[-1].version)
    lines.append(f"Specification: {spec_url(method, target)}")
    # (with a revision the verdict below lists what the extension fields break, with the rest)
    lines += _extension_lines(method, message.get("params"), request=True, problems=revision is None)
    if revision is not None:
        sender = SERVER if entry.sender == SERVER else CLIENT
        tracer = Tracer()
        tracer.revision = revision
        tracer.initialize_answered = tracer.initialized = True  # judge the message, not the handshake order
        frame = tracer.feed(sender, json.dumps(message), 0.0)[0]
        lines += _verdict(frame.violations, revision)
    return "\n".join(lines) + "\n"


def _answer(message: dict[str, Any], revision: str | None) -> str:
    if "error" in message:
        error = message["error"]
        code = error.get("code") if isinstance(error, dict) else None
        lines = [f"An error answer (id {json.dumps(message.get('id'))})."]
        if isinstance(code, int) and not isinstance(code, bool):
            lines.append(f"Code {code}: {_CODES.get(code, _unlisted(code))}.")
        else:
            lines.append("Its error object has no integer code: invalid.")
    elif "result" in message:
        result = message["result"]
        lines = [f"A result answer (id {json.dumps(message.get('id'))})."]
        kind = result.get("resultType") if isinstance(result, dict) else None
        if kind == "input_required":
            keys = ", ".join(sorted(result.get("inputRequests") or {})) or "none"
            lines.append(
                "2026-07-28 multi round-trip: the server needs input first (inputRequests: "
                f"{keys}); the client answers them and retries the request with a new id, "
                "inputResponses under the same keys and requestState echoed exactly."
            )
        elif kind is not None:
            lines.append(f"resultType {kind!r} (2026-07-28: every result says what it is).")
        else:
            lines.append("No resultType: fine before 2026-07-28; a 2026-07-28 server MUST include it.")
    else:
        return "A JSON-RPC message with neither method, result nor error: invalid.\n"
    lines.append("Which request it answers is known only from the conversation: its id pairs it.")
    if "result" in message:
        lines += _extension_lines(_answered(message["result"]), message["result"], request=False)
    if revision is not None:
        tracer = Tracer()
        tracer.revision = revision
        frame = tracer.feed(SERVER, json.dumps(message), 0.0)[0]
        lines += _verdict([v for v in frame.violations if not v.startswith("answers no pending")], revision)
    return "\n".join(lines) + "\n"


def _extension_request(method: str, is_request: bool, extension: Any, defined: Any) -> str:
    lines = [
        f"{'A request' if is_request else 'A notification'} {method} of the extension {extension.id} "
        f"({extension.name}: {extension.summary}).",
        f"Meaning: {defined.meaning}.",
        f"Sent by: the {defined.sender}, to the {defined.receiver}.",
    ]
    if not extension.on_the_wire:
        lines.append(
            "It travels between the view and its host over postMessage, never on the MCP connection: an "
            "MCP server answers it with -32601 Method not found."
        )
    if defined.kind == "request":
        lines.append(f"The answer: {defined.answer}.")
        if not is_request:
            lines.append("It is a request, but this message has no id: nobody will answer it.")
    else:
        lines.append("A notification: it has no id and nobody answers it.")
    lines.append(f"Specification: {extension.spec}")
    return "\n".join(lines) + "\n"


def _answered(result: Any) -> str | None:
    """The method a result most likely answers, from its members (for the extensions' fields)."""
    if not isinstance(result, dict):
        return None
    for member, method in (
        ("tools", wire.TOOLS_LIST),
        ("resources", wire.RESOURCES_LIST),
        ("contents", wire.RESOURCES_READ),
        ("supportedVersions", wire.DISCOVER),
        ("protocolVersion", wire.INITIALIZE),
    ):
        if member in result:
            return method
    return None


def _extension_lines(method: str | None, body: Any, request: bool, problems: bool = True) -> list[str]:
    notes, broken = extension_fields(method, body, request)
    lines = [f"Extension: {note}." for note in notes]
    if broken and problems:
        lines += ["Its extension fields break:", *(f"  ! {p}" for p in broken)]
    return lines


def _unlisted(code: int) -> str:
    if -32099 <= code <= -32020:
        return "reserved for the specification (2026-07-28); undefined codes MUST NOT be sent"
    if -32019 <= code <= -32000:
        return "implementation-defined (legacy range; receivers assume no meaning)"
    if -32768 <= code <= -32000:
        return "reserved by JSON-RPC"
    return "an application-defined code"


def _verdict(violations: list[str], revision: str) -> list[str]:
    if not violations:
        return [f"Under {revision}: nothing wrong with it on its own."]
    return [f"Under {revision} it breaks:", *(f"  ! {v}" for v in violations)]
