"""Streamable HTTP for the stateless revisions (2026-07-28): the request metadata headers.

A modern POST mirrors parts of its body in headers so that intermediaries can route it without
reading the body: ``MCP-Protocol-Version`` (the envelope's protocol version), ``Mcp-Method``,
``Mcp-Name`` (``params.name`` of ``tools/call`` and ``prompts/get``, ``params.uri`` of
``resources/read``) and ``Mcp-Param-{Name}`` for each tool argument whose property schema carries
``"x-mcp-header": "{Name}"``. The body is the source of truth; a server that reads it must reject
a request whose headers are missing, differ from it, or are malformed (HTTP 400, JSON-RPC -32020).

Header names compare case-insensitively, values case-sensitively after decoding: a value that is
not plain visible ASCII travels as ``=?base64?<base64 of its UTF-8>?=``. Numbers compare as
numbers (``42`` matches ``42.0``), booleans as ``true``/``false``.

Decisions where the revision leaves room:

* a modern body (its ``_meta`` names a protocol version) without ``MCP-Protocol-Version`` is a
  mismatch (-32020), not 2025-03-26 traffic: the body says which revision it speaks, and read as
  2025-03-26 it could only have been refused for lacking a session;
* a routing header (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``) sent
  twice is a mismatch (readers taking the first or the last copy would disagree);
* an ``Mcp-Param-*`` header for an argument the body does not carry (or carries as null) is a
  mismatch too: it would route on a value the server never sees;
* notifications need no headers (the revision defines none for them); an ``Mcp-Method`` present
  must still match.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import wire
from ..jsonrpc.messages import Notification, Request
from ..revisions import Revision
from ..server._registry import Tool
from ..transports.http._mcp_headers import NAMED_BY, decode_value, header_matches, header_parameters, value_at

__all__ = [
    "HEADER_MISMATCH",
    "MCP_METHOD",
    "MCP_NAME",
    "PARAM_PREFIX",
    "NAMED_BY",
    "check_notification",
    "check_request",
    "decode_value",
    "header_parameters",
    "mcp_headers",
    "routing_agrees",
    "tool_parameters",
]

HEADER_MISMATCH = wire.HEADER_MISMATCH
VERSION = wire.VERSION_HEADER
MCP_METHOD = wire.METHOD_HEADER
MCP_NAME = wire.NAME_HEADER
PARAM_PREFIX = wire.PARAM_HEADER_PREFIX
_ROUTING = frozenset({VERSION, MCP_METHOD, MCP_NAME})
# the routing headers as ASGI servers spell them (lower case): no decoding for the common case
_KNOWN = {name.encode("latin-1"): name for name in _ROUTING}
# method -> the params key Mcp-Name mirrors


def mcp_headers(
    headers: Iterable[tuple[bytes, bytes]], index: dict[bytes, bytes] | None = None
) -> tuple[dict[str, bytes], str | None]:
    """The request's ``MCP-*`` headers (lower-cased name -> raw value), and the name of one that came
    more than once (readers taking the first or the last copy would disagree), if any.

    ``index`` is ``dict(headers)`` when the caller has it: then the common case (each ``MCP-*`` header
    once, spelled in lower case, only the routing ones) is decided without a loop over the headers."""
    if index is not None:
        known = _known_only(index, headers)
        if known is not None:
            return known, None
    found: dict[str, bytes] = {}
    repeated: str | None = None
    for raw_name, value in headers:
        if raw_name[:1] not in b"mM" or raw_name[:4].lower() != b"mcp-":  # (the first test is cheaper)
            continue
        name = raw_name.decode("latin-1").lower()
        if name in found and (name in _ROUTING or name.startswith(PARAM_PREFIX)):
            repeated = name
        found[name] = bytes(value)
    return found, repeated


# header names in order (one request's ``tuple(index)``) -> the (raw, lower-case) routing names to
# read, or None when the loop must decide; clients send few distinct sets of names (a flood is not kept)
_SHAPES: dict[tuple[bytes, ...], tuple[tuple[bytes, str], ...] | None] = {}


def _plan(
    index: dict[bytes, bytes], headers: Iterable[tuple[bytes, bytes]]
) -> tuple[tuple[bytes, str], ...] | None:
    """The routing headers to read (raw and lower-case name) when they are the only ``MCP-*``
    headers, each once and in lower case; None otherwise. Decided once per set of header names
    (see :func:`_shape`)."""
    if not isinstance(headers, (list, tuple)) or len(index) != len(headers):
        return None  # a name repeated exactly (or headers that cannot be counted)
    names = tuple(index)
    try:
        plan = _SHAPES[names]
    except KeyError:
        plan = _shape(index)
        if len(_SHAPES) < 256:
            _SHAPES[names] = plan
    except TypeError:  # names that are not bytes: the loop decides
        return None
    return plan


def _known_only(index: dict[bytes, bytes], headers: Iterable[tuple[bytes, bytes]]) -> dict[str, bytes] | None:
    """The ``MCP-*`` headers when every one of them is a routing header, once and in lower case;
    None otherwise."""
    plan = _plan(index, headers)
    if plan is None:
        return None
    found: dict[str, bytes] = {}
    for raw_name, name in plan:  # (a loop: cheaper than a comprehension for a few items)
        value = index[raw_name]
        found[name] = value if type(value) is bytes else bytes(value)
    return found


def _shape(index: dict[bytes, bytes]) -> tuple[tuple[bytes, str], ...] | None:
    """The routing headers among ``index``'s names when they are its only ``MCP-*`` names, each in
    lower case (the names are counted in one pass over their joined, lower-cased text)."""
    try:
        count = (b"\n" + b"\n".join(index).lower()).count(b"\nmcp-")
    except TypeError:
        return None
    plan = tuple((raw_name, name) for raw_name, name in _KNOWN.items() if raw_name in index)
    if len(plan) != count:  # an Mcp-Param-*, another MCP-* name, or one spelled in capitals
        return None
    return plan


# (header value, body value) pairs known to match as the same plain visible ASCII text (methods,
# versions, names: few distinct ones; long values and a flood are not kept)
_PLAIN: set[tuple[bytes, str]] = set()
# the raw (MCP-Protocol-Version, Mcp-Method, Mcp-Name) values of a request whose three pairs were all
# in _PLAIN -> the body's (version, method, name) they matched (see routing_agrees)
_AGREED: dict[tuple[bytes, bytes, bytes], tuple[str, str, str]] = {}
_RAW_VERSION, _RAW_METHOD, _RAW_NAME = (name.encode("latin-1") for name in (VERSION, MCP_METHOD, MCP_NAME))


def routing_agrees(
    headers: Iterable[tuple[bytes, bytes]],
    index: dict[bytes, bytes],
    request: Request,
    version: str,
    tool: Tool | None,
    revision: Revision,
) -> bool:
    """Whether a request's headers surely agree with its body, decided by one look-up (the common
    case): its only ``MCP-*`` headers are the three routing ones, once each and in lower case, with
    values seen before to match the same ``version``, method and name as plain text (which is what
    :func:`check_request` then found), and ``tool`` has no ``x-mcp-header`` parameters. False
    decides nothing: :func:`mcp_headers` and :func:`check_request` do."""
    if not (revision.has_protocol_version_header and revision.has_routing_headers):
        return False
    plan = _plan(index, headers)
    params = request.params
    key = NAMED_BY.get(request.method)
    if plan is None or len(plan) != 3 or key is None or type(params) is not dict:
        return False
    try:
        known = _AGREED.get((index[_RAW_VERSION], index[_RAW_METHOD], index[_RAW_NAME]))
    except TypeError:  # values that are not bytes
        return False
    if known is None or known != (version, request.method, params.get(key)):
        return False
    return tool is None or not tool_parameters(tool)


def _agreed(raw: tuple[bytes | None, bytes | None, bytes | None], text: tuple[str, str, str]) -> None:
    """Remember raw routing header values whose three pairs are in _PLAIN (see routing_agrees)."""
    v, m, n = raw
    if v is None or m is None or n is None or len(_AGREED) >= 512:
        return
    if (v, text[0]) in _PLAIN and (m, text[1]) in _PLAIN and (n, text[2]) in _PLAIN:
        _AGREED[(v, m, n)] = text


def _compare(header: str, raw: bytes | None, expected: str) -> str | None:
    """Why a required header does not match ``expected``, or None when it does."""
    if raw is None:
        return f"Header mismatch: the {header} header is missing"
    pair = (raw, expected)
    if pair in _PLAIN:
        return None
    if raw.isascii() and raw.decode("ascii") == expected and expected.isprintable() and expected[:2] != "=?":
        if len(_PLAIN) < 512 and len(expected) <= 256:
            _PLAIN.add(pair)
        return None  # the common case, decided at once: plain visible ASCII, the same text
    value = decode_value(raw)
    if value is None:
        return f"Header mismatch: the {header} header value is malformed"
    if value != expected:
        return f"Header mismatch: {header} header value {value!r} does not match body value {expected!r}"
    return None


def check_request(
    request: Request, version: str, headers: dict[str, bytes], tool: Tool | None, revision: Revision
) -> str | None:
    """Why a modern request's headers do not agree with its body (-32020), or None when they do.

    ``version`` is the envelope's protocol version; ``tool`` the called tool (``tools/call`` of a
    registered tool), for its ``x-mcp-header`` parameters; ``revision`` says which headers its
    requests carry (``has_protocol_version_header``, ``has_routing_headers``).
    """
    # a pair of values already seen to match as plain text is decided by one look-up (no call)
    method = request.method
    if revision.has_protocol_version_header:
        raw = headers.get(VERSION)
        if raw is None or (raw, version) not in _PLAIN:
            problem = _compare("MCP-Protocol-Version", raw, version)
            if problem is not None:
                return problem
    if not revision.has_routing_headers:
        return None
    raw = headers.get(MCP_METHOD)
    if raw is None or (raw, method) not in _PLAIN:
        problem = _compare("Mcp-Method", raw, method)
        if problem is not None:
            return problem
    params = request.params if type(request.params) is dict else {}
    key = NAMED_BY.get(method)
    if key is not None:
        named = params.get(key)
        if type(named) is str:  # otherwise the request is invalid, which its handler says (-32602)
            raw = headers.get(MCP_NAME)
            if raw is None or (raw, named) not in _PLAIN:
                problem = _compare("Mcp-Name", raw, named)
                if problem is not None:
                    return problem
            if revision.has_protocol_version_header:  # all three agree: next time, one look-up
                _agreed((headers.get(VERSION), headers.get(MCP_METHOD), raw), (version, method, named))
    if tool is not None:
        parameters = tool_parameters(tool)
        arguments = params.get("arguments")
        if parameters:  # (most tools have no x-mcp-header parameter: nothing to check)
            return _check_parameters(parameters, arguments if type(arguments) is dict else {}, headers)
    return None


def check_notification(
    notification: Notification, headers: dict[str, bytes], revision: Revision
) -> str | None:
    """A notification's headers: only those present are checked (the revision requires none), and
    only in a revision with routing headers."""
    raw = headers.get(MCP_METHOD)
    if raw is not None and revision.has_routing_headers:
        return _compare("Mcp-Method", raw, notification.method)
    return None


# -- x-mcp-header parameters (the rule itself is shared with the client: _mcp_headers) --------------
def tool_parameters(tool: Tool) -> list[tuple[tuple[str, ...], str]]:
    """:func:`header_parameters` of a tool's input schema (worked out once per registered tool and
    schema, kept on the tool)."""
    schema = tool.input_schema
    cached = tool.header_parameters
    if cached is None or cached[0] is not schema:
        cached = tool.header_parameters = (schema, header_parameters(schema))
    return cached[1]


def _check_parameters(
    parameters: list[tuple[tuple[str, ...], str]], arguments: dict[str, Any], headers: dict[str, bytes]
) -> str | None:
    for path, name in parameters:
        header = f"Mcp-Param-{name}"
        raw = headers.get(PARAM_PREFIX + name.lower())
        value = value_at(arguments, path)
        argument = ".".join(path)
        if value is None:
            if raw is not None:
                return f"Header mismatch: {header} is present but argument {argument!r} is not"
            continue
        if raw is None:
            return f"Header mismatch: the {header} header is missing (argument {argument!r} is present)"
        text = decode_value(raw)
        if text is None:
            return f"Header mismatch: the {header} header value is malformed"
        if not header_matches(value, text):
            return f"Header mismatch: {header} header value {text!r} does not match argument {argument!r}"
    return None
